//! `raise_qonnx`: a model quantized by its own QONNX quantizers gets its fixed-point formats
//! from them, with no calibration and no configuration (see [`crate::quant::qonnx`] for the
//! mapping of a power-of-two `Quant` to a format).
//!
//! - Weight quantizers were folded at import into the weights' constants, which kept their codes
//!   and formats in [`MaseGraph::qweights`]; `raise_linear` carries them to the linear weights.
//! - Each activation `Quant` is removed and its format becomes the result format of the node it
//!   quantizes (that node must have no other user), so the cast happens at the producer's
//!   output, as the hardware casts.
//! - Nodes between quantizers keep their exact results: a `linear` gets the full-precision
//!   format of its sum (fraction `f_x + f_w`, or the bias's when finer; width from the largest
//!   possible sum), `relu` and the element-moving ops the format of their input. A float bias
//!   is stored exactly (the finest fraction its float32 values need).
//! - Every node's `data_in_k` takes its producer's result format.
//!
//! Refused, naming the node: a `Quant` that is not a fixed-point format (float or per-channel
//! scale, nonzero zero point: they need the requantisation path, not built yet; CEIL / UP
//! rounding; unsigned narrow; bipolar), `BipolarQuant`, `Trunc`, `QuantizeLinear` /
//! `DequantizeLinear`, a graph input without a quantizer, a linear whose weight has no
//! power-of-two quantizer, and any other op left between quantizers without a format.

use crate::error::Result;
use crate::fixed::{decompose_f64, FixedFormat, Overflow, Rounding};
use crate::graph::{MaseGraph, NodeId};
use crate::metadata::TensorMeta;
use crate::op::Op;
use crate::pass::{no_args, PassArgs, PassInfo};
use crate::quant::{format_of, qonnx::quant_format, set_format};
use crate::tensor::QuantTensor;

/// Bits of a signed two's complement number holding every integer of magnitude ≤ `m`.
fn signed_bits(m: u128) -> u32 {
    129 - m.leading_zeros().min(128) + u32::from(m == 0)
}

/// The bias stored exactly: the finest fraction its float32 values need, signed, RND_CONV + SAT.
fn exact_bias(b: &ndarray::ArrayD<f32>) -> std::result::Result<QuantTensor, String> {
    let mut frac = 0i32;
    for &v in b {
        if !v.is_finite() {
            return Err(format!("its bias has the non-finite value {v}"));
        }
        if v != 0.0 {
            let (c, f) = decompose_f64(f64::from(v)).expect("finite");
            frac = frac.max(f - c.trailing_zeros() as i32);
        }
    }
    let wide =
        FixedFormat { signed: true, width: 64, frac, rounding: Rounding::RndConv, overflow: Overflow::Sat };
    let codes = crate::quant::quantize_f32(b, &wide).codes;
    let m = codes.iter().map(|c| c.unsigned_abs() as u128).max().unwrap_or(0);
    let width = signed_bits(m);
    if width > 63 {
        return Err(format!("its float bias needs {width} bits to be held exactly (at most 63)"));
    }
    Ok(QuantTensor::per_tensor(FixedFormat { width, ..wide }, codes))
}

/// The full-precision result format of a linear node on input format `fx`.
fn linear_format(
    fx: &FixedFormat,
    w: &QuantTensor,
    b: Option<&QuantTensor>,
) -> std::result::Result<FixedFormat, String> {
    let fp = fx.frac + w.format.frac;
    let frac = b.map_or(fp, |b| b.format.frac.max(fp));
    let xmax: u128 = if fx.signed { 1u128 << (fx.width - 1) } else { (1u128 << fx.width) - 1 };
    let mut m: u128 = 0;
    for (o, row) in w.codes.outer_iter().enumerate() {
        let s: u128 = row.iter().map(|c| c.unsigned_abs() as u128).sum();
        let mut acc = (xmax * s) << (frac - fp);
        if let Some(b) = b {
            let bc = b.codes.get(o).copied().unwrap_or(0).unsigned_abs() as u128;
            acc += bc << (frac - b.format.frac);
        }
        m = m.max(acc);
    }
    let width = signed_bits(m);
    if width > 64 {
        return Err(format!("its exact sum needs {width} bits (at most 64)"));
    }
    Ok(FixedFormat { signed: true, width, frac, rounding: Rounding::Trn, overflow: Overflow::Sat })
}

