//! QONNX `Quant` nodes as fixed-point formats: a quantizer with a power-of-two scale `2^-f` and
//! zero point 0 computes exactly a cast into a fixed-point format of its bit width and `f`
//! fraction bits (qonnx clips before rounding, which equals rounding then saturating because
//! the bounds are integers). Used by the importer (weight quantizers folded at import keep their
//! codes in [`crate::MaseGraph::qweights`]) and by the `raise_qonnx` pass (activation
//! quantizers become the formats of the values they quantize).
//!
//! Mapping: rounding `ROUND` → RND_CONV (half to even), `FLOOR` → TRN, `DOWN` → TRN_ZERO,
//! `HALF_UP` → RND_INF, `HALF_DOWN` → RND_ZERO; `CEIL` and `UP` have no fixed-point rounding
//! mode and are refused. Overflow: SAT, or SAT_SYM for a signed `narrow` quantizer (no most
//! negative code); unsigned `narrow` (largest code 2^w − 2) has no overflow mode and is refused,
//! as is a signed 1-bit quantizer (qonnx makes it bipolar, ±1).

use std::collections::BTreeMap;

use ndarray::ArrayD;

use crate::fixed::{FixedFormat, Overflow, Rounding};
use crate::interp::quantize::bit_width_value;
use crate::op::{Op, RoundingMode};
use crate::tensor::Tensor;

/// The fixed-point rounding mode equal to a QONNX rounding mode, if there is one.
pub fn rounding_of(mode: RoundingMode) -> Option<Rounding> {
    match mode {
        RoundingMode::Round => Some(Rounding::RndConv),
        RoundingMode::Floor => Some(Rounding::Trn),
        RoundingMode::Down => Some(Rounding::TrnZero),
        RoundingMode::HalfUp => Some(Rounding::RndInf),
        RoundingMode::HalfDown => Some(Rounding::RndZero),
        RoundingMode::Ceil | RoundingMode::Up => None,
    }
}

/// The `f` of a positive float32 `2^-f`, if `s` is exactly a power of two.
pub fn po2_frac(s: f32) -> Option<i32> {
    if !(s.is_finite() && s > 0.0) {
        return None;
    }
    let (code, frac) = crate::fixed::decompose_f64(f64::from(s))?;
    // code × 2^-frac with code odd after normalisation: a power of two when code is ±1 × 2^k.
    let tz = code.trailing_zeros() as i32;
    ((code >> tz) == 1).then_some(frac - tz)
}

