//! Reductions: `ReduceMean` (axes an attribute before opset 18, an input from 18) and
//! `ReduceSum` (axes an input from opset 13), with `keepdims` and `noop_with_empty_axes`.

use super::{OnnxNode, OnnxOp};
use crate::error::Result;
use crate::onnx::{Importer, Val};
use crate::op::Op;

/// The family's op types.
pub(super) const OPS: &[OnnxOp] = &[
    OnnxOp { name: "ReduceMean", max_inputs: 2, convert: |i, n| reduce(i, n, 18, false) },
    OnnxOp { name: "ReduceSum", max_inputs: 2, convert: |i, n| reduce(i, n, 13, true) },
];

/// A reduction whose axes moved from an attribute to input 1 at opset `axes_input_from`.
fn reduce(imp: &mut Importer, n: &OnnxNode, axes_input_from: i64, sum: bool) -> Result<Vec<Val>> {
    let keepdims = n.at.int("keepdims")?.unwrap_or(1) != 0;
    let (axes, noop) = if imp.opset < axes_input_from {
        n.at.check(&["axes", "keepdims"])?;
        if n.ins.len() > 1 {
            return Err(n.ctx.err(format!("takes its axes as an attribute before opset {axes_input_from}")));
        }
        (n.at.ints("axes")?.unwrap_or_default(), false)
    } else {
        n.at.check(&["keepdims", "noop_with_empty_axes"])?;
        (n.opt_ints(1, "axes")?.unwrap_or_default(), n.at.int("noop_with_empty_axes")?.unwrap_or(0) != 0)
    };
    let x = n.first()?;
    if noop && axes.is_empty() {
        return Ok(vec![imp.emit(n.ctx, n.base, Op::Identity, &[x])?]);
    }
    let op = if sum { Op::ReduceSum { axes, keepdims } } else { Op::ReduceMean { axes, keepdims } };
    Ok(vec![imp.emit(n.ctx, n.base, op, &[x])?])
}
