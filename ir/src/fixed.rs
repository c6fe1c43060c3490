//! Runtime-width fixed-point numerics with ap_fixed semantics.
//!
//! A [`FixedFormat`] is signed or unsigned, `width` bits in all (1..=64 signed, 1..=63 unsigned,
//! see [`FixedFormat::validate`]), `frac` fractional bits (negative or larger than `width`
//! allowed, as in ap_fixed), a [`Rounding`] mode applied when bits below the LSB are dropped, and
//! an [`Overflow`] mode applied when the value does not fit. A value in the format is an integer
//! code `c`, meaning `c × 2^-frac`. In ap_fixed terms, `ap_fixed<W, I, Q, O>` is
//! `FixedFormat { signed: true, width: W, frac: W - I, rounding: Q, overflow: O }` (saturation
//! bit count `N` = 0).
//!
//! # Casting
//!
//! Every conversion into a format is one exact two-step operation, bit-identical to assigning
//! to an `ap_[u]fixed` variable:
//! 1. **quantization**: the exact source value `x` (an integer code at some fractional bit
//!    count, or a double, which is an exact dyadic rational) is scaled to `x × 2^frac` and made
//!    an integer `n` by the [`Rounding`] mode (only when bits are dropped; a left shift is exact);
//! 2. **overflow**: if `n` is outside `[min_code, max_code]` the [`Overflow`] mode decides.
//!
//! No float arithmetic happens on the way: [`cast_code`] works on integers only and
//! [`from_f64`] decomposes the double into mantissa and exponent first. Shifts of any size
//! (also beyond 127 bits) are handled without panics.
//!
//! # Exact arithmetic
//!
//! [`add`], [`sub`], [`mul`] and [`accumulate`] return the exact full-precision result as an
//! `(i128 code, frac)` pair, which is then cast into the result format with [`cast_code`]: the
//! hardware datapath computes the same full-precision value and rounds once at the output.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How bits below the LSB of the target format are dropped (ap_fixed's quantization modes).
///
/// Worked examples cast to an integer format (`frac = 0`); the inputs are the values
/// 2.5, 2.25, -2.5 and -2.25 (codes 10, 9, -10, -9 at 2 fractional bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Rounding {
    /// Truncate toward minus infinity (floor): drop the bits. MASE's hardware default.
    /// 2.5 → 2, 2.25 → 2, -2.5 → -3, -2.25 → -3.
    #[default]
    #[serde(rename = "TRN")]
    Trn,
    /// Truncate toward zero. 2.5 → 2, 2.25 → 2, -2.5 → -2, -2.25 → -2.
    #[serde(rename = "TRN_ZERO")]
    TrnZero,
    /// Round to nearest, ties toward plus infinity (add half an LSB, floor).
    /// 2.5 → 3, 2.25 → 2, -2.5 → -2, -2.25 → -2.
    #[serde(rename = "RND")]
    Rnd,
    /// Round to nearest, ties toward zero. 2.5 → 2, 2.25 → 2, -2.5 → -2, -2.25 → -2;
    /// 2.75 → 3.
    #[serde(rename = "RND_ZERO")]
    RndZero,
    /// Round to nearest, ties away from zero. 2.5 → 3, 2.25 → 2, -2.5 → -3, -2.25 → -2.
    #[serde(rename = "RND_INF")]
    RndInf,
    /// Round to nearest, ties toward minus infinity. 2.5 → 2, 2.25 → 2, -2.5 → -3, -2.25 → -2.
    #[serde(rename = "RND_MIN_INF")]
    RndMinInf,
    /// Round to nearest, ties to the even code (convergent rounding).
    /// 2.5 → 2, 3.5 → 4, 2.25 → 2, -2.5 → -2, -3.5 → -4.
    #[serde(rename = "RND_CONV")]
    RndConv,
}