/// The fixed-point format a QONNX `Quant` computes, or why it is not one: the scale must be one
/// power of two (per tensor), the zero point all zeros, the bit width 1 to 32 (not a signed
/// 1-bit quantizer), the rounding and narrow range expressible (see the module documentation).
/// Errors name the cause; the caller names the node.
pub fn quant_format(op: &Op, weights: &BTreeMap<String, Tensor>) -> Result<FixedFormat, String> {
    let Op::Quant { scale, zero_point, bit_width, signed, narrow, rounding } = op else {
        return Err("not a QONNX Quant".into());
    };
    let get = |k: &String| -> Result<ArrayD<f32>, String> {
        weights.get(k).map(Tensor::to_f32).ok_or_else(|| format!("its parameter '{k}' is missing"))
    };
    let (s, z, b) = (get(scale)?, get(zero_point)?, get(bit_width)?);
    let bw = bit_width_value("bit width", &b)?;
    let fracs: Vec<Option<i32>> = s.iter().map(|&v| po2_frac(v)).collect();
    let first = fracs.first().copied().flatten();
    let Some(frac) = first.filter(|f| fracs.iter().all(|g| *g == Some(*f))) else {
        let shown: Vec<f32> = s.iter().take(4).copied().collect();
        return Err(format!(
            "its scale {shown:?}{} is not one power of two: a float (or per-channel) scale is not a \
             fixed-point format and needs the requantisation path (integer codes with a scale and zero \
             point, a fixed-point multiplier at the output), which is not built yet",
            if s.len() > 4 { " …" } else { "" }
        ));
    };
    if z.iter().any(|&v| v != 0.0) {
        return Err("its zero point is not 0: an offset grid is not a fixed-point format and needs the \
             requantisation path (not built yet)"
            .into());
    }
    let rounding = rounding_of(*rounding).ok_or_else(|| {
        format!(
            "its rounding mode {} has no fixed-point rounding mode (supported: ROUND, FLOOR, DOWN, HALF_UP, \
             HALF_DOWN)",
            rounding.qonnx_name()
        )
    })?;
    if *signed && bw == 1.0 {
        return Err("it is a signed 1-bit (bipolar, ±1) quantizer, which is not a fixed-point format".into());
    }
    let overflow = match (*signed, *narrow) {
        (true, true) => Overflow::SatSym,
        (_, false) => Overflow::Sat,
        (false, true) => {
            return Err(
                "it is unsigned with narrow range (largest code 2^w − 2), which no overflow mode of the \
                        fixed-point formats gives"
                    .into(),
            )
        }
    };
    let fmt = FixedFormat { signed: *signed, width: bw as u32, frac, rounding, overflow };
    if !fmt.signed && fmt.width > 63 {
        return Err("an unsigned format is at most 63 bits wide".into());
    }
    Ok(fmt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::quantize::int_quant;
    use ndarray::arr0;

    fn quant(
        scale: Vec<f32>,
        zp: f32,
        bw: f32,
        signed: bool,
        narrow: bool,
        r: RoundingMode,
    ) -> (Op, BTreeMap<String, Tensor>) {
        let n = scale.len();
        let mut w = BTreeMap::new();
        w.insert("s".to_string(), Tensor::F32(ArrayD::from_shape_vec(vec![n], scale).unwrap()));
        w.insert("z".to_string(), Tensor::F32(arr0(zp).into_dyn()));
        w.insert("b".to_string(), Tensor::F32(arr0(bw).into_dyn()));
        let op = Op::Quant {
            scale: "s".into(),
            zero_point: "z".into(),
            bit_width: "b".into(),
            signed,
            narrow,
            rounding: r,
        };
        (op, w)
    }

    #[test]
    fn powers_of_two() {
        assert_eq!(po2_frac(0.25), Some(2));
        assert_eq!(po2_frac(8.0), Some(-3));
        assert_eq!(po2_frac(1.0), Some(0));
        assert_eq!(po2_frac(0.3), None);
        assert_eq!(po2_frac(-0.25), None);
        assert_eq!(po2_frac(0.0), None);
    }

    /// Every mappable quantizer: the cast into its format equals qonnx's `Quant` on a grid of
    /// values with every tie and both saturations.
    #[test]
    fn cast_equals_int_quant() {
        let xs: Vec<f32> = (-400..=400).map(|i| i as f32 / 16.0).collect();
        let x = ArrayD::from_shape_vec(vec![xs.len()], xs).unwrap();
        for r in RoundingMode::ALL {
            for (signed, narrow) in [(true, false), (true, true), (false, false)] {
                for (s, bw) in [(0.25f32, 4.0f32), (0.5, 8.0), (2.0, 3.0), (1.0, 2.0)] {
                    let (op, w) = quant(vec![s], 0.0, bw, signed, narrow, r);
                    let Ok(fmt) = quant_format(&op, &w) else {
                        assert!(matches!(r, RoundingMode::Ceil | RoundingMode::Up), "{r:?}");
                        continue;
                    };
                    let want = int_quant(
                        &x,
                        &w["s"].to_f32(),
                        &w["z"].to_f32(),
                        &w["b"].to_f32(),
                        signed,
                        narrow,
                        r,
                    )
                    .unwrap();
                    let got = crate::quant::dequantize(&crate::quant::quantize_f32(&x, &fmt).codes, &fmt);
                    assert_eq!(got, want, "{r:?} signed {signed} narrow {narrow} scale {s} bits {bw}");
                }
            }
        }
    }

    #[test]
    fn refusals_name_the_cause() {
        let err = |scale: Vec<f32>, zp, bw, signed, narrow, r| {
            let (op, w) = quant(scale, zp, bw, signed, narrow, r);
            quant_format(&op, &w).unwrap_err()
        };
        let r = RoundingMode::Round;
        assert!(err(vec![0.1], 0.0, 8.0, true, false, r).contains("requantisation path"));
        assert!(err(vec![0.25, 0.5], 0.0, 8.0, true, false, r).contains("not one power of two"));
        assert!(err(vec![0.25], 1.0, 8.0, true, false, r).contains("zero point"));
        assert!(err(vec![0.25], 0.0, 8.0, true, false, RoundingMode::Ceil).contains("CEIL"));
        assert!(err(vec![0.25], 0.0, 8.0, true, false, RoundingMode::Up).contains("UP"));
        assert!(err(vec![0.25], 0.0, 8.0, false, true, r).contains("narrow"));
        assert!(err(vec![0.25], 0.0, 1.0, true, false, r).contains("bipolar"));
        let (op, w) = quant(vec![0.25, 0.25], 0.0, 8.0, true, true, r);
        let f = quant_format(&op, &w).unwrap();
        assert_eq!((f.width, f.frac, f.overflow, f.rounding), (8, 2, Overflow::SatSym, Rounding::RndConv));
    }
}
