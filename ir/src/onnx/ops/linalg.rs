//! Matrix products: `MatMul` (numpy semantics) and `Gemm`, which becomes (Transpose) → MatMul →
//! Add with alpha and beta multiplied into B and C (folded when they are constants), the form
//! `raise_linear` turns into `linear`.

use super::math::fixed;
use super::{f32_scalar, OnnxNode, OnnxOp};
use crate::error::Result;
use crate::onnx::{Importer, Val};
use crate::op::Op;

/// The family's op types.
pub(super) const OPS: &[OnnxOp] = &[
    OnnxOp { name: "MatMul", max_inputs: 2, convert: |i, n| fixed(i, n, Op::Matmul, 2) },
    OnnxOp { name: "Gemm", max_inputs: 3, convert: gemm },
];

/// Gemm: Y = alpha · A' · B' + beta · C.
fn gemm(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    let (ctx, base, at) = (n.ctx, n.base, n.at);
    at.check(&["alpha", "beta", "transA", "transB"])?;
    let (Some(mut a), Some(mut b)) = (n.opt(0), n.opt(1)) else {
        return Err(ctx.err("inputs A and B are required"));
    };
    for (what, x) in [("A", &a), ("B", &b)] {
        if x.shape().len() != 2 {
            return Err(ctx.err(format!("input {what} must be 2-D, it has shape {:?}", x.shape())));
        }
    }
    let alpha = at.float("alpha")?.unwrap_or(1.0);
    let beta = at.float("beta")?.unwrap_or(1.0);
    if at.int("transA")?.unwrap_or(0) != 0 {
        a = imp.emit(ctx, &format!("{base}_transpose_a"), Op::Transpose { perm: vec![1, 0] }, &[a])?;
    }
    if at.int("transB")?.unwrap_or(0) != 0 {
        b = imp.emit(ctx, &format!("{base}_transpose_b"), Op::Transpose { perm: vec![1, 0] }, &[b])?;
    }
    if alpha != 1.0 {
        let s = imp.constant(f32_scalar(alpha), format!("{base}_alpha"));
        b = imp.emit(ctx, &format!("{base}_alpha"), Op::Mul, &[b, s])?;
    }
    let mut y = imp.emit(ctx, &format!("{base}_matmul"), Op::Matmul, &[a, b])?;
    if let Some(mut c) = n.opt(2) {
        if beta != 1.0 {
            let s = imp.constant(f32_scalar(beta), format!("{base}_beta"));
            c = imp.emit(ctx, &format!("{base}_beta"), Op::Mul, &[c, s])?;
        }
        y = imp.emit(ctx, &format!("{base}_add"), Op::Add, &[y, c])?;
    }
    Ok(vec![y])
}