/// What happens when a value does not fit the target format (ap_fixed's overflow modes, with
/// zero saturation bits).
///
/// Worked examples for a signed 4-bit integer format (codes -8..=7) and an unsigned one
/// (0..=15), after rounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Overflow {
    /// Keep the low `width` bits of the two's complement value; signed formats sign-extend
    /// them. Signed 4-bit: 9 → -7, -9 → 7, 16 → 0. Unsigned 4-bit: 17 → 1, -1 → 15.
    #[serde(rename = "WRAP")]
    Wrap,
    /// Saturate to the most positive or most negative code. MASE's hardware default.
    /// Signed 4-bit: 9 → 7, -9 → -8. Unsigned 4-bit: 17 → 15, -1 → 0.
    #[default]
    #[serde(rename = "SAT")]
    Sat,
    /// Values that do not fit become zero. Signed 4-bit: 9 → 0, -9 → 0, -8 → -8.
    /// Unsigned 4-bit: 17 → 0, -1 → 0.
    #[serde(rename = "SAT_ZERO")]
    SatZero,
    /// Saturate symmetrically: a signed format of width ≥ 2 never produces its most negative
    /// code, which is replaced by `-max` even when the value is exactly representable (as
    /// ap_fixed does). Signed 4-bit: 9 → 7, -9 → -7, -8 → -7. Unsigned formats have nothing to
    /// mirror: SAT_SYM is SAT there (17 → 15, -1 → 0), and so it is for signed width 1
    /// (codes -1 and 0), where ap_fixed also keeps -1.
    #[serde(rename = "SAT_SYM")]
    SatSym,
}

impl Rounding {
    /// Every mode, in declaration order.
    pub const ALL: [Rounding; 7] = [
        Rounding::Trn,
        Rounding::TrnZero,
        Rounding::Rnd,
        Rounding::RndZero,
        Rounding::RndInf,
        Rounding::RndMinInf,
        Rounding::RndConv,
    ];

    /// The ap_fixed name without the `AP_` prefix, e.g. `RND_CONV`.
    pub fn name(self) -> &'static str {
        match self {
            Rounding::Trn => "TRN",
            Rounding::TrnZero => "TRN_ZERO",
            Rounding::Rnd => "RND",
            Rounding::RndZero => "RND_ZERO",
            Rounding::RndInf => "RND_INF",
            Rounding::RndMinInf => "RND_MIN_INF",
            Rounding::RndConv => "RND_CONV",
        }
    }
}

impl Overflow {
    /// Every mode, in declaration order.
    pub const ALL: [Overflow; 4] = [Overflow::Wrap, Overflow::Sat, Overflow::SatZero, Overflow::SatSym];

    /// The ap_fixed name without the `AP_` prefix, e.g. `SAT_SYM`.
    pub fn name(self) -> &'static str {
        match self {
            Overflow::Wrap => "WRAP",
            Overflow::Sat => "SAT",
            Overflow::SatZero => "SAT_ZERO",
            Overflow::SatSym => "SAT_SYM",
        }
    }
}

impl fmt::Display for Rounding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Overflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Strips an optional `AP_` prefix and upper-cases, so `rnd_conv`, `RND_CONV` and `AP_RND_CONV`
/// name the same mode.
fn mode_key(s: &str) -> String {
    let up = s.trim().to_ascii_uppercase();
    up.strip_prefix("AP_").map(str::to_string).unwrap_or(up)
}

/// The mode of `all` named `s` (see [`mode_key`]); the error names the `kind` of mode and lists
/// the valid names.
fn parse_mode<M: Copy>(s: &str, all: &[M], name: fn(M) -> &'static str, kind: &str) -> Result<M, String> {
    let k = mode_key(s);
    all.iter().copied().find(|&m| name(m) == k).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|&m| name(m)).collect();
        format!("unknown {kind} mode '{s}'; valid modes: {}", names.join(", "))
    })
}

impl FromStr for Rounding {
    type Err = String;
    /// Parses a mode name (case-insensitive, optional `AP_` prefix); the error lists the valid
    /// names.
    fn from_str(s: &str) -> Result<Self, String> {
        parse_mode(s, &Rounding::ALL, Rounding::name, "rounding")
    }
}

impl FromStr for Overflow {
    type Err = String;
    /// Parses a mode name (case-insensitive, optional `AP_` prefix); the error lists the valid
    /// names.
    fn from_str(s: &str) -> Result<Self, String> {
        parse_mode(s, &Overflow::ALL, Overflow::name, "overflow")
    }
}