/// The pass (`raise_qonnx` in [`super::REGISTRY`]); see the module documentation. Info:
/// `activation_quantizers` (removed), `weights` (linear weights with formats).
pub fn run(mut g: MaseGraph, args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    no_args("raise_qonnx", args)?;
    // 1. Activation quantizers become their producers' result formats.
    let quants: Vec<NodeId> = g.ids().collect();
    let mut removed = 0usize;
    for id in quants {
        let node = g.node(id);
        match &node.op {
            Op::Quant { .. } => {}
            Op::BipolarQuant { .. } | Op::Trunc { .. } | Op::QuantizeLinear { .. } | Op::DequantizeLinear { .. } => {
                return Err(node.error(
                    "raise_qonnx maps only QONNX Quant with a power-of-two scale and zero point 0 to fixed-point \
                     formats; this quantizer needs the requantisation path (not built yet)",
                ))
            }
            _ => continue,
        }
        let fmt = quant_format(&node.op, &g.weights)
            .map_err(|m| node.error(format!("cannot be raised to a fixed-point format: {m}")))?;
        let [p] = node.inputs.as_slice() else { return Err(node.error("expects one input")) };
        let p = *p;
        if g.users(p).len() != 1 {
            return Err(node.error(format!(
                "its input '{}' has other users, so the quantizer cannot become that value's format",
                g.node(p).name
            )));
        }
        let pn = g.node_mut(p);
        let tm = pn.meta.common.results.entry("data_out_0".into()).or_default();
        set_format(tm, &fmt);
        g.replace_all_uses(id, p);
        removed += 1;
    }
    // Drops the bypassed quantizers (the output no longer depends on them).
    g.compact()?;
    // 2. Formats of the nodes between quantizers, and every data_in_k from its producer.
    let mut weights = 0usize;
    let ids: Vec<NodeId> = g.ids().collect();
    for id in ids {
        let node = g.node(id).clone();
        if matches!(node.op, Op::Constant { .. }) {
            continue;
        }
        let in_fmts: Vec<Option<FixedFormat>> = node
            .inputs
            .iter()
            .map(|i| g.node(*i).meta.common.results.get("data_out_0").and_then(format_of))
            .collect();
        for (k, i) in node.inputs.iter().enumerate() {
            if let Some(f) = &in_fmts[k] {
                let mut tm = g.node(*i).meta.common.results.get("data_out_0").cloned().unwrap_or_default();
                set_format(&mut tm, f);
                g.node_mut(id).meta.common.args.insert(format!("data_in_{k}"), tm);
            }
        }
        let has_out = node.meta.common.results.get("data_out_0").and_then(format_of).is_some();
        if let Op::Linear { weight, bias } = &node.op {
            let w = g.qweights.get(weight).cloned().ok_or_else(|| {
                node.error(
                    "its weight has no QONNX quantizer with a power-of-two scale (unquantized, or a float-scale \
                     quantizer, which needs the requantisation path, not built yet)",
                )
            })?;
            let b = match bias {
                Some(k) => {
                    let t = g.weights.get(k).map(|t| t.to_f32()).ok_or_else(|| node.error("bias missing"))?;
                    let q = match g.qweights.get(k) {
                        Some(q) => q.clone(),
                        None => exact_bias(&t).map_err(|m| node.error(m))?,
                    };
                    g.qweights.insert(k.clone(), q.clone());
                    Some(q)
                }
                None => None,
            };
            weights += 1;
            let fx =
                in_fmts.first().copied().flatten().ok_or_else(|| node.error("its input has no quantizer"))?;
            let wm = TensorMeta { shape: w.codes.shape().to_vec(), ..Default::default() };
            let mut wm = node.meta.common.args.get("weight").cloned().unwrap_or(wm);
            set_format(&mut wm, &w.format);
            g.node_mut(id).meta.common.args.insert("weight".into(), wm);
            if let (Some(b), Some(_)) = (&b, bias) {
                let bm = TensorMeta { shape: b.codes.shape().to_vec(), ..Default::default() };
                let mut bm = node.meta.common.args.get("bias").cloned().unwrap_or(bm);
                set_format(&mut bm, &b.format);
                g.node_mut(id).meta.common.args.insert("bias".into(), bm);
            }
            if !has_out {
                let f = linear_format(&fx, &w, b.as_ref()).map_err(|m| node.error(m))?;
                set_out(&mut g, id, &f);
            }
            continue;
        }
        if has_out || matches!(node.op, Op::Output) {
            continue;
        }
        let carries = matches!(node.op, Op::Relu) || crate::quant::plan::is_carrier(&node.op);
        match (&node.op, in_fmts.first().copied().flatten()) {
            (Op::Placeholder, _) => {
                return Err(
                    node.error("this graph input has no QONNX quantizer, so it has no fixed-point format")
                )
            }
            (_, Some(f)) if carries && in_fmts.iter().all(|x| x.is_none() || *x == Some(f)) => {
                set_out(&mut g, id, &f)
            }
            _ => return Err(node.error(
                "no QONNX quantizer gives this node's result a format, and raise_qonnx derives formats only \
                     for linear, relu and the element-moving ops",
            )),
        }
    }
    let mut info = PassInfo::new();
    info.insert("activation_quantizers".into(), removed.into());
    info.insert("weights".into(), weights.into());
    Ok((g, info))
}

fn set_out(g: &mut MaseGraph, id: NodeId, f: &FixedFormat) {
    let tm = g.node_mut(id).meta.common.results.entry("data_out_0".into()).or_default();
    set_format(tm, f);
}
