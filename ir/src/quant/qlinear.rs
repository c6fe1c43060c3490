//! The integer execution of a `qlinear` ([`crate::Op::Qlinear`]): what its hardware computes,
//! bit for bit.
//!
//! - The sum is exact: `acc[j] = Σ_i (x_i − x_zero_point) · w[j,i] · 2^F + b[j]` in i128, on the
//!   grid of `x_scale · w_scale[j] · 2^-F`.
//! - The bias: int32 codes whose scale is the float32 product `x_scale · w_scale[j]` (what
//!   onnxruntime's quantizer writes, and what its integer kernels add to the accumulator) are
//!   added as they are (`F = 0`). Any other bias is the real value on that grid, exactly at the
//!   smallest `F ≤ 16` that holds every value, else rounded half to even at the largest `F ≤ 16`
//!   whose codes fit 32 bits (`F = 0` at the least).
//! - `relu` keeps `max(acc, 0)`.
//! - The output is [`super::requant::apply`] with the multipliers of
//!   `M[j] = x_scale · w_scale[j] / y_scale`, the output zero point and the range of `y_type`.
//!
//! The weights must be the model's codes on their grid (`qweights` with [`crate::tensor::Affine`])
//! with zero points 0 (symmetric weights, as both onnxruntime's and Brevitas's default).
//!
//! **Weight-only** models (int8 weight codes with float scales, activations in float: a
//! `DequantizeLinear` of constant codes or `Cast(int8) · scale` before a float linear) keep the
//! `linear` op; once the fixed-point flow gives its input and output power-of-two formats
//! `2^-f_x` and `2^-f_y`, [`weight_only_plan`] computes it as the same integer arithmetic with
//! `x_scale = 2^-f_x`, `y_scale = 2^-f_y` and zero points 0, so the weight memories hold the
//! model's own codes and the output is rounded once, half to even, by the requantisation.

use ndarray::{ArrayD, Axis, IxDyn};

use super::affine::code_format;
use super::requant::{apply, requant_for, Requant};
use crate::fixed::FixedFormat;
use crate::graph::MaseGraph;
use crate::op::Op;
use crate::tensor::QuantTensor;

/// Largest fraction a bias that is not on the sum's grid gets.
pub const MAX_BIAS_FRAC: i32 = 16;

/// The weight codes `[out, in]` and each output channel's weight scale.
fn weight_grid<'g>(g: &'g MaseGraph, key: &str) -> Result<(&'g QuantTensor, Vec<f32>), String> {
    let q = g.qweights.get(key).ok_or_else(|| {
        format!("its weight '{key}' has no integer codes (it was not dequantized from the model's own codes)")
    })?;
    let a = q.affine.as_ref().ok_or_else(|| format!("its weight '{key}' is not on a real grid"))?;
    let out = q.codes.shape().first().copied().unwrap_or(0);
    if q.codes.ndim() != 2 || (a.scale.len() != 1 && (a.axis != 0 || a.scale.len() != out)) {
        return Err(format!(
            "its weight '{key}' must be [out, in] with one scale or one per output channel (axis 0); it is {:?} \
             with {} scales along axis {}",
            q.codes.shape(),
            a.scale.len(),
            a.axis
        ));
    }
    if let Some(z) = a.zero_point.iter().find(|&&z| z != 0) {
        return Err(format!(
            "its weight '{key}' has the zero point {z}; only symmetric weights (zero point 0) are supported"
        ));
    }
    let scales = (0..out).map(|j| a.channel(j).0).collect();
    Ok((q, scales))
}

