//! The integer execution of a `qlinear` ([`crate::Op::Qlinear`]): what its hardware computes,
//! bit for bit.
//!
//! - The sum is exact: `acc[j] = Σ_i (x_i − x_zero_point) · w[j,i] · 2^F + b[j]` in i128, on the
//!   grid of `x_scale · w_scale[j] · 2^-F`.
//! - The bias: int32 codes whose scale is the float32 product `x_scale · w_scale[j]` (what
//!   onnxruntime's quantizer writes, and what its integer kernels add to the accumulator) are
//!   added as they are (`F = 0`). Any other bias is the real value on that grid, exactly at the
//!   smallest `F ≤ 16` that holds every value, else rounded half to even at `F = 16`.
//! - `relu` keeps `max(acc, 0)`.
//! - The output is [`super::requant::apply`] with the multipliers of
//!   `M[j] = x_scale · w_scale[j] / y_scale`, the output zero point and the range of `y_type`.
//!
//! The weights must be the model's codes on their grid (`qweights` with [`crate::tensor::Affine`])
//! with zero points 0 (symmetric weights, as both onnxruntime's and Brevitas's default).

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
    let frac = (0..=MAX_BIAS_FRAC)
        .find(|&f| t.iter().all(|v| (v * 2f64.powi(f)).fract() == 0.0))
        .unwrap_or(MAX_BIAS_FRAC);
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

/// The integer plan of the `qlinear` node `op` in `g`. Errors say what is not supported; the
/// caller names the node.
pub fn plan(g: &MaseGraph, op: &Op) -> Result<QlinearPlan, String> {
    let Op::Qlinear { weight, bias, x_type, x_scale, x_zero_point, y_scale, y_zero_point, y_type, relu } = op
    else {
        return Err("not a qlinear".into());
    };
    let (w, w_scale) = weight_grid(g, weight)?;
    let (out, inp) = (w.codes.shape()[0], w.codes.shape()[1]);
    // The sum's grid per channel as onnxruntime computes the bias scale: a float32 product.
    let sum_scale: Vec<f32> = w_scale.iter().map(|&s| x_scale * s).collect();
    let (bias, frac) = match bias {
        Some(k) => {
            let (b, f) = bias_codes(g, k, &sum_scale)?;
            (Some(b), f)
        }
        None => (None, 0),
    };
    let real: Vec<f64> =
        w_scale.iter().map(|&s| f64::from(*x_scale) * f64::from(s) / f64::from(*y_scale)).collect();
    Ok(QlinearPlan {
        out,
        inp,
        weight: w.codes.iter().copied().collect(),
        bias,
        frac,
        requant: requant_for(&real)?,
        x_format: code_format(*x_type),
        y_format: code_format(*y_type),
        x_zero_point: *x_zero_point,
        y_zero_point: *y_zero_point,
        relu: *relu,
    })
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

/// The output codes of the `qlinear` node `op` on the input codes `x` (see the module
/// documentation). Errors say what is not supported; the caller names the node.
pub fn qlinear_codes(g: &MaseGraph, op: &Op, x: &ArrayD<i64>) -> Result<ArrayD<i64>, String> {
    let p = plan(g, op)?;
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
