//! Exact rational model of ap_fixed casting, written from the mode definitions (not from the
//! implementation under test): the value is a `BigRational`, scaled by `2^frac`, rounded by the
//! mode's definition on the real line, then the overflow mode applied to the integer.
//! Shared by `fixed_exhaustive.rs` and `fixed_props.rs`.

#![allow(dead_code)]

use mase_ir::fixed::{FixedFormat, Overflow, Rounding};
use num_bigint::BigInt;
use num_rational::BigRational;

/// `2^e` as a rational, any sign of `e`.
pub fn pow2(e: i64) -> BigRational {
    let p = BigInt::from(1) << e.unsigned_abs();
    if e >= 0 {
        BigRational::from_integer(p)
    } else {
        BigRational::new(BigInt::from(1), p)
    }
}

/// The exact value `code × 2^-frac`.
pub fn value(code: i128, frac: i32) -> BigRational {
    BigRational::from_integer(BigInt::from(code)) * pow2(-(frac as i64))
}

/// The exact value of a double as `from_f64` defines it (infinity = ±2^1024); `None` for NaN.
pub fn f64_value(x: f64) -> Option<BigRational> {
    if x.is_nan() {
        None
    } else if x.is_infinite() {
        let v = pow2(1024);
        Some(if x < 0.0 { -v } else { v })
    } else {
        Some(BigRational::from_float(x).expect("finite double"))
    }
}

/// Rounds a real number to an integer by the mode's definition.
pub fn round(s: &BigRational, mode: Rounding) -> BigInt {
    let zero = BigRational::from_integer(BigInt::from(0));
    let half = BigRational::new(BigInt::from(1), BigInt::from(2));
    let fl = s.floor();
    let ce = s.ceil();
    let rem = s - &fl;
    let neg = *s < zero;
    let r = match mode {
        Rounding::Trn => fl,
        Rounding::TrnZero => {
            if neg {
                ce
            } else {
                fl
            }
        }
        _ if rem < half => fl,
        _ if rem > half => ce,
        // exact tie between fl and ce = fl + 1
        Rounding::Rnd => ce,
        Rounding::RndZero => {
            if neg {
                ce
            } else {
                fl
            }
        }
        Rounding::RndInf => {
            if neg {
                fl
            } else {
                ce
            }
        }
        Rounding::RndMinInf => fl,
        Rounding::RndConv => {
            let two = BigInt::from(2);
            if fl.to_integer() % &two == BigInt::from(0) {
                fl
            } else {
                ce
            }
        }
    };
    r.to_integer()
}

/// Applies the overflow mode to an integer by its definition.
pub fn overflow(n: &BigInt, signed: bool, width: u32, mode: Overflow) -> BigInt {
    let m = BigInt::from(1) << width; // 2^width
    let (min, max) = if signed {
        let h = BigInt::from(1) << (width - 1);
        (-h.clone(), h - 1)
    } else {
        (BigInt::from(0), &m - 1)
    };
    let fits = *n >= min && *n <= max;
    match mode {
        Overflow::Wrap => {
            // the representative of n modulo 2^width in [min, min + 2^width)
            let r = ((n - &min) % &m + &m) % &m;
            r + min
        }
        Overflow::Sat => {
            if fits {
                n.clone()
            } else if *n < min {
                min
            } else {
                max
            }
        }
        Overflow::SatZero => {
            if fits {
                n.clone()
            } else {
                BigInt::from(0)
            }
        }
        Overflow::SatSym => {
            // symmetric range [-max, max] for signed formats of width ≥ 2; SAT otherwise
            let lo = if signed && width >= 2 { -max.clone() } else { min };
            if *n < lo {
                lo
            } else if *n > max {
                max
            } else {
                n.clone()
            }
        }
    }
}

/// Faster overflow for integers that fit in i128 (same definitions, machine integers).
pub fn overflow_small(n: i128, signed: bool, width: u32, mode: Overflow) -> i128 {
    let m = 1i128 << width;
    let (min, max) = if signed { (-(m / 2), m / 2 - 1) } else { (0, m - 1) };
    match mode {
        Overflow::Wrap => (n - min).rem_euclid(m) + min,
        Overflow::Sat => n.clamp(min, max),
        Overflow::SatZero => {
            if (min..=max).contains(&n) {
                n
            } else {
                0
            }
        }
        Overflow::SatSym => {
            let lo = if signed && width >= 2 { -max } else { min };
            n.clamp(lo, max)
        }
    }
}

/// The model's cast of an exact value into a format: the expected code.
pub fn cast(x: &BigRational, to: &FixedFormat) -> BigInt {
    let n = round(&(x * pow2(to.frac as i64)), to.rounding);
    overflow(&n, to.signed, to.width, to.overflow)
}

/// The model's cast as an i64 (the expected code always fits).
pub fn cast_i64(x: &BigRational, to: &FixedFormat) -> i64 {
    i64::try_from(&cast(x, to)).expect("a code of a format of at most 64 bits")
}
