//! `raise_qdq`: a linear layer between quantizers with real scales,
//! `DequantizeLinear(x) → linear → [Relu] → QuantizeLinear`, becomes one `qlinear` on the codes
//! (see [`Op::Qlinear`]): the form a QDQ export (onnxruntime's `quantize_static`) gives every
//! quantized `Gemm` / `MatMul`. The interpreter computes the `qlinear` as the same steps in the
//! same float32 operations, so the raised graph's outputs equal the original's bit for bit;
//! quantized execution and the hardware compute it in integers ([`crate::quant::requant`]).
//!
//! Matched only when both quantizers are per tensor (one scale and one zero point: a per-axis
//! activation quantizer has no single output grid), the dequantizer reads computed codes (not a
//! constant), and the linear and relu have no other user. The weight keeps its codes and
//! per-channel grid in [`MaseGraph::qweights`] (from the import's folding). A dequantizer with
//! other users stays for them.

use super::raise_common::{raise_all, replace, single_user, stem, users_map};
use crate::error::Result;
use crate::graph::{MaseGraph, NodeId};
use crate::op::Op;
use crate::pass::{PassArgs, PassInfo};

/// The one scale and zero point of a per-tensor quantizer's parameters.
fn per_tensor(g: &MaseGraph, scale: &str, zero_point: Option<&String>) -> Option<(f32, i64)> {
    let s = g.weights.get(scale)?.to_f32();
    let z = match zero_point {
        Some(k) => g.weights.get(k)?.to_i64().iter().copied().collect(),
        None => vec![0],
    };
    (s.len() == 1 && z.len() == 1).then(|| (s.iter().copied().next().unwrap_or(0.0), z[0]))
}

/// The first `QuantizeLinear` ending the pattern, and the `qlinear` and its input replacing it.
fn find(g: &MaseGraph) -> Option<(NodeId, String, Op, NodeId)> {
    let users = users_map(g);
    for (q, qn) in g.nodes() {
        let Op::QuantizeLinear { scale, zero_point, to, .. } = &qn.op else { continue };
        let Some((y_scale, y_zero_point)) = per_tensor(g, scale, zero_point.as_ref()) else { continue };
        let [v] = qn.inputs.as_slice() else { continue };
        let (lin, relu) = match &g.node(*v).op {
            Op::Relu => (g.node(*v).inputs[0], true),
            _ => (*v, false),
        };
        if relu && single_user(g, &users, *v) != Some(q) {
            continue;
        }
        let ln = g.node(lin);
        let Op::Linear { weight, bias } = &ln.op else { continue };
        if single_user(g, &users, lin) != Some(if relu { *v } else { q }) {
            continue;
        }
        let [d] = ln.inputs.as_slice() else { continue };
        let Op::DequantizeLinear { codes, scale, zero_point, .. } = &g.node(*d).op else { continue };
        let Some((x_scale, x_zero_point)) = per_tensor(g, scale, zero_point.as_ref()) else { continue };
        let x = *g.node(*d).inputs.first()?;
        if matches!(g.node(x).op, Op::Constant { .. }) {
            continue;
        }
        let op = Op::Qlinear {
            weight: weight.clone(),
            bias: bias.clone(),
            x_type: *codes,
            x_scale,
            x_zero_point,
            y_scale,
            y_zero_point,
            y_type: *to,
            relu,
        };
        let name = format!("{}_qlinear", stem(&ln.name, &["linear"]));
        return Some((q, name, op, x));
    }
    None
}

/// The pass (`raise_qdq` in [`super::REGISTRY`]; run at import after `raise_linear`).
pub fn run(g: MaseGraph, _args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    raise_all(g, |g| {
        let Some((q, name, op, x)) = find(g) else { return Ok(false) };
        replace(g, q, &name, op, vec![x])?;
        Ok(true)
    })
}
