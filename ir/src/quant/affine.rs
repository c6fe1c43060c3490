//! Codes on affine grids: the integer weights of a model quantized with scales that are not
//! powers of two (ONNX `DequantizeLinear` of constant codes, QONNX `Quant` of a constant with a
//! float or per-channel scale), kept as the model wrote them in
//! [`crate::MaseGraph::qweights`] with their [`Affine`] grid. The importer folds such a
//! quantizer into a float constant (its dequantized values) and records the codes here,
//! so the model's own integers stay available to the requantisation path
//! ([`super::requant`]) and to `mase info`.

use std::collections::BTreeMap;

use crate::fixed::{FixedFormat, Overflow, Rounding};
use crate::op::{Op, QuantIntType};
use crate::tensor::{Affine, QuantTensor, Tensor};

/// The fixed-point format (fraction 0) holding every code of `ty`.
pub fn code_format(ty: QuantIntType) -> FixedFormat {
    let f = match ty {
        QuantIntType::Int8 => FixedFormat::signed(8, 0),
        QuantIntType::Uint8 => FixedFormat::unsigned(8, 0),
        QuantIntType::Int32 => FixedFormat::signed(32, 0),
    };
    f.with_modes(Rounding::RndConv, Overflow::Sat)
}

/// The codes of a folded `DequantizeLinear` of the constant `codes` with the scale and zero
/// point stored under `scale` / `zero_point` in `weights`, along ONNX `axis` (negative counts
/// from the end; used when the scale has more than one element). `None` when the parameters do
/// not describe a grid (the importer then keeps only the float values it already computed and
/// checked).
pub fn folded_dequantize(
    ty: QuantIntType,
    codes: &Tensor,
    scale: &str,
    zero_point: Option<&String>,
    axis: i64,
    weights: &BTreeMap<String, Tensor>,
) -> Option<QuantTensor> {
    let codes = codes.to_i64();
    let s: Vec<f32> = weights.get(scale)?.to_f32().iter().copied().collect();
    let z: Vec<i64> = match zero_point {
        Some(k) => weights.get(k)?.to_i64().iter().copied().collect(),
        None => vec![0; s.len()],
    };
    let rank = codes.ndim() as i64;
    let axis =
        if s.len() == 1 { 0 } else { usize::try_from(if axis < 0 { axis + rank } else { axis }).ok()? };
    let affine = Affine { scale: s, zero_point: z, axis };
    Some(QuantTensor::on_grid(code_format(ty), codes, affine))
}

/// The codes of a folded `Cast` of the constant integer `codes` of ONNX type `ty` to float:
/// the codes on the grid of scale 1 and zero point 0, which a following multiplication by a
/// scale ([`scaled_codes`]) turns into a weight-only model's grid.
pub fn cast_codes(ty: QuantIntType, codes: &Tensor) -> QuantTensor {
    let affine = Affine { scale: vec![1.0], zero_point: vec![0], axis: 0 };
    QuantTensor::on_grid(code_format(ty), codes.to_i64(), affine)
}

/// The codes of a folded `codes · scale`, where `codes` came from [`cast_codes`] (scale 1, zero
/// point 0) and `scale` is a positive float32 constant, one value or one per index of one axis
/// of the codes (the weight-only pattern `Cast(int8) → Mul(scale)`): the codes on the grid of
/// that scale. `None` when the product is not such a grid (the importer then keeps only the
/// float values).
pub fn scaled_codes(codes: &QuantTensor, scale: &Tensor) -> Option<QuantTensor> {
    let a = codes.affine.as_ref()?;
    if a.scale != [1.0] || a.zero_point != [0] {
        return None;
    }
    let s = scale.as_f32()?;
    let shape = codes.codes.shape();
    // The product must keep the codes' shape: every scale dimension is 1 or the codes'.
    let offset = shape.len().checked_sub(s.ndim())?;
    if s.shape().iter().enumerate().any(|(i, &d)| d != 1 && d != shape[i + offset]) {
        return None;
    }
    if s.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let axis = broadcast_axis(s.shape(), shape)?;
    let flat: Vec<f32> = s.iter().copied().collect();
    let scale = if axis.is_some() { flat } else { vec![flat[0]] };
    let affine = Affine { zero_point: vec![0; scale.len()], scale, axis: axis.unwrap_or(0) };
    Some(QuantTensor { affine: Some(affine), ..codes.clone() })
}

/// The axis of `x` (shape `x_shape`) a parameter of shape `p` varies along once broadcast:
/// `Some(None)` when it is one value, `None` when it varies along more than one.
fn broadcast_axis(p: &[usize], x_shape: &[usize]) -> Option<Option<usize>> {
    let offset = x_shape.len().checked_sub(p.len())?;
    let mut axes = p.iter().enumerate().filter(|(_, &d)| d > 1).map(|(i, _)| i + offset);
    let axis = axes.next();
    axes.next().is_none().then_some(axis)
}

