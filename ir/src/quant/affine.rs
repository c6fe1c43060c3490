//! Codes on affine grids: the integer weights of a model quantized with scales that are not
//! powers of two (ONNX `DequantizeLinear` of constant codes), kept as the model wrote them in
//! [`crate::MaseGraph::qweights`] with their [`Affine`] grid. The importer folds such a
//! `DequantizeLinear` into a float constant (its dequantized values) and records the codes here,
//! so the model's own integers stay available to the requantisation path
//! ([`super::requant`]) and to `mase info`.

use std::collections::BTreeMap;

use crate::fixed::{FixedFormat, Overflow, Rounding};
use crate::op::QuantIntType;
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
}