/// A fixed-point format: signedness, total width, fractional bits and the two modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FixedFormat {
    /// Two's complement when true, unsigned otherwise.
    pub signed: bool,
    /// Total number of bits, 1..=64 (unsigned: 1..=63).
    pub width: u32,
    /// Number of fractional bits (may be negative or exceed `width`).
    pub frac: i32,
    /// Rounding applied when casting into this format.
    pub rounding: Rounding,
    /// Overflow handling applied when casting into this format.
    pub overflow: Overflow,
}

/// Largest magnitude of [`FixedFormat::frac`] that [`FixedFormat::validate`] accepts; keeps
/// every sum of two fractional bit counts inside `i32`.
pub const MAX_FRAC_MAGNITUDE: i32 = 1 << 24;

impl FixedFormat {
    /// A signed format with the hardware default modes (TRN, SAT).
    pub fn signed(width: u32, frac: i32) -> Self {
        FixedFormat { signed: true, width, frac, rounding: Rounding::Trn, overflow: Overflow::Sat }
    }

    /// An unsigned format with the hardware default modes (TRN, SAT).
    pub fn unsigned(width: u32, frac: i32) -> Self {
        FixedFormat { signed: false, ..FixedFormat::signed(width, frac) }
    }

    /// The same format with other modes.
    pub fn with_modes(self, rounding: Rounding, overflow: Overflow) -> Self {
        FixedFormat { rounding, overflow, ..self }
    }

    /// Checks the format: width 1..=64 for signed formats and 1..=63 for unsigned ones (codes
    /// are held in `i64`, so an unsigned 64-bit code would not fit), and `|frac| ≤ 2^24`.
    /// The message says what is allowed.
    pub fn validate(&self) -> Result<(), String> {
        let max_w = if self.signed { 64 } else { 63 };
        if self.width == 0 || self.width > max_w {
            return Err(format!(
                "{} width {} is out of range: supported widths are 1..={max_w}{}",
                if self.signed { "signed" } else { "unsigned" },
                self.width,
                if self.signed { "" } else { " (codes are held in i64)" }
            ));
        }
        if self.frac.unsigned_abs() > MAX_FRAC_MAGNITUDE as u32 {
            return Err(format!(
                "fractional width {} is out of range: supported is -{MAX_FRAC_MAGNITUDE}..={MAX_FRAC_MAGNITUDE}",
                self.frac
            ));
        }
        Ok(())
    }

    /// The most negative code: `-2^(width-1)` when signed, 0 when unsigned. Under SAT_SYM a
    /// signed cast never produces it (see [`Overflow::SatSym`]) but it is still a code of the
    /// format.
    pub fn min_code(&self) -> i64 {
        if self.signed {
            (-1i128 << (self.width.clamp(1, 64) - 1)) as i64
        } else {
            0
        }
    }

    /// The most positive code: `2^(width-1) - 1` when signed, `2^width - 1` when unsigned.
    pub fn max_code(&self) -> i64 {
        let w = self.width.clamp(1, 64);
        let bits = if self.signed { w - 1 } else { w.min(63) };
        ((1i128 << bits) - 1) as i64
    }

    /// The weight of one code step, `2^-frac`.
    pub fn lsb(&self) -> f64 {
        pow2(-(self.frac as i64))
    }

    /// True when `code` is a code of this format.
    pub fn contains_code(&self, code: i64) -> bool {
        (self.min_code()..=self.max_code()).contains(&code)
    }

    /// MASE's `precision` metadata: `[width, frac_width]`.
    pub fn precision(&self) -> [i64; 2] {
        [self.width as i64, self.frac as i64]
    }

    /// Casts a code of this format into `to` (see [`cast_code`]).
    pub fn cast_to(&self, code: i64, to: &FixedFormat) -> i64 {
        cast_code(code as i128, self.frac, to)
    }
}

impl FixedFormat {
    /// `s16.8 TRN SAT`: the [`fmt::Display`] form without the `fixed<…>` wrapper, for tables.
    pub fn short(&self) -> String {
        let s = self.to_string();
        s["fixed<".len()..s.len() - 1].to_string()
    }
}

impl fmt::Display for FixedFormat {
    /// `fixed<s16.8 TRN SAT>`: sign, width, fractional bits, modes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fixed<{}{}.{} {} {}>",
            if self.signed { "s" } else { "u" },
            self.width,
            self.frac,
            self.rounding,
            self.overflow
        )
    }
}