/// The bias on the sum's grid: the codes and their fraction `F` (see the module documentation).
fn bias_codes(g: &MaseGraph, key: &str, sum_scale: &[f32]) -> Result<(Vec<i128>, i32), String> {
    if let Some(q) = g.qweights.get(key) {
        if let Some(a) = &q.affine {
            let fits =
                q.codes.len() == sum_scale.len() && (a.scale.len() == 1 || a.scale.len() == q.codes.len());
            if fits && (0..sum_scale.len()).all(|j| a.channel(j) == (sum_scale[j], 0)) {
                return Ok((q.codes.iter().map(|&c| i128::from(c)).collect(), 0));
            }
        }
    }
    let b = g.weights.get(key).ok_or_else(|| format!("its bias '{key}' is missing"))?.to_f32();
    if b.len() != sum_scale.len() {
        return Err(format!("its bias '{key}' has {} values for {} channels", b.len(), sum_scale.len()));
    }
    // b / (x_scale · w_scale) in f64: both scales are products of float32s, exact in f64.
    let t: Vec<f64> = b.iter().zip(sum_scale).map(|(&v, &s)| f64::from(v) / f64::from(s)).collect();
    // Within 32-bit codes (the component's bias lanes): a weight-only layer's sum grid is fine
    // (s_x · s_w), so its bias needs no fraction bits at all to be far below one output code.
    let fits = |f: i32| t.iter().all(|v| (v * 2f64.powi(f)).round_ties_even().abs() < 2f64.powi(31));
    let widest = (0..=MAX_BIAS_FRAC).rev().find(|&f| fits(f)).unwrap_or(0);
    let frac = (0..=widest).find(|&f| t.iter().all(|v| (v * 2f64.powi(f)).fract() == 0.0)).unwrap_or(widest);
    let codes = t.iter().map(|v| (v * 2f64.powi(frac)).round_ties_even() as i128).collect();
    Ok((codes, frac))
}

/// Everything a `qlinear`'s integer arithmetic needs, read once from the node and the graph: what
/// quantized execution and the hardware binding both use (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct QlinearPlan {
    /// Output features.
    pub out: usize,
    /// Input features.
    pub inp: usize,
    /// The weight codes, `[out][in]` row-major.
    pub weight: Vec<i64>,
    /// The bias codes on the sum's grid (`frac` fraction bits), one per output channel; `None`
    /// without a bias.
    pub bias: Option<Vec<i128>>,
    /// Fraction bits of the sum's grid (the bias's; 0 without a bias).
    pub frac: i32,
    /// The requantisation multipliers, one per output channel.
    pub requant: Requant,
    /// The input codes' format (fraction 0).
    pub x_format: FixedFormat,
    /// The output codes' format (fraction 0, saturating).
    pub y_format: FixedFormat,
    /// The input zero point.
    pub x_zero_point: i64,
    /// The output zero point.
    pub y_zero_point: i64,
    /// ReLU on the exact sum.
    pub relu: bool,
}

/// The grids around a quantized linear: the input and output codes' scales, zero points and
/// formats (fraction 0), and ReLU on the exact sum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grids {
    /// The input codes' scale.
    pub x_scale: f32,
    /// The input zero point.
    pub x_zero_point: i64,
    /// The input codes' format (fraction 0).
    pub x_format: FixedFormat,
    /// The output codes' scale.
    pub y_scale: f32,
    /// The output zero point.
    pub y_zero_point: i64,
    /// The output codes' format (fraction 0, saturating).
    pub y_format: FixedFormat,
    /// ReLU on the exact sum.
    pub relu: bool,
}

/// The integer plan of a linear with the weight `weight`, the bias `bias` and the grids `io`.
fn plan_on(g: &MaseGraph, weight: &str, bias: Option<&String>, io: Grids) -> Result<QlinearPlan, String> {
    let (w, w_scale) = weight_grid(g, weight)?;
    let (out, inp) = (w.codes.shape()[0], w.codes.shape()[1]);
    // The sum's grid per channel as onnxruntime computes the bias scale: a float32 product.
    let sum_scale: Vec<f32> = w_scale.iter().map(|&s| io.x_scale * s).collect();
    let (bias, frac) = match bias {
        Some(k) => {
            let (b, f) = bias_codes(g, k, &sum_scale)?;
            (Some(b), f)
        }
        None => (None, 0),
    };
    let real: Vec<f64> =
        w_scale.iter().map(|&s| f64::from(io.x_scale) * f64::from(s) / f64::from(io.y_scale)).collect();
    Ok(QlinearPlan {
        out,
        inp,
        weight: w.codes.iter().copied().collect(),
        bias,
        frac,
        requant: requant_for(&real)?,
        x_format: io.x_format,
        y_format: io.y_format,
        x_zero_point: io.x_zero_point,
        y_zero_point: io.y_zero_point,
        relu: io.relu,
    })
}

/// The integer plan of the `qlinear` node `op` in `g`. Errors say what is not supported; the
/// caller names the node.
pub fn plan(g: &MaseGraph, op: &Op) -> Result<QlinearPlan, String> {
    let Op::Qlinear { weight, bias, x_type, x_scale, x_zero_point, y_scale, y_zero_point, y_type, relu } = op
    else {
        return Err("not a qlinear".into());
    };
    let io = Grids {
        x_scale: *x_scale,
        x_zero_point: *x_zero_point,
        x_format: code_format(*x_type),
        y_scale: *y_scale,
        y_zero_point: *y_zero_point,
        y_format: code_format(*y_type),
        relu: *relu,
    };
    plan_on(g, weight, bias.as_ref(), io)
}

