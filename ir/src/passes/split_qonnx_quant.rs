//! `split_qonnx_quant`: a QONNX `Quant` of an activation that computes exactly what the ONNX
//! pair `QuantizeLinear → DequantizeLinear` computes becomes that pair, so `raise_qdq` can raise
//! the linear layers between such quantizers onto integer codes (Brevitas exports with float
//! scales, like onnxruntime's QDQ ones).
//!
//! Exactly the same float32 steps when the quantizer has one scale that is not a power of two
//! (power-of-two ones are fixed-point formats, `raise_qonnx`), zero point 0, rounding `ROUND`
//! (half to even, as `QuantizeLinear`), and 8 bits without `narrow` (the int8 / uint8 range):
//! `round(clamp(x / s + 0))` equals `saturate(round(x / s))` because the bounds are integers, and
//! `(q − 0) · s` is `DequantizeLinear`. Other quantizers stay as they are.

use super::raise_common::{raise_all, replace};
use crate::error::Result;
use crate::graph::{MaseGraph, NodeId};
use crate::op::{Op, QuantIntType, RoundingMode};
use crate::pass::{PassArgs, PassInfo};
use crate::tensor::Tensor;

/// The first activation `Quant` that is a QDQ pair, with its scale key and code type.
fn find(g: &MaseGraph) -> Option<(NodeId, String, QuantIntType)> {
    for (id, n) in g.nodes() {
        let Op::Quant { scale, zero_point, bit_width, signed, narrow, rounding } = &n.op else { continue };
        if *narrow || *rounding != RoundingMode::Round {
            continue;
        }
        let (Some(s), Some(z), Some(b)) =
            (g.weights.get(scale), g.weights.get(zero_point), g.weights.get(bit_width))
        else {
            continue;
        };
        let (s, z, b) = (s.to_f32(), z.to_f32(), b.to_f32());
        let one_scale = s.len() == 1 && crate::quant::qonnx::po2_frac(s.iter().copied().next()?).is_none();
        if !one_scale || z.iter().any(|&v| v != 0.0) || b.len() != 1 || b.iter().next() != Some(&8.0) {
            continue;
        }
        let ty = if *signed { QuantIntType::Int8 } else { QuantIntType::Uint8 };
        return Some((id, scale.clone(), ty));
    }
    None
}

/// The pass (`split_qonnx_quant` in [`super::REGISTRY`]; run at import before `raise_qdq`).
pub fn run(g: MaseGraph, _args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    raise_all(g, |g| {
        let Some((id, scale, to)) = find(g) else { return Ok(false) };
        let name = g.node(id).name.clone();
        let x = g.node(id).inputs[0];
        // Each of the pair owns its scale and (zero) zero point, as the importer's QDQ ops do.
        let s = g.weights[&scale].clone();
        let mut own = |node: &str| {
            let (sk, zk) = (format!("{name}_{node}.scale"), format!("{name}_{node}.zero_point"));
            g.weights.insert(sk.clone(), s.clone());
            g.weights.insert(zk.clone(), Tensor::zeros(crate::tensor::DType::I64, s.shape()));
            (sk, zk)
        };
        let ((sk, zk), (dsk, dzk)) = (own("q"), own("dq"));
        let q_op = Op::QuantizeLinear { scale: sk, zero_point: Some(zk), axis: 1, to };
        let q = g.add_node(g.fresh_name(&format!("{name}_q")), q_op, vec![x])?;
        let mut codes = g.node(id).meta.common.results.get("data_out_0").cloned().unwrap_or_default();
        codes.ty = crate::metadata::ValueType::Integer;
        codes.precision = vec![64];
        g.node_mut(q).meta.common.results.insert("data_out_0".into(), codes);
        g.node_mut(q).origin = g.node(id).origin.clone();
        let dq_op = Op::DequantizeLinear { codes: to, scale: dsk, zero_point: Some(dzk), axis: 1 };
        replace(g, id, &format!("{name}_dq"), dq_op, vec![q])?;
        Ok(true)
    })
}
