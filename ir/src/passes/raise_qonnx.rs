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
//!   possible sum), a `matmul` of two activations likewise (`f_a + f_b`, width from `K` products
//!   of the largest codes), `add` / `sub` the finer fraction and one bit more than the wider
//!   integer part, a `mul` by a power of two the codes with the fraction moved, `relu` and the
//!   element-moving ops the format of their input.
//! - A layer norm's float scale and shift (Brevitas leaves them unquantized) are held at 16 bits,
//!   the finest fraction their range allows, rounded to nearest even. The layer norm, like
//!   softmax, is then our integer unit where qonnx computes in float32, so a model with them
//!   agrees with qonnx to within one output code rather than code for code.
//! - A float bias keeps its exact effect on the quantized outputs with a few fraction bits
//!   ([`bias_for_casts`]): where the linear's sum reaches only casts (through `relu` and
//!   element-moving ops), every decision those casts and relus make compares the sum with a point
//!   of the grid `2^-g`, `g` the finer of the product's fraction and one bit below the finest
//!   cast's, and the sum without the bias lies on that grid. So a bias off the grid may move to
//!   the midpoint of its grid interval (fraction `g + 1`) without changing any output. Elsewhere
//!   the bias is stored exactly (the finest fraction its float32 values need).
//! - Every node's `data_in_k` takes its producer's result format.
//!
//! Refused, naming the node: a `mul` by a scalar that is not a power of two with no quantizer
//! after it, a `Quant` that is not a fixed-point format (float or per-channel
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
use crate::quant::{qonnx::quant_format, result_format, set_format};
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

/// The fraction `g` of the grid holding every point the casts downstream of `id` compare its
/// sum with (see the module documentation), or `None` if the sum reaches anything other than
/// `relu`, an element-moving op or a node cast by a quantizer (`cast`: those nodes).
fn cast_grid(g: &MaseGraph, id: NodeId, cast: &std::collections::HashSet<NodeId>) -> Option<i32> {
    let mut grid = i32::MIN;
    let mut todo = vec![id];
    while let Some(u) = todo.pop() {
        if cast.contains(&u) {
            // A cast to fraction f rounds at ties on the 2^-(f+1) grid and saturates on 2^-f; a
            // relu cast by its quantizer also compares with 0, which every grid holds.
            grid = grid.max(result_format(g, u)?.frac + 1);
            continue;
        }
        let op = &g.node(u).op;
        if u != id && !(matches!(op, Op::Relu) || crate::quant::plan::is_carrier(op)) {
            return None;
        }
        todo.extend(g.users(u));
    }
    (grid > i32::MIN).then_some(grid)
}

/// A float bias whose sum `s + b` (with `s` on the grid `2^-grid`) is only compared with points
/// of that grid: each value on the grid is kept, each value off it becomes the midpoint of its
/// grid interval, which lies on the same side of every grid point, so every comparison (and
/// every cast and relu built from them) decides as with the exact bias. Fraction `grid + 1`, or
/// `grid` when every value is on the grid.
fn bias_for_casts(b: &ndarray::ArrayD<f32>, grid: i32) -> std::result::Result<QuantTensor, String> {
    let scale = 2f64.powi(grid);
    // (floor(v·2^grid), whether v is off the grid), exact in f64: a float32 times a power of two.
    let mut parts = Vec::with_capacity(b.len());
    for &v in b {
        if !v.is_finite() {
            return Err(format!("its bias has the non-finite value {v}"));
        }
        let t = f64::from(v) * scale;
        if t.abs() >= 2f64.powi(61) {
            return Err(format!("its bias {v} needs more than 62 bits at fraction {}", grid + 1));
        }
        parts.push((t.floor() as i64, t != t.floor()));
    }
    let off = parts.iter().any(|&(_, o)| o);
    let codes: Vec<i64> = parts.iter().map(|&(k, o)| if off { 2 * k + i64::from(o) } else { k }).collect();
    let m = codes.iter().map(|c| c.unsigned_abs() as u128).max().unwrap_or(0);
    let fmt = FixedFormat {
        signed: true,
        width: signed_bits(m),
        frac: grid + i32::from(off),
        rounding: Rounding::RndConv,
        overflow: Overflow::Sat,
    };
    let codes = ndarray::ArrayD::from_shape_vec(b.raw_dim(), codes).map_err(|e| e.to_string())?;
    Ok(QuantTensor::per_tensor(fmt, codes))
}

