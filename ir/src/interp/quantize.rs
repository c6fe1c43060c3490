//! Quantizers in float: QONNX `Quant`, `BipolarQuant` and `Trunc` (v2), with qonnx's exact
//! semantics (its `int_quant`, `binary_quant` and `trunc_v2`: every step in float32, in the same
//! order, so that the results equal qonnx's executor bit for bit), and ONNX `QuantizeLinear` /
//! `DequantizeLinear` (round half to even, saturation to the code type).

use ndarray::{ArrayD, ArrayViewD, IxDyn, Zip};

use crate::op::{QuantIntType, RoundingMode};

type R<T> = std::result::Result<T, String>;

impl RoundingMode {
    /// Rounds `x` to an integer value with this mode, in float32 as qonnx (numpy) does:
    /// `HALF_UP` is sign(x) · ⌊|x| + 0.5⌋ and `HALF_DOWN` sign(x) · ⌈|x| − 0.5⌉ with the sum
    /// rounded to float32 first.
    pub fn round(self, x: f32) -> f32 {
        let sign = |v: f32| if x < 0.0 { -v } else { v };
        match self {
            RoundingMode::Round => x.round_ties_even(),
            RoundingMode::Ceil => x.ceil(),
            RoundingMode::Floor => x.floor(),
            RoundingMode::Up => sign(x.abs().ceil()),
            RoundingMode::Down => x.trunc(),
            RoundingMode::HalfUp => sign((x.abs() + 0.5).floor()),
            RoundingMode::HalfDown => sign((x.abs() - 0.5).ceil()),
        }
    }
}

/// The integer range of a QONNX quantizer (qonnx's `min_int` / `max_int`) as float32 bounds.
/// `bit_width` must be a positive integer.
pub fn int_range(signed: bool, narrow: bool, bit_width: f32) -> (f32, f32) {
    let b = f64::from(bit_width);
    let (lo, hi) = match (signed, narrow) {
        (true, true) => (-(2f64.powf(b - 1.0)) + 1.0, 2f64.powf(b - 1.0) - 1.0),
        (true, false) => (-(2f64.powf(b - 1.0)), 2f64.powf(b - 1.0) - 1.0),
        (false, true) => (0.0, 2f64.powf(b) - 2.0),
        (false, false) => (0.0, 2f64.powf(b) - 1.0),
    };
    (lo as f32, hi as f32)
}

/// A parameter tensor broadcast to the shape of x, or an error naming it.
fn bcast<'a>(what: &str, p: &'a ArrayD<f32>, shape: &[usize]) -> R<ArrayViewD<'a, f32>> {
    p.broadcast(IxDyn(shape)).ok_or_else(|| {
        format!("the {what} of shape {:?} does not broadcast to the input's shape {shape:?}", p.shape())
    })
}

/// The single value of a bit width, checked to be an integer from 1 to 32.
pub fn bit_width_value(what: &str, b: &ArrayD<f32>) -> R<f32> {
    if b.len() != 1 {
        return Err(format!("the {what} must have one element, it has shape {:?}", b.shape()));
    }
    let v = b.iter().next().copied().unwrap_or(0.0);
    if !(v.fract() == 0.0 && (1.0..=32.0).contains(&v)) {
        return Err(format!("the {what} is {v}; supported: an integer from 1 to 32"));
    }
    Ok(v)
}

/// QONNX `Quant` (see [`crate::op::Op::Quant`]).
pub fn int_quant(
    x: &ArrayD<f32>,
    scale: &ArrayD<f32>,
    zero_point: &ArrayD<f32>,
    bit_width: &ArrayD<f32>,
    signed: bool,
    narrow: bool,
    rounding: RoundingMode,
) -> R<ArrayD<f32>> {
    let quant = IntQuant { scale, zero_point, bit_width, signed, narrow, rounding };
    let q = quant.codes(x)?;
    let s = bcast("scale", scale, x.shape())?;
    let z = bcast("zero point", zero_point, x.shape())?;
    Ok(Zip::from(&q).and(&s).and(&z).map_collect(|&q, &s, &z| (q - z) * s))
}

/// The parameters of a QONNX `Quant`, for its integer step alone.
pub struct IntQuant<'a> {
    /// Scale (broadcast to the input).
    pub scale: &'a ArrayD<f32>,
    /// Zero point (broadcast to the input).
    pub zero_point: &'a ArrayD<f32>,
    /// Bit width (one value, 1 to 32).
    pub bit_width: &'a ArrayD<f32>,
    /// Signed codes.
    pub signed: bool,
    /// Narrow range (no most negative, or no largest unsigned, code).
    pub narrow: bool,
    /// Rounding mode.
    pub rounding: RoundingMode,
}

impl IntQuant<'_> {
    /// The integer codes (as float32) the quantizer computes before it rescales them: the
    /// model's own integers of a quantized weight.
    pub fn codes(&self, x: &ArrayD<f32>) -> R<ArrayD<f32>> {
        let bw = bit_width_value("bit width", self.bit_width)?;
        let s = bcast("scale", self.scale, x.shape())?;
        let z = bcast("zero point", self.zero_point, x.shape())?;
        let (lo, hi) = int_range(self.signed, self.narrow, bw);
        let bipolar = bw == 1.0 && self.signed;
        Ok(Zip::from(x).and(&s).and(&z).map_collect(|&x, &s, &z| {
            let q = x / s + z;
            if bipolar {
                if q >= 0.0 {
                    1.0
                } else {
                    -1.0
                }
            } else {
                // Clamped before rounding, as qonnx does (the bounds are integers, so the order
                // only matters for NaN, which both keep).
                self.rounding.round(q.clamp(lo, hi))
            }
        }))
    }
}

