//! `add`: element-wise sum of two streams with format alignment (`rtl/mase_add.sv`), the join
//! of a residual connection. Each input has its own signed format; the exact sum
//! ([`mase_ir::fixed::add`], aligned to the finer fractional bit count) is cast once to the
//! output format with the output's rounding and overflow modes ([`mase_ir::fixed::cast_code`]).
//! Parameters, checks, streams and model are those of every [`super::binary`] component.

use super::binary::{self, Binary, Exact};
use crate::component::Info;

/// The add (join) component.
pub struct Add;

impl Binary for Add {
    const INFO: Info = binary::info(
        "add",
        "element-wise sum of two streams, each in its own format, exact then cast to the output format",
    );
    const EXACT: Exact = mase_ir::fixed::add;
}