/// True when the `linear` node `node` computes on the model's own weight codes: its weight has
/// an affine grid ([`crate::tensor::Affine`], see the module documentation on weight-only
/// models). Such a weight is not requantized by the fixed-point flow.
pub fn is_weight_only(g: &MaseGraph, node: &crate::graph::Node) -> bool {
    let Op::Linear { weight, .. } = &node.op else { return false };
    g.qweights.get(weight).is_some_and(|q| q.affine.is_some())
}

/// The integer plan of the weight-only `linear` node `node` (see [`is_weight_only`]) between
/// the fixed-point formats `x` (its input) and `y` (its result). Errors say what is not
/// supported; the caller names the node.
pub fn weight_only_plan(
    g: &MaseGraph,
    node: &crate::graph::Node,
    x: &FixedFormat,
    y: &FixedFormat,
) -> Result<QlinearPlan, String> {
    let Op::Linear { weight, bias } = &node.op else { return Err("not a linear".into()) };
    let pow2 = |frac: i32| -> Result<f32, String> {
        let s = 2f64.powi(-frac);
        if (s as f32).is_normal() {
            Ok(s as f32)
        } else {
            Err(format!("a format with {frac} fraction bits has no float32 scale"))
        }
    };
    let io = Grids {
        x_scale: pow2(x.frac)?,
        x_zero_point: 0,
        x_format: FixedFormat { frac: 0, ..*x },
        y_scale: pow2(y.frac)?,
        y_zero_point: 0,
        y_format: FixedFormat { frac: 0, overflow: crate::fixed::Overflow::Sat, ..*y },
        relu: false,
    };
    plan_on(g, weight, bias.as_ref(), io)
}

impl QlinearPlan {
    /// The output codes of one row of input codes (`inp` of them): `out` codes.
    pub fn row(&self, x: &[i64]) -> Vec<i64> {
        (0..self.out)
            .map(|j| {
                let wrow = &self.weight[j * self.inp..(j + 1) * self.inp];
                let dot: i128 = x
                    .iter()
                    .zip(wrow)
                    .map(|(&a, &c)| i128::from(a - self.x_zero_point) * i128::from(c))
                    .sum();
                let mut acc = (dot << self.frac) + self.bias.as_ref().map_or(0, |b| b[j]);
                if self.relu {
                    acc = acc.max(0);
                }
                apply(
                    acc,
                    self.frac,
                    self.requant.multiplier[j],
                    &self.requant,
                    self.y_zero_point,
                    &self.y_format,
                )
            })
            .collect()
    }
}

/// The output codes of the plan `p` on the input codes `x` (rows of `p.inp` codes along the
/// last axis).
pub fn linear_codes(p: &QlinearPlan, x: &ArrayD<i64>) -> Result<ArrayD<i64>, String> {
    if x.shape().last() != Some(&p.inp) {
        return Err(format!("its input has shape {:?}; the weight takes {} features", x.shape(), p.inp));
    }
    let rows = x.len() / p.inp;
    let xs = x.to_shape(IxDyn(&[rows, p.inp])).map_err(|e| e.to_string())?;
    let mut y = Vec::with_capacity(rows * p.out);
    for row in xs.axis_iter(Axis(0)) {
        y.extend(p.row(&row.iter().copied().collect::<Vec<_>>()));
    }
    let mut shape = x.shape().to_vec();
    *shape.last_mut().expect("checked") = p.out;
    ArrayD::from_shape_vec(IxDyn(&shape), y).map_err(|e| e.to_string())
}

