//! `raise_mul_scalar`: `Mul` by a single-element constant (either operand) and `Div` of an
//! activation by a non-zero single-element constant become `mul` by a scalar (`MulScalar`);
//! a division by `c` becomes a multiplication by `1/c` (exact when `c` is a power of two, as
//! the attention scale √64 = 8 is; otherwise within one rounding of the quotient).
//!
//! Not raised: a constant with more than one element, a constant whose rank is larger than the
//! activation's (broadcasting would change the shape), a division of a constant by an
//! activation, a division by zero. Runs after `raise_gelu` and `raise_layer_norm`, which match
//! the plain Mul/Div nodes.

use super::raise_common::{raise_all, replace, stem, with_scalar};
use crate::error::Result;
use crate::graph::{MaseGraph, NodeId};
use crate::op::Op;
use crate::pass::{PassArgs, PassInfo};

fn find(g: &MaseGraph) -> Option<(NodeId, NodeId, f32)> {
    g.ids().find_map(|id| {
        if let Some((x, c)) = with_scalar(g, id, |o| matches!(o, Op::Mul), true) {
            return Some((id, x, c));
        }
        let (x, c) = with_scalar(g, id, |o| matches!(o, Op::Div), false)?;
        let inv = 1.0 / c;
        (c != 0.0 && inv.is_finite()).then_some((id, x, inv))
    })
}

/// The pass (`raise_mul_scalar` in [`super::REGISTRY`]): raises Mul/Div by a scalar constant to
/// `mul` by a scalar.
pub fn run(g: MaseGraph, _args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    raise_all(g, |g| {
        let Some((id, x, scalar)) = find(g) else { return Ok(false) };
        let base = stem(&g.node(id).name, &["mul", "div"]).to_string();
        replace(g, id, &format!("{base}_mul_scalar"), Op::MulScalar { scalar }, vec![x])?;
        Ok(true)
    })
}
