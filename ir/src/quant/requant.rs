//! Requantisation: integer codes with a real scale carried into codes of another real scale, in
//! integer arithmetic only.
//!
//! A model quantized with scales that are not powers of two (onnxruntime's QDQ, Brevitas float
//! scales) gives each tensor integer codes `q` meaning `(q − z) · s`. A linear layer on codes
//! accumulates `acc = Σ (q_x − z_x) · q_w + q_b` exactly; the real sum is `acc · s_x · s_w[j]`
//! for output channel `j` (the bias codes at that scale), so the output codes are
//! `sat(round(acc · M[j]) + z_y)` with the real multiplier `M[j] = s_x · s_w[j] / s_y`.
//!
//! The hardware holds `M[j]` as a fixed-point number `m[j] · 2^-shift`: `m[j]` an unsigned
//! integer below `2^`[`MULTIPLIER_BITS`], rounded to nearest (ties to even) from the exact
//! `M[j]` (computed in f64 from the float32 scales, which it holds exactly to 2^-48 relative),
//! and one `shift` per tensor, the largest that keeps the largest `m[j]` below the bound. Then
//! [`apply`] forms `acc · m[j]` exactly, rounds it half to even at `shift` fraction bits (as the
//! reference `QuantizeLinear` rounds), adds the zero point and saturates into the code format.
//!
//! What "exact" means: [`apply`] is the hardware's arithmetic bit for bit (the golden model).
//! Against the real-valued `round(acc · M[j])` it differs only where `acc · M[j]` lies within
//! `|acc| · |M[j] − m[j] · 2^-shift|` (at most `|acc| · 2^-(shift+1)`) of a rounding tie, and
//! then by one code. With 24-bit multipliers and outputs of 8 bits that window is below 2^-15
//! of a code; the reference tools' own float32 arithmetic rounds within a comparable window.

use crate::fixed::{cast_code, FixedFormat, Overflow, Rounding};

/// Bits of a requantisation multiplier (unsigned): one 18×18 DSP per 17 bits of the product.
pub const MULTIPLIER_BITS: u32 = 24;

/// Fixed-point requantisation multipliers: channel `j` multiplies by `multiplier[j] · 2^-shift`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requant {
    /// One unsigned multiplier per channel (one for a per-tensor scale), each below
    /// `2^`[`MULTIPLIER_BITS`].
    pub multiplier: Vec<i64>,
    /// Fraction bits of every multiplier.
    pub shift: i32,
}

/// The multipliers for the real factors `real` (positive and finite; see the module
/// documentation for the rounding). An error names the first factor that is not.
pub fn requant_for(real: &[f64]) -> Result<Requant, String> {
    if let Some(bad) = real.iter().find(|m| !(m.is_finite() && **m > 0.0)) {
        return Err(format!("requantisation factor {bad} is not a positive finite number"));
    }
    let max = real.iter().copied().fold(0.0f64, f64::max);
    if max == 0.0 {
        return Err("requantisation needs at least one factor".into());
    }
    // The largest shift with max · 2^shift < 2^MULTIPLIER_BITS after rounding.
    let mut shift = MULTIPLIER_BITS as i32 - 1 - max.log2().floor() as i32;
    let top = |s: i32| (max * 2f64.powi(s)).round_ties_even();
    while top(shift) >= 2f64.powi(MULTIPLIER_BITS as i32) {
        shift -= 1;
    }
    while top(shift + 1) < 2f64.powi(MULTIPLIER_BITS as i32) {
        shift += 1;
    }
    let multiplier = real.iter().map(|m| (m * 2f64.powi(shift)).round_ties_even() as i64).collect();
    Ok(Requant { multiplier, shift })
}

