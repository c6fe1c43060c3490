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
use super::requant::{apply, requant_for};
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

/// The output codes of the `qlinear` node `op` on the input codes `x` (see the module
/// documentation). Errors say what is not supported; the caller names the node.
pub fn qlinear_codes(g: &MaseGraph, op: &Op, x: &ArrayD<i64>) -> Result<ArrayD<i64>, String> {
    let Op::Qlinear { weight, bias, x_scale, x_zero_point, y_scale, y_zero_point, y_type, relu, .. } = op
    else {
        return Err("not a qlinear".into());
    };
    let (w, w_scale) = weight_grid(g, weight)?;
    let (out, inp) = (w.codes.shape()[0], w.codes.shape()[1]);
    if x.shape().last() != Some(&inp) {
        return Err(format!("its input has shape {:?}; the weight takes {inp} features", x.shape()));
    }
    // The sum's grid per channel as onnxruntime computes the bias scale: a float32 product.
    let sum_scale: Vec<f32> = w_scale.iter().map(|&s| x_scale * s).collect();
    let (b, frac) = match bias {
        Some(k) => bias_codes(g, k, &sum_scale)?,
        None => (vec![0; out], 0),
    };
    let real: Vec<f64> =
        w_scale.iter().map(|&s| f64::from(*x_scale) * f64::from(s) / f64::from(*y_scale)).collect();
    let r = requant_for(&real)?;
    let fmt = code_format(*y_type);
    let rows = x.len() / inp;
    let xs = x.to_shape(IxDyn(&[rows, inp])).map_err(|e| e.to_string())?;
    let mut y = Vec::with_capacity(rows * out);
    for row in xs.axis_iter(Axis(0)) {
        for (j, wrow) in w.codes.axis_iter(Axis(0)).enumerate() {
            let dot: i128 = row
                .iter()
                .zip(wrow.iter())
                .map(|(&a, &c)| i128::from(a - x_zero_point) * i128::from(c))
                .sum();
            let mut acc = (dot << frac) + b[j];
            if *relu {
                acc = acc.max(0);
            }
            y.push(apply(acc, frac, r.multiplier[j], &r, *y_zero_point, &fmt));
        }
    }
    let mut shape = x.shape().to_vec();
    *shape.last_mut().expect("checked") = out;
    ArrayD::from_shape_vec(IxDyn(&shape), y).map_err(|e| e.to_string())
}
