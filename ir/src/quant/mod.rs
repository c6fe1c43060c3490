//! Fixed-point quantization of a MaseGraph: per-node format plans ([`plan`]), the MASE-style
//! TOML configuration of the `quantize` pass ([`config`]), precision choice from calibration
//! statistics ([`auto`], used by `auto_precision`), quantized execution ([`exec`]), accuracy
//! metrics ([`accuracy`]) and counts of the elements casts clipped or wrapped ([`saturation`]).
//!
//! A node's fixed-point formats live in its `common` metadata: `args["data_in_k"]`,
//! `args["weight"]`, `args["bias"]` and `results["data_out_0"]` get `type = "fixed"`,
//! `precision = [width, frac_width]`, the rounding and overflow modes and, for unsigned
//! formats, `unsigned = true`. Quantized weights are stored as integer codes with their format in
//! [`crate::MaseGraph::qweights`] under the same key as the float tensor.
//!
//! Defaults: activations (`data_in`, `data_out`) are cast with TRN + SAT (floor, then saturate:
//! the hardware convention); weights and biases, quantized once offline, with RND_CONV + SAT
//! (round half to even, as PyTorch's `round` in MASE's software quantizers).

pub mod accuracy;
pub mod affine;
pub mod auto;
pub mod channel;
pub mod config;
pub mod exec;
pub mod plan;
pub mod qlinear;
pub mod qonnx;
pub mod requant;
pub mod saturation;

pub use accuracy::{accuracy, AccuracyReport};
pub use exec::{run_quantized, run_quantized_counted, run_quantized_values, QValue};
pub use plan::{apply_plan, NodeFormats, Plan};
pub use saturation::{SaturationCounter, SaturationReport};

use ndarray::ArrayD;

/// Magnitude from which a float is taken for an additive-mask value rather than data:
/// exporters mask attention by adding `torch.finfo(float32).min` (−3.4028235e38) or −∞ at
/// padded key positions, which no trained activation comes near.
pub const MASK_MAGNITUDE: f32 = 1e30;

/// True for an additive-mask value (`|x| ≥` [`MASK_MAGNITUDE`], infinities included). Such
/// values are left out of calibration statistics (they would make every range useless), saturate
/// to the format's limits when quantized (the intended meaning: "as negative as representable"),
/// and are reported once as the mask's, not as saturation warnings.
pub fn is_mask_value(x: f32) -> bool {
    x.abs() >= MASK_MAGNITUDE
}

use crate::fixed::{from_f64, FixedFormat, Overflow, Rounding};
use crate::metadata::{TensorMeta, ValueType};

/// The fixed-point format of node `id`'s result `data_out_0`, if it records one.
pub fn result_format(g: &crate::graph::MaseGraph, id: crate::graph::NodeId) -> Option<FixedFormat> {
    g.node(id).meta.common.results.get("data_out_0").and_then(format_of)
}

/// The fixed-point format an argument or result records, if it is `fixed`.
pub fn format_of(tm: &TensorMeta) -> Option<FixedFormat> {
    if tm.ty != ValueType::Fixed || tm.precision.len() != 2 {
        return None;
    }
    Some(FixedFormat {
        signed: !tm.unsigned,
        width: u32::try_from(tm.precision[0]).ok()?,
        frac: i32::try_from(tm.precision[1]).ok()?,
        rounding: tm.rounding.unwrap_or(Rounding::Trn),
        overflow: tm.overflow.unwrap_or(Overflow::Sat),
    })
}

/// Records `fmt` in an argument or result entry (type, precision, modes, signedness); the shape
/// is kept.
pub fn set_format(tm: &mut TensorMeta, fmt: &FixedFormat) {
    tm.ty = ValueType::Fixed;
    tm.precision = vec![fmt.width as i64, fmt.frac as i64];
    tm.rounding = Some(fmt.rounding);
    tm.overflow = Some(fmt.overflow);
    tm.unsigned = !fmt.signed;
}

/// Result of quantizing one float tensor.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantizedData {
    /// The codes, same shape as the input.
    pub codes: ArrayD<i64>,
    /// How many values did not fit the format (handled by its overflow mode).
    pub overflowed: usize,
}

/// Quantizes float values into `fmt` exactly (each f32 is an exact double; see
/// [`crate::fixed::from_f64`]) and counts the values outside the format's range after
/// rounding (non-finite values count too; for a 64-bit format only those are detected).
pub fn quantize_f32(data: &ArrayD<f32>, fmt: &FixedFormat) -> QuantizedData {
    // The same rounding into a 64-bit saturating format tells whether the value fits.
    let wide = FixedFormat { signed: true, width: 64, overflow: Overflow::Sat, ..*fmt };
    let mut overflowed = 0;
    let codes = data.mapv(|x| {
        if !x.is_finite() || !fmt.contains_code(from_f64(f64::from(x), &wide)) {
            overflowed += 1;
        }
        from_f64(f64::from(x), fmt)
    });
    QuantizedData { codes, overflowed }
}

/// The values of codes in `fmt`, as f32 (exact while the code has at most 24 significant
/// bits and the value is in f32 range; otherwise the nearest f32).
pub fn dequantize(codes: &ArrayD<i64>, fmt: &FixedFormat) -> ArrayD<f32> {
    codes.mapv(|c| crate::fixed::to_f64(c, fmt) as f32)
}