/// `2^e` as f64, exact whenever the result is a normal or subnormal double (0 or infinity
/// beyond that).
fn pow2(e: i64) -> f64 {
    if e > 1023 {
        f64::INFINITY
    } else if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else if e >= -1074 {
        f64::from_bits(1u64 << (e + 1074))
    } else {
        0.0
    }
}

/// The integer part of a scaled value and where the dropped remainder lies.
struct Quotient {
    /// floor(code / 2^shift).
    floor: i128,
    /// Remainder compared with half an LSB (`Less` also when the remainder is zero).
    vs_half: Ordering,
    /// True when the remainder is not zero (bits were lost).
    inexact: bool,
}

/// floor division of `code` by `2^shift` (shift ≥ 1, any size) with the remainder classified.
fn divide_pow2(code: i128, shift: u64) -> Quotient {
    if code == 0 {
        return Quotient { floor: 0, vs_half: Ordering::Less, inexact: false };
    }
    if shift <= 127 {
        let floor = code >> shift;
        let mask: u128 = (1u128 << shift) - 1;
        let rem = (code as u128) & mask;
        let half = 1u128 << (shift - 1);
        Quotient { floor, vs_half: rem.cmp(&half), inexact: rem != 0 }
    } else if shift == 128 {
        // remainder = code + 2^128·[code < 0] = the two's complement bits of code as u128.
        let floor = if code < 0 { -1 } else { 0 };
        Quotient { floor, vs_half: (code as u128).cmp(&(1u128 << 127)), inexact: true }
    } else {
        // |code| ≤ 2^127 < 2^(shift-1): a positive code is below half an LSB, a negative one
        // (remainder 2^shift + code) above it.
        if code < 0 {
            Quotient { floor: -1, vs_half: Ordering::Greater, inexact: true }
        } else {
            Quotient { floor: 0, vs_half: Ordering::Less, inexact: true }
        }
    }
}

/// The integer `n` a rounding mode makes of `code × 2^-shift` (shift ≥ 1).
fn round_shift(code: i128, shift: u64, mode: Rounding) -> i128 {
    let q = divide_pow2(code, shift);
    let neg = code < 0;
    let up = match mode {
        Rounding::Trn => false,
        Rounding::TrnZero => neg && q.inexact,
        Rounding::Rnd => q.vs_half != Ordering::Less,
        Rounding::RndZero => q.vs_half == Ordering::Greater || (q.vs_half == Ordering::Equal && neg),
        Rounding::RndInf => q.vs_half == Ordering::Greater || (q.vs_half == Ordering::Equal && !neg),
        Rounding::RndMinInf => q.vs_half == Ordering::Greater,
        Rounding::RndConv => {
            q.vs_half == Ordering::Greater || (q.vs_half == Ordering::Equal && q.floor & 1 == 1)
        }
    };
    // `up` implies a non-zero remainder, so floor < code / 2 and the increment cannot overflow.
    q.floor + up as i128
}

/// The rounded integer before the overflow step: its value clamped to ±2^126 (enough to order
/// it against any 64-bit format's range) and its low 64 bits (enough to wrap it).
struct Rounded {
    clamped: i128,
    low: u64,
}

/// Exact re-quantization of `code × 2^-from_frac` into the format `to`: rounding by
/// `to.rounding` when bits are dropped, then `to.overflow` when the result does not fit
/// (ap_fixed semantics; see the module documentation and each mode's worked example).
///
/// Any shift works, including shifts of more than 127 bits in either direction. `to` should
/// satisfy [`FixedFormat::validate`]; a width outside 1..=64 is clamped into it rather than
/// panicking.
pub fn cast_code(code: i128, from_frac: i32, to: &FixedFormat) -> i64 {
    let shift = from_frac as i64 - to.frac as i64;
    let r = scale(code, shift, to.rounding);
    apply_overflow(&r, to)
}

