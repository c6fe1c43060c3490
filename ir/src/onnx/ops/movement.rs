//! Data movement: `Reshape`, `Transpose`, `Flatten`, `Unsqueeze`, `Squeeze`, `Concat`, `Slice`
//! and `Expand`. Shapes, axes and slice bounds given as inputs must be constants or fold to
//! constants (they become typed attributes of the MASE op).

use super::{OnnxNode, OnnxOp};
use crate::error::Result;
use crate::onnx::{Importer, Val};
use crate::op::Op;

/// The family's op types.
pub(super) const OPS: &[OnnxOp] = &[
    OnnxOp { name: "Reshape", max_inputs: 2, convert: reshape },
    OnnxOp { name: "Transpose", max_inputs: 1, convert: transpose },
    OnnxOp { name: "Flatten", max_inputs: 1, convert: flatten },
    OnnxOp { name: "Unsqueeze", max_inputs: 2, convert: |i, n| squeeze(i, n, true) },
    OnnxOp { name: "Squeeze", max_inputs: 2, convert: |i, n| squeeze(i, n, false) },
    OnnxOp { name: "Concat", max_inputs: usize::MAX, convert: concat },
    OnnxOp { name: "Slice", max_inputs: 5, convert: slice },
    OnnxOp { name: "Expand", max_inputs: 2, convert: expand },
];

/// Reshape; with `allowzero = 1` a 0 would mean an empty dimension, which is refused (a target
/// without zeros means the same under both settings).
fn reshape(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&["allowzero"])?;
    let v = n.inputs(2)?;
    let shape = super::const_ints(n.ctx, &v[1], "shape")?;
    if n.at.int("allowzero")?.unwrap_or(0) != 0 && shape.contains(&0) {
        return Err(n.ctx.err(
            "allowzero = 1 with a 0 in the target shape makes an empty tensor; empty tensors are not supported",
        ));
    }
    Ok(vec![imp.emit(n.ctx, n.base, Op::Reshape { shape }, &v[..1])?])
}

fn transpose(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&["perm"])?;
    let x = n.first()?;
    let rank = x.shape().len();
    let perm = match n.at.ints("perm")? {
        Some(p) => p
            .iter()
            .map(|&a| {
                usize::try_from(a)
                    .map_err(|_| n.ctx.err(format!("attribute 'perm' has a negative entry {a}")))
            })
            .collect::<Result<Vec<_>>>()?,
        None => (0..rank).rev().collect(),
    };
    Ok(vec![imp.emit(n.ctx, n.base, Op::Transpose { perm }, &[x])?])
}

fn flatten(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&["axis"])?;
    let x = n.first()?;
    Ok(vec![imp.emit(n.ctx, n.base, Op::Flatten { axis: n.at.int("axis")?.unwrap_or(1) }, &[x])?])
}

/// Unsqueeze (`unsqueeze`) or Squeeze; axes are input 1 from opset 13.
fn squeeze(imp: &mut Importer, n: &OnnxNode, unsqueeze: bool) -> Result<Vec<Val>> {
    n.at.check(&[])?;
    let x = n.first()?;
    let axes = match n.opt_ints(1, "axes")? {
        Some(a) => a,
        None if unsqueeze => return Err(n.ctx.err("the axes input (input 1) is required")),
        None => vec![],
    };
    let op = if unsqueeze { Op::Unsqueeze { axes } } else { Op::Squeeze { axes } };
    Ok(vec![imp.emit(n.ctx, n.base, op, &[x])?])
}

fn concat(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&["axis"])?;
    let axis = n.at.int("axis")?.ok_or_else(|| n.ctx.err("attribute 'axis' is required"))?;
    if n.ins.is_empty() || n.ins.iter().any(Option::is_none) {
        return Err(n.ctx.err("Concat needs at least one input and no empty input names"));
    }
    let v: Vec<Val> = n.ins.iter().flatten().cloned().collect();
    Ok(vec![imp.emit(n.ctx, n.base, Op::Concat { axis }, &v)?])
}

fn slice(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&[])?;
    let x = n.first()?;
    let starts =
        n.opt_ints(1, "starts")?.ok_or_else(|| n.ctx.err("the starts input (input 1) is required"))?;
    let ends = n.opt_ints(2, "ends")?.ok_or_else(|| n.ctx.err("the ends input (input 2) is required"))?;
    let axes = n.opt_ints(3, "axes")?.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = n.opt_ints(4, "steps")?.unwrap_or_else(|| vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(n.ctx.err(format!(
            "starts, ends, axes and steps must have the same length, got {}, {}, {}, {}",
            starts.len(),
            ends.len(),
            axes.len(),
            steps.len()
        )));
    }
    if steps.contains(&0) {
        return Err(n.ctx.err("a step of 0 is not allowed"));
    }
    Ok(vec![imp.emit(n.ctx, n.base, Op::Slice { starts, ends, axes, steps }, &[x])?])
}

fn expand(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&[])?;
    let v = n.inputs(2)?;
    let shape = super::const_ints(n.ctx, &v[1], "shape")?;
    Ok(vec![imp.emit(n.ctx, n.base, Op::Expand { shape }, &v[..1])?])
}
