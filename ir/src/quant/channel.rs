//! Per-channel weight precision: each output channel (row `o` of a `[out, in]` weight) gets its
//! own power-of-two scale, i.e. its own fraction width `f_o`, at the tensor's one bit width.
//!
//! Each channel's ideal fraction `f*_o` is the largest that holds its own exact range
//! ([`super::auto::frac_for_range`]). The hardware aligns channel `o`'s products by a left shift
//! `s_o = F − f_o` of at most `2^MAX_CHANNEL_SHIFT_BITS − 1` bits, so the tensor's fraction is
//! `F = min(max f*, min f* + 2^B − 1)` and `f_o = min(f*_o, F)`: channels whose ideal fraction
//! exceeds `F` give up only precision they could not use, never range. The tensor's
//! [`FixedFormat::frac`] is `F`; its codes of row `o` are at `f_o`.

use ndarray::{ArrayD, Axis};
use serde::Deserialize;

use super::auto::frac_for_range;
use super::quantize_f32;
use crate::fixed::FixedFormat;
use crate::tensor::QuantTensor;

/// Largest width, in bits, of a channel's alignment shift (the `linear` component's
/// `WEIGHT_SHIFT_WIDTH` range ends here): fraction widths spread over at most 15 bits.
pub const MAX_CHANNEL_SHIFT_BITS: u32 = 4;

/// How finely weights get their own fraction width (`weight_granularity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Granularity {
    /// One format for the whole tensor.
    #[default]
    PerTensor,
    /// One fraction width per output channel (row of a `[out, in]` linear weight).
    PerChannel,
}

impl std::str::FromStr for Granularity {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "per_tensor" => Ok(Granularity::PerTensor),
            "per_channel" => Ok(Granularity::PerChannel),
            other => Err(format!("weight_granularity = {other:?}: use \"per_tensor\" or \"per_channel\"")),
        }
    }
}

/// The fraction width of each row of the 2-D tensor `a` at `width` bits (see the module
/// documentation), and the tensor's fraction `F`.
pub fn channel_fracs(a: &ArrayD<f32>, width: u32) -> (Vec<i32>, i32) {
    let ideal: Vec<i32> = a
        .axis_iter(Axis(0))
        .map(|row| {
            let (lo, hi) = row
                .iter()
                .fold((0.0f64, 0.0f64), |(lo, hi), &x| (lo.min(f64::from(x)), hi.max(f64::from(x))));
            frac_for_range(lo, hi, width)
        })
        .collect();
    let lo = ideal.iter().copied().min().unwrap_or(0);
    let hi = ideal.iter().copied().max().unwrap_or(0);
    let top = hi.min(lo + (1 << MAX_CHANNEL_SHIFT_BITS) - 1);
    (ideal.into_iter().map(|f| f.min(top)).collect(), top)
}

/// Quantizes the 2-D tensor `a` per channel at `fmt`'s width, rounding and overflow (its
/// fraction is replaced by the channels' own); also the number of values that did not fit.
pub fn quantize_per_channel(a: &ArrayD<f32>, fmt: &FixedFormat) -> (QuantTensor, usize) {
    let (fracs, top) = channel_fracs(a, fmt.width);
    let mut codes = ArrayD::<i64>::zeros(a.raw_dim());
    let mut overflowed = 0;
    for ((o, row), mut out) in a.axis_iter(Axis(0)).enumerate().zip(codes.axis_iter_mut(Axis(0))) {
        let q = quantize_f32(&row.to_owned().into_dyn(), &FixedFormat { frac: fracs[o], ..*fmt });
        overflowed += q.overflowed;
        out.assign(&q.codes.into_shape_with_order(out.raw_dim()).expect("one row's shape"));
    }
    let q = QuantTensor {
        format: FixedFormat { frac: top, ..*fmt },
        codes,
        channel_frac: Some(fracs),
        affine: None,
    };
    (q, overflowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_keep_their_range_and_shifts_stay_within_the_hardware_limit() {
        // Row 0 reaches 3.9 (frac 5 at 8 bits), row 1 reaches 0.01 (frac 13), row 2 is zero.
        let a = ndarray::arr2(&[[3.9f32, -1.0], [0.01, -0.005], [0.0, 0.0]]).into_dyn();
        let (fracs, top) = channel_fracs(&a, 8);
        assert_eq!(fracs[0], frac_for_range(-1.0, 3.9, 8));
        assert_eq!(fracs[1], frac_for_range(-0.005, 0.01, 8));
        assert_eq!(top, *fracs.iter().max().unwrap());
        assert!(top - fracs.iter().min().unwrap() < 1 << MAX_CHANNEL_SHIFT_BITS);
        let (q, overflowed) = quantize_per_channel(&a, &FixedFormat::signed(8, 0));
        assert_eq!(overflowed, 0);
        let back = q.dequantize();
        for (x, y) in a.iter().zip(back.iter()) {
            assert!((x - y).abs() <= 2f32.powi(-fracs[0]), "{x} vs {y}");
        }
    }

    #[test]
    fn a_wide_spread_caps_the_finest_channels() {
        // 2^-20-sized row next to a row of magnitude 100: the spread exceeds 15 bits.
        let a = ndarray::arr2(&[[100.0f32], [1e-6]]).into_dyn();
        let (fracs, top) = channel_fracs(&a, 8);
        assert_eq!(top, fracs[0] + (1 << MAX_CHANNEL_SHIFT_BITS) - 1);
        assert_eq!(fracs[1], top);
    }
}