/// The output codes of the `qlinear` node `op` on the input codes `x` (see the module
/// documentation). Errors say what is not supported; the caller names the node.
pub fn qlinear_codes(g: &MaseGraph, op: &Op, x: &ArrayD<i64>) -> Result<ArrayD<i64>, String> {
    linear_codes(&plan(g, op)?, x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::{Overflow, Rounding};
    use crate::tensor::{Affine, Tensor};

    /// A deterministic stream of pseudo-random u64 (a linear congruential generator).
    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        *seed >> 11
    }

    /// A graph with one weight-only linear `[out, in]`: int8 codes, one float scale per output
    /// channel, a float bias.
    fn weight_only_graph(out: usize, inp: usize, seed: &mut u64) -> (MaseGraph, crate::graph::NodeId) {
        let mut g = MaseGraph::new("w");
        let codes: Vec<i64> = (0..out * inp).map(|_| (lcg(seed) % 255) as i64 - 127).collect();
        let scale: Vec<f32> = (0..out).map(|_| (lcg(seed) % 1000 + 1) as f32 * 1.3e-6).collect();
        let bias: Vec<f32> = (0..out).map(|_| ((lcg(seed) % 2001) as f32 - 1000.0) * 1e-4).collect();
        let w = ArrayD::from_shape_vec(IxDyn(&[out, inp]), codes).unwrap();
        let affine = Affine { scale, zero_point: vec![0; out], axis: 0 };
        let q = QuantTensor::on_grid(code_format(crate::op::QuantIntType::Int8), w, affine);
        g.weights.insert("w".into(), Tensor::F32(q.dequantize()));
        g.weights.insert("b".into(), Tensor::F32(ArrayD::from_shape_vec(IxDyn(&[out]), bias).unwrap()));
        g.qweights.insert("w".into(), q);
        let x = g.add_node("x", Op::Placeholder, vec![]).unwrap();
        let op = Op::Linear { weight: "w".into(), bias: Some("b".into()) };
        let l = g.add_node("l", op, vec![x]).unwrap();
        (g, l)
    }

    /// Between fixed-point formats, a weight-only linear's codes are the real-valued result
    /// `(Σ x·w + b) / 2^-f_y` rounded half to even and saturated, except within the
    /// requantisation's stated tie window (then by one code).
    #[test]
    fn weight_only_codes_round_the_real_result() {
        let mut seed = 11u64;
        let (g, l) = weight_only_graph(6, 24, &mut seed);
        let x_fmt = FixedFormat::signed(16, 10);
        let y_fmt = FixedFormat::signed(16, 12).with_modes(Rounding::Trn, Overflow::Sat);
        let p = weight_only_plan(&g, g.node(l), &x_fmt, &y_fmt).unwrap();
        assert!(is_weight_only(&g, g.node(l)));
        assert_eq!(p.weight, g.qweights["w"].codes.iter().copied().collect::<Vec<_>>(), "the model's codes");
        let (w, b) = (g.weights["w"].to_f32(), g.weights["b"].to_f32());
        let (mut exact, mut off) = (0, 0);
        for _ in 0..400 {
            let x: Vec<i64> = (0..24).map(|_| (lcg(&mut seed) % 8001) as i64 - 4000).collect();
            let got = p.row(&x);
            for (j, &code) in got.iter().enumerate() {
                let real: f64 =
                    (0..24).map(|i| x[i] as f64 * 2f64.powi(-10) * f64::from(w[[j, i]])).sum::<f64>()
                        + f64::from(b[j]);
                let want = (real * 2f64.powi(12)).round_ties_even().clamp(-32768.0, 32767.0) as i64;
                match (code - want).abs() {
                    0 => exact += 1,
                    1 => off += 1,
                    d => panic!("channel {j}: code {code} against {want} ({d} codes)"),
                }
            }
        }
        // The bias rounded onto the sum's grid and the 24-bit multipliers move only near-ties.
        assert!(off * 500 < exact, "{off} of {} codes one off", exact + off);
    }

    /// A bias far above the sum's grid gets the fraction bits its 32-bit codes can hold.
    #[test]
    fn a_bias_keeps_within_32_bit_codes() {
        let mut g = MaseGraph::new("b");
        g.weights.insert(
            "b".into(),
            Tensor::F32(ArrayD::from_shape_vec(IxDyn(&[2]), vec![0.7f32, -0.2]).unwrap()),
        );
        let (codes, frac) = bias_codes(&g, "b", &[1e-7, 2e-7]).unwrap();
        assert!(codes.iter().all(|c| c.unsigned_abs() < 1 << 31), "{codes:?}");
        assert!(codes[0].unsigned_abs() >= 1 << 30, "the largest fraction that fits: {frac}, {codes:?}");
        let (_, frac) = bias_codes(&g, "b", &[0.5, 0.25]).unwrap();
        assert_eq!(frac, 16, "a bias on a coarse grid is not exact below 16 bits: {frac}");
    }
}
