//! Element-wise arithmetic: `Add`, `Sub`, `Mul`, `Div`, `Pow` (numpy broadcasting), the unary
//! `Relu`, `Erf`, `Tanh`, `Sqrt`, `Identity`, and the variadic `Max` / `Min`.

use super::{OnnxNode, OnnxOp};
use crate::error::Result;
use crate::onnx::{Importer, Val};
use crate::op::Op;

/// The family's op types.
pub(super) const OPS: &[OnnxOp] = &[
    OnnxOp { name: "Add", max_inputs: 2, convert: |i, n| fixed(i, n, Op::Add, 2) },
    OnnxOp { name: "Sub", max_inputs: 2, convert: |i, n| fixed(i, n, Op::Sub, 2) },
    OnnxOp { name: "Mul", max_inputs: 2, convert: |i, n| fixed(i, n, Op::Mul, 2) },
    OnnxOp { name: "Div", max_inputs: 2, convert: |i, n| fixed(i, n, Op::Div, 2) },
    OnnxOp { name: "Pow", max_inputs: 2, convert: |i, n| fixed(i, n, Op::Pow, 2) },
    OnnxOp { name: "Relu", max_inputs: 1, convert: |i, n| fixed(i, n, Op::Relu, 1) },
    OnnxOp { name: "Erf", max_inputs: 1, convert: |i, n| fixed(i, n, Op::Erf, 1) },
    OnnxOp { name: "Tanh", max_inputs: 1, convert: |i, n| fixed(i, n, Op::Tanh, 1) },
    OnnxOp { name: "Sqrt", max_inputs: 1, convert: |i, n| fixed(i, n, Op::Sqrt, 1) },
    OnnxOp { name: "Identity", max_inputs: 1, convert: |i, n| fixed(i, n, Op::Identity, 1) },
    OnnxOp { name: "Max", max_inputs: usize::MAX, convert: |i, n| variadic(i, n, Op::Max) },
    OnnxOp { name: "Min", max_inputs: usize::MAX, convert: |i, n| variadic(i, n, Op::Min) },
];

/// An op without attributes taking exactly `arity` inputs.
pub(super) fn fixed(imp: &mut Importer, n: &OnnxNode, op: Op, arity: usize) -> Result<Vec<Val>> {
    n.at.check(&[])?;
    let v = n.inputs(arity)?;
    Ok(vec![imp.emit(n.ctx, n.base, op, &v)?])
}

/// An op without attributes taking one or more inputs.
fn variadic(imp: &mut Importer, n: &OnnxNode, op: Op) -> Result<Vec<Val>> {
    n.at.check(&[])?;
    if n.ins.is_empty() || n.ins.iter().any(Option::is_none) {
        return Err(n.ctx.err("needs at least one input and no empty input names"));
    }
    let v: Vec<Val> = n.ins.iter().flatten().cloned().collect();
    Ok(vec![imp.emit(n.ctx, n.base, op, &v)?])
}