/// `code × 2^-shift` rounded to an integer (see [`Rounded`]).
fn scale(code: i128, shift: i64, mode: Rounding) -> Rounded {
    const BIG: i128 = 1i128 << 126;
    match shift.cmp(&0) {
        Ordering::Equal => Rounded { clamped: code.clamp(-BIG, BIG), low: code as u64 },
        Ordering::Greater => {
            let n = round_shift(code, shift as u64, mode);
            Rounded { clamped: n.clamp(-BIG, BIG), low: n as u64 }
        }
        Ordering::Less => {
            let s = shift.unsigned_abs();
            if code == 0 {
                return Rounded { clamped: 0, low: 0 };
            }
            let low = if s >= 64 { 0 } else { (code as u64) << s };
            let fits = s < 126 && {
                let lim = 1i128 << (126 - s);
                (-lim..lim).contains(&code)
            };
            let clamped = if fits {
                code << s
            } else if code < 0 {
                -BIG
            } else {
                BIG
            };
            Rounded { clamped, low }
        }
    }
}

fn apply_overflow(r: &Rounded, to: &FixedFormat) -> i64 {
    let (min, max) = (to.min_code() as i128, to.max_code() as i128);
    let w = to.width.clamp(1, 64);
    match to.overflow {
        Overflow::Wrap => {
            if (min..=max).contains(&r.clamped) {
                return r.clamped as i64;
            }
            if w == 64 {
                return r.low as i64;
            }
            let low = r.low & ((1u64 << w) - 1);
            if to.signed && (low >> (w - 1)) & 1 == 1 {
                (low | !((1u64 << w) - 1)) as i64
            } else {
                low as i64
            }
        }
        Overflow::Sat => r.clamped.clamp(min, max) as i64,
        Overflow::SatZero => {
            if (min..=max).contains(&r.clamped) {
                r.clamped as i64
            } else {
                0
            }
        }
        Overflow::SatSym => {
            let lo = if to.signed && w >= 2 { -max } else { min };
            r.clamped.clamp(lo, max) as i64
        }
    }
}

/// Decomposes a finite non-zero double into `(code, frac)` with value `code × 2^-frac`, exact.
/// Infinity is `±1 × 2^1024`, as ap_fixed reads it (exponent field all ones, implicit one);
/// NaN gives `None`.
pub fn decompose_f64(x: f64) -> Option<(i128, i32)> {
    if x.is_nan() {
        return None;
    }
    let bits = x.to_bits();
    let neg = bits >> 63 == 1;
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let man = bits & ((1u64 << 52) - 1);
    let (m, frac) = if exp == 0x7ff {
        (1i128, -1024)
    } else if exp == 0 {
        (man as i128, 1074)
    } else {
        ((man | (1u64 << 52)) as i128, 1075 - exp)
    };
    Some((if neg { -m } else { m }, frac))
}

/// Converts a double into the format `to` exactly as assigning it to an `ap_[u]fixed` does:
/// the double is an exact dyadic rational and is re-quantized with [`cast_code`], with no
/// float rounding on the way.
///
/// Special values: ±0 → 0; ±infinity → the value ±2^1024 (what ap_fixed makes of it: SAT gives
/// the extreme code, SAT_ZERO 0, WRAP the low bits, 0 for any format with `frac` > -961);
/// NaN → 0 (ap_fixed only warns and reinterprets the bits; we define NaN as 0 and callers that
/// care check [`f64::is_nan`] first). Subnormal doubles are taken at their exact value
/// (ap_fixed assumes an implicit one for them; the two differ only for formats with more than
/// about 1020 fractional bits).
pub fn from_f64(x: f64, to: &FixedFormat) -> i64 {
    match decompose_f64(x) {
        None => 0,
        Some((code, frac)) => cast_code(code, frac, to),
    }
}

/// The value of `code` in `fmt`, `code × 2^-frac`, as the nearest double (exact when `|code| ≤
/// 2^53` and the value is within the double range).
pub fn to_f64(code: i64, fmt: &FixedFormat) -> f64 {
    wide_to_f64(code as i128, fmt.frac)
}

/// The value `code × 2^-frac` of a wide intermediate as a double (rounded once when the code
/// has more than 53 significant bits, then scaled exactly by powers of two).
pub fn wide_to_f64(code: i128, frac: i32) -> f64 {
    let mut v = code as f64;
    // Scale in steps so intermediate powers of two stay representable.
    let mut e = -(frac as i64);
    while e != 0 && v != 0.0 && v.is_finite() {
        let step = e.clamp(-1000, 1000);
        v *= pow2(step);
        e -= step;
    }
    v
}