/// The requantised code of the exact sum `acc · 2^-acc_frac` for a channel with multiplier `m`
/// (of `r`): `acc · m` rounded half to even at `acc_frac + r.shift` fraction bits, plus
/// `zero_point`, then `out`'s overflow mode (its fraction is taken as 0).
pub fn apply(acc: i128, acc_frac: i32, m: i64, r: &Requant, zero_point: i64, out: &FixedFormat) -> i64 {
    let wide = FixedFormat {
        signed: true,
        width: 64,
        frac: 0,
        rounding: Rounding::RndConv,
        overflow: Overflow::Sat,
    };
    let rounded = cast_code(acc.saturating_mul(i128::from(m)), acc_frac + r.shift, &wide);
    cast_code(i128::from(rounded) + i128::from(zero_point), 0, &FixedFormat { frac: 0, ..*out })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic stream of pseudo-random u64 (a linear congruential generator).
    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        *seed >> 11
    }

    #[test]
    fn multipliers_use_every_bit_of_the_largest() {
        let r = requant_for(&[0.0123, 0.5, 1e-4, 3.75]).unwrap();
        let top = *r.multiplier.iter().max().unwrap();
        assert!((1 << (MULTIPLIER_BITS - 1)..1 << MULTIPLIER_BITS).contains(&top), "{r:?}");
        for (m, want) in r.multiplier.iter().zip([0.0123, 0.5, 1e-4, 3.75]) {
            let got = *m as f64 * 2f64.powi(-r.shift);
            assert!((got - want).abs() <= 2f64.powi(-r.shift - 1), "{got} vs {want}");
        }
        assert!(requant_for(&[0.5, -1.0]).is_err());
        assert!(requant_for(&[f64::NAN]).is_err());
        assert!(requant_for(&[]).is_err());
    }

    /// `apply` equals the real-valued rounding except inside the window the module documentation
    /// states, and there by one code.
    #[test]
    fn apply_rounds_the_real_product_outside_the_tie_window() {
        let out = FixedFormat::unsigned(8, 0);
        let mut seed = 7u64;
        let mut windowed = 0;
        for _ in 0..200_000 {
            let m_real = (lcg(&mut seed) % 1_000_000 + 1) as f64 * 1e-8;
            let r = requant_for(&[m_real]).unwrap();
            let acc = (lcg(&mut seed) % 4_000_001) as i128 - 2_000_000;
            let zp = (lcg(&mut seed) % 256) as i64;
            let got = apply(acc, 0, r.multiplier[0], &r, zp, &out);
            let real = acc as f64 * m_real;
            let want = (real.round_ties_even() as i64 + zp).clamp(0, 255);
            let err = (acc as f64).abs() * (m_real - r.multiplier[0] as f64 * 2f64.powi(-r.shift)).abs();
            let to_tie = (real - real.floor() - 0.5).abs();
            if got != want {
                assert!(to_tie <= err + 1e-9, "acc {acc} M {m_real}: {got} vs {want}, tie distance {to_tie}");
                assert_eq!((got - want).abs(), 1);
                windowed += 1;
            }
        }
        assert!(windowed < 20, "{windowed} results in the tie window");
    }

    #[test]
    fn zero_point_is_added_after_rounding_and_before_saturation() {
        let r = Requant { multiplier: vec![1 << 20], shift: 21 };
        // acc · 0.5: 3 → 1.5 → 2 (ties to even), + 1 → 3 (rounding 1.5 + 1 = 2.5 would give 2).
        assert_eq!(apply(3, 0, r.multiplier[0], &r, 1, &FixedFormat::unsigned(8, 0)), 3);
        assert_eq!(apply(1000, 0, r.multiplier[0], &r, 0, &FixedFormat::unsigned(8, 0)), 255);
        assert_eq!(apply(-1000, 0, r.multiplier[0], &r, 0, &FixedFormat::signed(8, 0)), -128);
        let narrow = FixedFormat::signed(8, 0).with_modes(Rounding::RndConv, Overflow::SatSym);
        assert_eq!(apply(-1000, 0, r.multiplier[0], &r, 0, &narrow), -127);
    }
}