/// The codes of a folded QONNX `Quant` of the constant `x` whose scale is not one power of two
/// (see [`crate::interp::quantize::IntQuant::codes`]), on their grid: one scale or one per index
/// of the one axis the scale and zero point vary along; the zero points must be integers. `None`
/// for a bipolar or otherwise gridless quantizer.
pub fn folded_quant(op: &Op, x: &Tensor, weights: &BTreeMap<String, Tensor>) -> Option<QuantTensor> {
    let Op::Quant { scale, zero_point, bit_width, signed, narrow, rounding } = op else { return None };
    let x = x.as_f32()?;
    let (s, z, b) =
        (weights.get(scale)?.to_f32(), weights.get(zero_point)?.to_f32(), weights.get(bit_width)?.to_f32());
    let quant = crate::interp::quantize::IntQuant {
        scale: &s,
        zero_point: &z,
        bit_width: &b,
        signed: *signed,
        narrow: *narrow,
        rounding: *rounding,
    };
    let codes = quant.codes(x).ok()?;
    let width = crate::interp::quantize::bit_width_value("bit width", &b).ok()? as u32;
    if width == 1 && *signed || z.iter().any(|v| v.fract() != 0.0) {
        return None;
    }
    let (sa, za) = (broadcast_axis(s.shape(), x.shape())?, broadcast_axis(z.shape(), x.shape())?);
    let axis = match (sa, za) {
        (Some(a), Some(b)) if a != b => return None,
        (a, b) => a.or(b),
    };
    let n = axis.map_or(1, |a| x.shape()[a]);
    let spread = |v: &ndarray::ArrayD<f32>| -> Vec<f32> {
        let flat: Vec<f32> = v.iter().copied().collect();
        if flat.len() == 1 {
            vec![flat[0]; n]
        } else {
            flat
        }
    };
    let overflow = if *signed && *narrow { Overflow::SatSym } else { Overflow::Sat };
    let format = FixedFormat { signed: *signed, width, frac: 0, rounding: Rounding::RndConv, overflow };
    let affine = Affine {
        scale: spread(&s),
        zero_point: spread(&z).into_iter().map(|v| v as i64).collect(),
        axis: axis.unwrap_or(0),
    };
    Some(QuantTensor::on_grid(format, codes.mapv(|c| c as i64), affine))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::ArrayD;

    #[test]
    fn per_axis_codes_dequantize_as_the_interpreter_does() {
        let mut w = BTreeMap::new();
        w.insert("s".to_string(), Tensor::F32(ArrayD::from_shape_vec(vec![2], vec![0.5f32, 0.037]).unwrap()));
        w.insert("z".to_string(), Tensor::I64(ArrayD::from_shape_vec(vec![2], vec![3i64, -2]).unwrap()));
        let codes = Tensor::I64(ArrayD::from_shape_vec(vec![3, 2], vec![1i64, 2, 3, 4, -5, 127]).unwrap());
        let q = folded_dequantize(QuantIntType::Int8, &codes, "s", Some(&"z".to_string()), -1, &w).unwrap();
        let want = crate::interp::quantize::dequantize_linear(
            &codes.to_i64(),
            &w["s"].to_f32(),
            Some(&w["z"].to_i64()),
            1,
        )
        .unwrap();
        assert_eq!(q.dequantize(), want);
        assert_eq!(q.affine.as_ref().unwrap().axis, 1);
        assert!(q.fixed().is_none());
    }

    /// `Cast(int8) · scale` keeps the codes on the scale's grid exactly when the scale is one
    /// value or varies along one axis of the codes, without changing their shape.
    #[test]
    fn cast_codes_times_a_scale_are_the_codes_on_its_grid() {
        let codes = Tensor::I64(ArrayD::from_shape_vec(vec![2, 3], vec![1i64, -2, 3, 127, -127, 0]).unwrap());
        let cast = cast_codes(QuantIntType::Int8, &codes);
        let f32s = |shape: Vec<usize>, v: Vec<f32>| Tensor::F32(ArrayD::from_shape_vec(shape, v).unwrap());
        let rows = scaled_codes(&cast, &f32s(vec![2, 1], vec![0.013, 0.0071])).unwrap();
        let want = codes.to_f32() * f32s(vec![2, 1], vec![0.013, 0.0071]).to_f32();
        assert_eq!(rows.dequantize(), want, "the float product the importer folds");
        assert_eq!(
            (rows.affine.as_ref().unwrap().axis, &rows.codes, rows.format),
            (0, &codes.to_i64(), cast.format)
        );
        let cols = scaled_codes(&cast, &f32s(vec![3], vec![0.5, 0.25, 0.125])).unwrap();
        assert_eq!(cols.affine.as_ref().unwrap().axis, 1);
        let one = scaled_codes(&cast, &f32s(vec![], vec![0.3])).unwrap();
        assert_eq!(one.affine.as_ref().unwrap().scale, [0.3]);
        // Not a grid: two varying axes, a negative scale, a product of another shape, codes that
        // already have a scale.
        assert!(scaled_codes(&cast, &f32s(vec![2, 3], vec![0.1; 6])).is_none());
        assert!(scaled_codes(&cast, &f32s(vec![2, 1], vec![0.1, -0.1])).is_none());
        assert!(scaled_codes(&cast, &f32s(vec![4, 1, 1], vec![0.1; 4])).is_none());
        assert!(scaled_codes(&rows, &f32s(vec![], vec![2.0])).is_none());
    }
}