/// QONNX `BipolarQuant`: (x ≥ 0 ? 1 : −1) · scale.
pub fn bipolar_quant(x: &ArrayD<f32>, scale: &ArrayD<f32>) -> R<ArrayD<f32>> {
    let s = bcast("scale", scale, x.shape())?;
    Ok(Zip::from(x).and(&s).map_collect(|&x, &s| if x >= 0.0 { s } else { -s }))
}

/// QONNX `Trunc` version 2 (see [`crate::op::Op::Trunc`]).
#[allow(clippy::too_many_arguments)]
pub fn trunc(
    x: &ArrayD<f32>,
    scale: &ArrayD<f32>,
    zero_point: &ArrayD<f32>,
    output_scale: &ArrayD<f32>,
    output_bit_width: &ArrayD<f32>,
    signed: bool,
    narrow: bool,
    rounding: RoundingMode,
) -> R<ArrayD<f32>> {
    let bw = bit_width_value("output bit width", output_bit_width)?;
    let s = bcast("scale", scale, x.shape())?;
    let z = bcast("zero point", zero_point, x.shape())?;
    let os = bcast("output scale", output_scale, x.shape())?;
    let (lo, hi) = int_range(signed, narrow, bw);
    Ok(Zip::from(x).and(&s).and(&z).and(&os).map_collect(|&x, &s, &z, &os| {
        let y = (x / s + z).round_ties_even();
        let t = 2f32.powf((os / s).log2().round_ties_even());
        (rounding.round((y / t).clamp(lo, hi)) - z / t) * os
    }))
}

/// Per-tensor or per-axis parameters of `QuantizeLinear` / `DequantizeLinear`: `None` for one
/// element (per tensor), else the axis (non-negative) of a 1-D parameter of its length.
fn qdq_axis(
    op: &str,
    x_shape: &[usize],
    scale: &[usize],
    zp: Option<&[usize]>,
    axis: i64,
) -> R<Option<usize>> {
    if let Some(z) = zp {
        if z != scale {
            return Err(format!("{op}: the zero point's shape {z:?} differs from the scale's {scale:?}"));
        }
    }
    let n: usize = scale.iter().product();
    if scale.is_empty() || (scale.len() == 1 && n == 1) {
        return Ok(None);
    }
    let rank = x_shape.len() as i64;
    let a = if axis < 0 { axis + rank } else { axis };
    if scale.len() != 1 || !(0..rank).contains(&a) {
        return Err(format!(
            "{op}: the scale of shape {scale:?} is neither one element (per tensor) nor 1-D along axis {axis} of the \
             input of shape {x_shape:?} (blocked quantization is not supported)"
        ));
    }
    let a = a as usize;
    if x_shape[a] != n {
        return Err(format!(
            "{op}: the scale has {n} elements but axis {axis} of the input of shape {x_shape:?} has {}",
            x_shape[a]
        ));
    }
    Ok(Some(a))
}

/// The parameter `p` (one element or 1-D along `axis`) as an array that broadcasts to `shape`.
fn along_axis<T: Clone>(p: &ArrayD<T>, axis: Option<usize>, rank: usize) -> ArrayD<T> {
    let mut dims = vec![1; rank];
    if let Some(a) = axis {
        dims[a] = p.len();
    }
    let flat: Vec<T> = p.iter().take(dims.iter().product()).cloned().collect();
    ArrayD::from_shape_vec(IxDyn(&dims), flat).expect("sizes match")
}

/// ONNX `QuantizeLinear`: saturate(round_half_even(x / scale) + zero_point) in `to`'s range.
pub fn quantize_linear(
    x: &ArrayD<f32>,
    scale: &ArrayD<f32>,
    zero_point: Option<&ArrayD<i64>>,
    axis: i64,
    to: QuantIntType,
) -> R<ArrayD<i64>> {
    let a = qdq_axis("quantize_linear", x.shape(), scale.shape(), zero_point.map(|z| z.shape()), axis)?;
    let s = along_axis(scale, a, x.ndim());
    let z = zero_point.map_or_else(|| ArrayD::zeros(s.raw_dim()), |z| along_axis(z, a, x.ndim()));
    let (lo, hi) = to.range();
    let s = s.broadcast(x.raw_dim()).ok_or("quantize_linear: internal broadcast")?;
    let z = z.broadcast(x.raw_dim()).ok_or("quantize_linear: internal broadcast")?;
    Ok(Zip::from(x).and(&s).and(&z).map_collect(|&x, &s, &z| {
        // onnxruntime: nearbyint(x / scale) + zero_point, clamped in float, then converted.
        let v = (x / s).round_ties_even() + z as f32;
        v.clamp(lo as f32, hi as f32) as i64
    }))
}

/// ONNX `DequantizeLinear`: (codes − zero_point) · scale in float32.
pub fn dequantize_linear(
    codes: &ArrayD<i64>,
    scale: &ArrayD<f32>,
    zero_point: Option<&ArrayD<i64>>,
    axis: i64,
) -> R<ArrayD<f32>> {
    let a = qdq_axis("dequantize_linear", codes.shape(), scale.shape(), zero_point.map(|z| z.shape()), axis)?;
    let s = along_axis(scale, a, codes.ndim());
    let z = zero_point.map_or_else(|| ArrayD::zeros(s.raw_dim()), |z| along_axis(z, a, codes.ndim()));
    let s = s.broadcast(codes.raw_dim()).ok_or("dequantize_linear: internal broadcast")?;
    let z = z.broadcast(codes.raw_dim()).ok_or("dequantize_linear: internal broadcast")?;
    Ok(Zip::from(codes).and(&s).and(&z).map_collect(|&q, &s, &z| (q - z) as f32 * s))
}