/// `a` and `b` as `i128` codes aligned to the finer of their fractional bit counts, with that
/// count; `None` when the counts differ by more than 63 (a shifted code could then need more than
/// 128 bits).
fn align(a: i64, a_frac: i32, b: i64, b_frac: i32) -> Option<(i128, i128, i32)> {
    let f = a_frac.max(b_frac);
    let da = (f as i64 - a_frac as i64) as u32;
    let db = (f as i64 - b_frac as i64) as u32;
    if da > 63 || db > 63 {
        return None;
    }
    Some(((a as i128) << da, (b as i128) << db, f))
}

/// Exact `a × 2^-a_frac + b × 2^-b_frac`, aligned to the finer of the two fractional bit
/// counts: `(code, max(a_frac, b_frac))`. `None` when the fractional bit counts differ by more
/// than 63 (the exact sum could then need more than 128 bits).
pub fn add(a: i64, a_frac: i32, b: i64, b_frac: i32) -> Option<(i128, i32)> {
    align(a, a_frac, b, b_frac).map(|(a, b, f)| (a + b, f))
}

/// Exact `a × 2^-a_frac - b × 2^-b_frac` (see [`add`]).
pub fn sub(a: i64, a_frac: i32, b: i64, b_frac: i32) -> Option<(i128, i32)> {
    align(a, a_frac, b, b_frac).map(|(a, b, f)| (a - b, f))
}

/// Exact product: `(a × b, a_frac + b_frac)`. The code always fits (|a × b| ≤ 2^126); `None`
/// only when the fractional bit counts overflow `i32` (impossible for validated formats).
pub fn mul(a: i64, a_frac: i32, b: i64, b_frac: i32) -> Option<(i128, i32)> {
    Some((a as i128 * b as i128, a_frac.checked_add(b_frac)?))
}

