//! `sub`: element-wise difference `data_in_0 - data_in_1` of two streams with format alignment
//! (`rtl/mase_sub.sv`), bound to the `sub` op. It takes the same parameters as [`super::add`];
//! the exact difference ([`mase_ir::fixed::sub`], aligned to the finer fractional bit count) is
//! cast once to the output format with the output's rounding and overflow modes. Parameters,
//! checks, streams and model are those of every [`super::binary`] component.

use super::binary::{self, Binary, Exact};
use crate::component::Info;

/// The sub component.
pub struct Sub;

impl Binary for Sub {
    const INFO: Info = binary::info(
        "sub",
        "element-wise difference data_in_0 - data_in_1 of two streams, each in its own format, exact then cast to the output format",
    );
    const EXACT: Exact = mase_ir::fixed::sub;
}