/// Largest magnitude of a code of `f`.
fn max_code(f: &FixedFormat) -> u128 {
    if f.signed {
        1u128 << (f.width - 1)
    } else {
        (1u128 << f.width) - 1
    }
}

/// Records `q`'s format in the node's argument `role` (what the argument already holds kept,
/// else made with `q`'s shape).
fn set_arg_format(g: &mut MaseGraph, id: NodeId, role: &str, q: &QuantTensor) {
    let shape = || TensorMeta { shape: q.codes.shape().to_vec(), ..Default::default() };
    set_format(g.node_mut(id).meta.common.args.entry(role.into()).or_insert_with(shape), &q.format);
}

/// The full-precision result format of a linear node on input format `fx`.
fn linear_format(
    fx: &FixedFormat,
    w: &QuantTensor,
    b: Option<&QuantTensor>,
) -> std::result::Result<FixedFormat, String> {
    let fp = fx.frac + w.format.frac;
    let frac = b.map_or(fp, |b| b.format.frac.max(fp));
    let xmax = max_code(fx);
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

/// The exact result format of an arithmetic node whose inputs all have formats, for the ops
/// whose result is exact in fixed point: `matmul` (fraction `f_a + f_b`, width from `K` products
/// of the largest codes), `add` / `sub` (the finer fraction, one bit more than the wider integer
/// part) and `mul` by a power-of-two scalar (the codes unchanged, the fraction moved). `None`
/// for any other op; an error for a scalar that is not a power of two.
fn exact_format(
    g: &MaseGraph,
    id: NodeId,
    fmts: &[FixedFormat],
) -> Option<std::result::Result<FixedFormat, String>> {
    let node = g.node(id);
    let fmt = |signed: bool, m: u128, frac: i32| {
        let width = if signed { signed_bits(m) } else { 128 - m.leading_zeros() }.max(1);
        if width > 64 {
            return Err(format!("its exact result needs {width} bits (at most 64)"));
        }
        Ok(FixedFormat { signed, width, frac, rounding: Rounding::Trn, overflow: Overflow::Sat })
    };
    Some(match (&node.op, fmts) {
        (Op::Matmul, [a, b]) => {
            let k = g
                .node(node.inputs[0])
                .meta
                .common
                .results
                .get("data_out_0")
                .and_then(|t| t.shape.last().copied());
            let Some(k) = k.filter(|&k| k > 0) else {
                return Some(Err("its first input has no known inner dimension".into()));
            };
            fmt(a.signed || b.signed, k as u128 * max_code(a) * max_code(b), a.frac + b.frac)
        }
        (Op::Add | Op::Sub, [a, b]) => {
            let frac = a.frac.max(b.frac);
            let m = (max_code(a) << (frac - a.frac)) + (max_code(b) << (frac - b.frac));
            fmt(a.signed || b.signed || matches!(node.op, Op::Sub), m, frac)
        }
        (Op::MulScalar { scalar }, [a]) => {
            let (c, f) = match decompose_f64(f64::from(*scalar)) {
                Some((c, f)) if c.unsigned_abs().is_power_of_two() => {
                    (c, f - c.unsigned_abs().trailing_zeros() as i32)
                }
                _ => {
                    return Some(Err(format!(
                    "it multiplies by {scalar}, not a power of two, so its result has no exact fixed-point \
                         format; quantize its output with a QONNX Quant"
                )))
                }
            };
            if c < 0 {
                fmt(true, max_code(a), a.frac + f)
            } else {
                Ok(FixedFormat { frac: a.frac + f, rounding: Rounding::Trn, overflow: Overflow::Sat, ..*a })
            }
        }
        _ => return None,
    })
}

/// Bits of a float layer-norm scale or shift between quantizers (QONNX exports leave them float):
/// held at the finest fraction their range allows in this width.
const LAYER_NORM_PARAM_WIDTH: u32 = 16;

/// A layer norm's float scale and shift quantized to [`LAYER_NORM_PARAM_WIDTH`] bits (round to
/// nearest even, saturating), recorded in `qweights` and in the node's `weight` / `bias`
/// arguments. Parameters a quantizer already gave a fixed-point format keep it.
fn quantize_layer_norm_params(
    g: &mut MaseGraph,
    id: NodeId,
    weight: &Option<String>,
    bias: &Option<String>,
) -> std::result::Result<(), String> {
    for (role, key) in [("weight", weight), ("bias", bias)] {
        let Some(key) = key else { continue };
        let q = match g.qweights.get(key).and_then(|q| q.fixed()) {
            Some(q) => q.clone(),
            None => {
                let t =
                    g.weights.get(key).map(|t| t.to_f32()).ok_or(format!("its {role} '{key}' is missing"))?;
                if let Some(v) = t.iter().find(|v| !v.is_finite()) {
                    return Err(format!("its {role} has the non-finite value {v}"));
                }
                let (lo, hi) = t.iter().fold((0f64, 0f64), |(l, h), &v| (l.min(v.into()), h.max(v.into())));
                let fmt = FixedFormat {
                    signed: true,
                    width: LAYER_NORM_PARAM_WIDTH,
                    frac: crate::quant::auto::frac_for_range(lo, hi, LAYER_NORM_PARAM_WIDTH),
                    rounding: Rounding::RndConv,
                    overflow: Overflow::Sat,
                };
                QuantTensor::per_tensor(fmt, crate::quant::quantize_f32(&t, &fmt).codes)
            }
        };
        set_arg_format(g, id, role, &q);
        g.qweights.insert(key.clone(), q);
    }
    Ok(())
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
                     formats; this quantizer has a real scale, which needs the requantisation path (the linear \
                     layers between such quantizers are raised to qlinear at import)",
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
    let cast: std::collections::HashSet<NodeId> =
        g.ids().filter(|&i| result_format(&g, i).is_some()).collect();
    // 2. Formats of the nodes between quantizers, and every data_in_k from its producer.
    let mut weights = 0usize;
    let ids: Vec<NodeId> = g.ids().collect();
    for id in ids {
        let node = g.node(id).clone();
        if matches!(node.op, Op::Constant { .. }) {
            continue;
        }
        let in_fmts: Vec<Option<FixedFormat>> = node.inputs.iter().map(|&i| result_format(&g, i)).collect();
        for (k, i) in node.inputs.iter().enumerate() {
            if let Some(f) = &in_fmts[k] {
                let mut tm = g.node(*i).meta.common.results.get("data_out_0").cloned().unwrap_or_default();
                set_format(&mut tm, f);
                g.node_mut(id).meta.common.args.insert(format!("data_in_{k}"), tm);
            }
        }
        let has_out = result_format(&g, id).is_some();
        if let Op::LayerNorm { weight, bias, .. } = &node.op {
            quantize_layer_norm_params(&mut g, id, weight, bias).map_err(|m| node.error(m))?;
        }
        if let Op::Linear { weight, bias } = &node.op {
            let w = g.qweights.get(weight).and_then(|q| q.fixed()).cloned().ok_or_else(|| {
                node.error(
                    "its weight has no QONNX quantizer with a power-of-two scale (unquantized, or a float-scale \
                     quantizer, which needs the requantisation path, not built yet)",
                )
            })?;
            let b = match bias {
                Some(k) => {
                    let t = g.weights.get(k).map(|t| t.to_f32()).ok_or_else(|| node.error("bias missing"))?;
                    let fx = in_fmts.first().copied().flatten();
                    let grid = fx.zip(cast_grid(&g, id, &cast)).map(|(fx, c)| c.max(fx.frac + w.format.frac));
                    let q = match (g.qweights.get(k).and_then(|q| q.fixed()), grid) {
                        (Some(q), _) => q.clone(),
                        (None, Some(grid)) => bias_for_casts(&t, grid).map_err(|m| node.error(m))?,
                        (None, None) => exact_bias(&t).map_err(|m| node.error(m))?,
                    };
                    set_arg_format(&mut g, id, "bias", &q);
                    g.qweights.insert(k.clone(), q.clone());
                    Some(q)
                }
                None => None,
            };
            weights += 1;
            let fx =
                in_fmts.first().copied().flatten().ok_or_else(|| node.error("its input has no quantizer"))?;
            set_arg_format(&mut g, id, "weight", &w);
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
            _ => {
                // Every input has a format, and the op's exact result has one.
                let fmts: Option<Vec<FixedFormat>> = in_fmts.iter().copied().collect();
                if let Some(f) = fmts.and_then(|fmts| exact_format(&g, id, &fmts)) {
                    let f = f.map_err(|m| node.error(m))?;
                    set_out(&mut g, id, &f);
                    continue;
                }
                return Err(node.error(
                    "no QONNX quantizer gives this node's result a format, and raise_qonnx derives formats \
                     only for linear, matmul, add, sub, mul by a power of two, relu and the element-moving ops",
                ));
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::cast_code;

    /// Every cast (each rounding and overflow mode, with and without a relu before it) of every
    /// sum `a + b` with `a` on the product grid decides the same with the midpoint bias as with
    /// the exact float bias: the claim `bias_for_casts` rests on.
    #[test]
    fn midpoint_bias_casts_like_the_exact_bias() {
        // Product fraction 5, casts to fraction 3: the comparison grid is 2^-5.
        let (pf, fo) = (5, 3);
        let grid = pf.max(fo + 1);
        // Float32 biases: off the grid at every depth, on it, on its midpoints, and both signs.
        let mut seed = 0x2545_f491u64;
        let mut biases: Vec<f32> = (0..200)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((seed >> 40) as i32 - (1 << 23)) as f32 / (1u64 << 24) as f32 * 3.0
            })
            .collect();
        biases.extend([0.0, 0.25, -0.25, 1.0 / 64.0, -1.0 / 64.0, 1.0 / 32.0 + 1e-7, -3.0 / 32.0 - 1e-7]);
        let b = ndarray::ArrayD::from_shape_vec(vec![biases.len()], biases.clone()).unwrap();
        let q = bias_for_casts(&b, grid).unwrap();
        assert!(q.format.frac == grid + 1 && q.format.width <= 10, "{:?}", q.format);
        for (v, &code) in biases.iter().zip(q.codes.iter()) {
            // The exact bias as a code at fraction 60 (every float32 here is exact there).
            let (c, f) = decompose_f64(f64::from(*v)).unwrap();
            let exact = if c == 0 { 0 } else { c << (60 - f) };
            for rounding in Rounding::ALL {
                for overflow in Overflow::ALL {
                    let to = FixedFormat { signed: true, width: 6, frac: fo, rounding, overflow };
                    for a in -400i128..=400 {
                        for relu in [false, true] {
                            let r = |x: i128| if relu { x.max(0) } else { x };
                            let want = cast_code(r((a << (60 - pf)) + exact), 60, &to);
                            let got =
                                cast_code(r((a << (q.format.frac - pf)) + code as i128), q.format.frac, &to);
                            assert_eq!(got, want, "bias {v}, a {a}, relu {relu}, {to:?}");
                        }
                    }
                }
            }
        }
    }

    /// A mul by a power of two keeps the codes and moves the fraction (a negative one adds the
    /// bit that negating the most negative code needs); any other scalar is refused by name.
    #[test]
    fn power_of_two_scalars_move_the_fraction() {
        let x = FixedFormat {
            signed: true,
            width: 8,
            frac: 5,
            rounding: Rounding::RndConv,
            overflow: Overflow::Sat,
        };
        let mut g = MaseGraph::new("m");
        let p = g.add_node("x", Op::Placeholder, vec![]).unwrap();
        let quarter = g.add_node("quarter", Op::MulScalar { scalar: 0.25 }, vec![p]).unwrap();
        let minus8 = g.add_node("minus8", Op::MulScalar { scalar: -8.0 }, vec![p]).unwrap();
        let third = g.add_node("third", Op::MulScalar { scalar: 1.0 / 3.0 }, vec![p]).unwrap();
        let y = exact_format(&g, quarter, &[x]).unwrap().unwrap();
        assert_eq!((y.signed, y.width, y.frac), (true, 8, 7));
        let y = exact_format(&g, minus8, &[x]).unwrap().unwrap();
        assert_eq!((y.signed, y.width, y.frac), (true, 9, 2));
        let e = exact_format(&g, third, &[x]).unwrap().unwrap_err();
        assert!(e.contains("not a power of two"), "{e}");
        assert!(exact_format(&g, p, &[x]).is_none());
    }

    /// Biases already on the grid keep their values at the grid's fraction.
    #[test]
    fn on_grid_bias_is_kept() {
        let b = ndarray::ArrayD::from_shape_vec(vec![3], vec![0.5f32, -1.25, 3.0]).unwrap();
        let q = bias_for_casts(&b, 4).unwrap();
        assert_eq!(q.format.frac, 4);
        assert_eq!(q.codes.iter().copied().collect::<Vec<_>>(), vec![8, -20, 48]);
    }
}