/// Exact sum of products `Σ aᵢ × bᵢ` at `a_frac + b_frac` fractional bits: the dot product a
/// linear layer's multiply-accumulate tree computes before its single output cast.
///
/// Width bound: with `a` codes of `Wa` bits and `b` codes of `Wb` bits (signed), each product
/// needs `Wa + Wb` bits and a sum of `N` products `Wa + Wb + ⌈log2 N⌉` bits; the i128
/// accumulator is exact while that is ≤ 128 (e.g. 16×16-bit operands: N up to 2^96; 32×32:
/// up to 2^64). Every step is checked, so a sum that does not fit gives `None` instead of a
/// wrong value.
pub fn accumulate<I>(pairs: I, a_frac: i32, b_frac: i32) -> Option<(i128, i32)>
where
    I: IntoIterator<Item = (i64, i64)>,
{
    let mut acc: i128 = 0;
    for (a, b) in pairs {
        acc = acc.checked_add(a as i128 * b as i128)?;
    }
    Some((acc, a_frac.checked_add(b_frac)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int4(signed: bool, r: Rounding, o: Overflow) -> FixedFormat {
        FixedFormat { signed, width: 4, frac: 0, rounding: r, overflow: o }
    }

    #[test]
    fn short_form_drops_the_wrapper() {
        let f = FixedFormat::unsigned(8, -2).with_modes(Rounding::RndConv, Overflow::SatSym);
        assert_eq!(f.to_string(), "fixed<u8.-2 RND_CONV SAT_SYM>");
        assert_eq!(f.short(), "u8.-2 RND_CONV SAT_SYM");
    }

    #[test]
    fn documented_rounding_examples() {
        // codes at 2 fractional bits: 2.5, 2.25, -2.5, -2.25, 3.5, -3.5, 2.75
        let xs = [10i128, 9, -10, -9, 14, -14, 11];
        let want: [(Rounding, [i64; 7]); 7] = [
            (Rounding::Trn, [2, 2, -3, -3, 3, -4, 2]),
            (Rounding::TrnZero, [2, 2, -2, -2, 3, -3, 2]),
            (Rounding::Rnd, [3, 2, -2, -2, 4, -3, 3]),
            (Rounding::RndZero, [2, 2, -2, -2, 3, -3, 3]),
            (Rounding::RndInf, [3, 2, -3, -2, 4, -4, 3]),
            (Rounding::RndMinInf, [2, 2, -3, -2, 3, -4, 3]),
            (Rounding::RndConv, [2, 2, -2, -2, 4, -4, 3]),
        ];
        for (mode, expect) in want {
            let f = FixedFormat { signed: true, width: 8, frac: 0, rounding: mode, overflow: Overflow::Sat };
            let got: Vec<i64> = xs.iter().map(|&c| cast_code(c, 2, &f)).collect();
            assert_eq!(got, expect, "{mode}");
        }
    }

    #[test]
    fn documented_overflow_examples() {
        let s = |o| int4(true, Rounding::Trn, o);
        let u = |o| int4(false, Rounding::Trn, o);
        let c = |v: i128, f: &FixedFormat| cast_code(v, 0, f);
        assert_eq!(
            [c(9, &s(Overflow::Wrap)), c(-9, &s(Overflow::Wrap)), c(16, &s(Overflow::Wrap))],
            [-7, 7, 0]
        );
        assert_eq!([c(17, &u(Overflow::Wrap)), c(-1, &u(Overflow::Wrap))], [1, 15]);
        assert_eq!([c(9, &s(Overflow::Sat)), c(-9, &s(Overflow::Sat))], [7, -8]);
        assert_eq!(
            [c(9, &s(Overflow::SatZero)), c(-9, &s(Overflow::SatZero)), c(-8, &s(Overflow::SatZero))],
            [0, 0, -8]
        );
        assert_eq!(
            [c(9, &s(Overflow::SatSym)), c(-9, &s(Overflow::SatSym)), c(-8, &s(Overflow::SatSym))],
            [7, -7, -7]
        );
        assert_eq!([c(17, &u(Overflow::SatSym)), c(-1, &u(Overflow::SatSym))], [15, 0]);
    }

    #[test]
    fn parse_modes() {
        assert_eq!("rnd_conv".parse::<Rounding>().unwrap(), Rounding::RndConv);
        assert_eq!("AP_SAT_SYM".parse::<Overflow>().unwrap(), Overflow::SatSym);
        let e = "round".parse::<Rounding>().unwrap_err();
        assert!(e.contains("RND_MIN_INF") && e.contains("'round'"), "{e}");
        let e = "clip".parse::<Overflow>().unwrap_err();
        assert!(e.contains("SAT_ZERO"), "{e}");
        for m in Rounding::ALL {
            assert_eq!(m.name().parse::<Rounding>().unwrap(), m);
            assert_eq!(serde_json::to_string(&m).unwrap(), format!("\"{}\"", m.name()));
        }
    }

    #[test]
    fn validate_and_bounds() {
        assert!(FixedFormat::signed(0, 0).validate().is_err());
        assert!(FixedFormat::signed(65, 0).validate().is_err());
        assert!(FixedFormat::unsigned(64, 0).validate().is_err());
        assert!(FixedFormat::signed(64, 0).validate().is_ok());
        let f = FixedFormat::signed(64, 3);
        assert_eq!((f.min_code(), f.max_code()), (i64::MIN, i64::MAX));
        let u = FixedFormat::unsigned(63, -2);
        assert_eq!((u.min_code(), u.max_code()), (0, i64::MAX));
        assert_eq!(u.lsb(), 4.0);
        assert_eq!(FixedFormat::signed(8, 3).lsb(), 0.125);
    }

    #[test]
    fn huge_shifts_do_not_panic() {
        let f = FixedFormat::signed(8, 0).with_modes(Rounding::Rnd, Overflow::Wrap);
        // -2^127 / 2^128 = -0.5: a tie, RND goes up to 0; RND_MIN_INF down to -1.
        assert_eq!(cast_code(i128::MIN, 128, &f), 0);
        assert_eq!(cast_code(i128::MIN, 128, &f.with_modes(Rounding::RndMinInf, Overflow::Wrap)), -1);
        assert_eq!(cast_code(i128::MIN, 129, &f), 0);
        assert_eq!(cast_code(i128::MIN, -200, &f), 0);
        assert_eq!(cast_code(i128::MAX, 2000, &f), 0);
        assert_eq!(cast_code(-1, -127, &f.with_modes(Rounding::Trn, Overflow::Sat)), -128);
        assert_eq!(from_f64(f64::INFINITY, &FixedFormat::signed(8, 0)), 127);
        assert_eq!(from_f64(f64::NEG_INFINITY, &FixedFormat::signed(8, 0)), -128);
        assert_eq!(from_f64(f64::NAN, &FixedFormat::signed(8, 0)), 0);
    }
}
