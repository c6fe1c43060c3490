//! Runtime-width fixed-point numerics with ap_fixed semantics.
//!
//! A [`FixedFormat`] is signed or unsigned, `width` bits in all (1..=64), `frac` fractional bits
//! (negative or larger than `width` allowed, as in ap_fixed), a [`Rounding`] mode applied when
//! bits below the LSB are dropped, and an [`Overflow`] mode applied when the value does not fit.
//! A value in the format is an integer code `c`, meaning `c × 2^-frac`.

use serde::{Deserialize, Serialize};

/// How bits below the LSB of the target format are dropped (ap_fixed's quantization modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Rounding {
    /// Truncate toward minus infinity (floor). MASE's hardware default.
    #[default]
    #[serde(rename = "TRN")]
    Trn,
    /// Truncate toward zero.
    #[serde(rename = "TRN_ZERO")]
    TrnZero,
    /// Round to nearest, ties toward plus infinity.
    #[serde(rename = "RND")]
    Rnd,
    /// Round to nearest, ties toward zero.
    #[serde(rename = "RND_ZERO")]
    RndZero,
    /// Round to nearest, ties away from zero.
    #[serde(rename = "RND_INF")]
    RndInf,
    /// Round to nearest, ties toward minus infinity.
    #[serde(rename = "RND_MIN_INF")]
    RndMinInf,
    /// Round to nearest, ties to even.
    #[serde(rename = "RND_CONV")]
    RndConv,
}

/// What happens when a value does not fit the target format (ap_fixed's overflow modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Overflow {
    /// Keep the low `width` bits (two's complement wrap-around).
    #[serde(rename = "WRAP")]
    Wrap,
    /// Saturate to the most positive or most negative code. MASE's hardware default.
    #[default]
    #[serde(rename = "SAT")]
    Sat,
    /// Overflowing values become zero.
    #[serde(rename = "SAT_ZERO")]
    SatZero,
    /// Saturate symmetrically: signed formats never produce the most negative code.
    #[serde(rename = "SAT_SYM")]
    SatSym,
}

/// A fixed-point format: signedness, total width, fractional bits and the two modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FixedFormat {
    /// Two's complement when true, unsigned otherwise.
    pub signed: bool,
    /// Total number of bits, 1..=64.
    pub width: u32,
    /// Number of fractional bits (may be negative or exceed `width`).
    pub frac: i32,
    /// Rounding applied when casting into this format.
    pub rounding: Rounding,
    /// Overflow handling applied when casting into this format.
    pub overflow: Overflow,
}

impl FixedFormat {
    /// A signed format with the hardware default modes (TRN, SAT).
    pub fn signed(width: u32, frac: i32) -> Self {
        FixedFormat { signed: true, width, frac, rounding: Rounding::Trn, overflow: Overflow::Sat }
    }
}
