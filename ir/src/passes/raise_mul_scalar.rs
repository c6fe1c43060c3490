//! `raise_mul_scalar`: `Mul` by a single-element constant (either operand) and `Div` of an
//! activation by a non-zero single-element constant become `mul` by a scalar (`MulScalar`);
//! a division by `c` becomes a multiplication by `1/c` (exact when `c` is a power of two, as
//! the attention scale √64 = 8 is; otherwise within one rounding of the quotient).
//!
//! Not raised: a constant with more than one element, a constant whose rank is larger than the
//! activation's (broadcasting would change the shape), a division of a constant by an
//! activation, a division by zero. Runs after `raise_gelu` and `raise_layer_norm`, which match
//! the plain Mul/Div nodes.

use super::raise_common::{replace, stem, with_scalar};
use crate::error::Result;
use crate::graph::{MaseGraph, NodeId};
use crate::op::Op;
use crate::pass::{Pass, PassArgs, PassInfo};

/// Raises Mul/Div by a scalar constant to `mul` by a scalar.
pub struct RaiseMulScalarPass;

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

impl Pass for RaiseMulScalarPass {
    fn name(&self) -> &'static str {
        "raise_mul_scalar"
    }
    fn description(&self) -> &'static str {
        "Mul by / Div by a single-element constant -> mul by a scalar"
    }
    fn run(&self, mut g: MaseGraph, _args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
        let mut count = 0usize;
        while let Some((id, x, scalar)) = find(&g) {
            let base = stem(&g.node(id).name, &["mul", "div"]).to_string();
            replace(&mut g, id, &format!("{base}_mul_scalar"), Op::MulScalar { scalar }, vec![x])?;
            g.compact()?;
            count += 1;
        }
        let mut info = PassInfo::new();
        info.insert("raised".into(), count.into());
        Ok((g, info))
    }
}
