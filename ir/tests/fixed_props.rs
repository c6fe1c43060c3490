//! Property tests of the fixed-point numerics up to width 64: random wide casts against the
//! exact rational model (`fixed_model`), cast invariants, round trips, and the exact
//! arithmetic helpers.

mod fixed_model;

use mase_ir::fixed::{
    accumulate, add, cast_code, from_f64, mul, sub, to_f64, wide_to_f64, FixedFormat, Overflow, Rounding,
};
use num_bigint::BigInt;
use num_rational::BigRational;
use proptest::prelude::*;

fn rounding() -> impl Strategy<Value = Rounding> {
    proptest::sample::select(Rounding::ALL.to_vec())
}

fn overflow() -> impl Strategy<Value = Overflow> {
    proptest::sample::select(Overflow::ALL.to_vec())
}

/// Any valid format up to width 64 with fractional bits in -80..=140.
fn format() -> impl Strategy<Value = FixedFormat> {
    (any::<bool>(), 1u32..=64, -80i32..=140, rounding(), overflow()).prop_map(|(signed, w, frac, r, o)| {
        let width = if signed { w } else { w.min(63) };
        FixedFormat { signed, width, frac, rounding: r, overflow: o }
    })
}

/// A wide source code: full i128 range or a narrower one (so casts often land in range).
fn code() -> impl Strategy<Value = i128> {
    prop_oneof![any::<i128>(), any::<i64>().prop_map(|c| c as i128), (-4096i128..=4096)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn wide_cast_matches_model(c in code(), from_frac in -300i32..=300, to in format()) {
        let want = fixed_model::cast_i64(&fixed_model::value(c, from_frac), &to);
        prop_assert_eq!(cast_code(c, from_frac, &to), want, "code {} at frac {} into {}", c, from_frac, to);
    }

    #[test]
    fn double_matches_model(bits in any::<u64>(), to in format()) {
        let x = f64::from_bits(bits);
        let want = match fixed_model::f64_value(x) {
            None => 0,
            Some(v) => fixed_model::cast_i64(&v, &to),
        };
        prop_assert_eq!(from_f64(x, &to), want, "double {:e} into {}", x, to);
    }

    #[test]
    fn moderate_double_matches_model(m in -(1i64 << 53)..(1i64 << 53), e in -90i32..=70, to in format()) {
        let x = m as f64 * 2f64.powi(e);
        let want = fixed_model::cast_i64(&fixed_model::f64_value(x).unwrap(), &to);
        prop_assert_eq!(from_f64(x, &to), want, "double {:e} into {}", x, to);
    }

    #[test]
    fn result_is_a_code_of_the_format(c in code(), from_frac in -300i32..=300, to in format()) {
        let r = cast_code(c, from_frac, &to);
        prop_assert!(to.contains_code(r));
        if to.overflow == Overflow::SatSym && to.signed && to.width >= 2 {
            prop_assert_ne!(r, to.min_code(), "SAT_SYM produced the most negative code");
        }
    }

    #[test]
    fn representable_codes_are_kept(to in format()) {
        // a code of the format, at the format's own frac or with extra zero low bits, is kept
        // by every mode except SAT_SYM's replacement of the most negative code
        let codes = [to.min_code(), to.max_code(), 0, to.min_code() / 3, to.max_code() / 7];
        for c in codes {
            let keep = !(to.overflow == Overflow::SatSym && to.signed && to.width >= 2 && c == to.min_code());
            let want = if keep { c } else { -to.max_code() };
            prop_assert_eq!(cast_code(c as i128, to.frac, &to), want);
            prop_assert_eq!(cast_code((c as i128) << 40, to.frac + 40, &to), want);
        }
    }

    #[test]
    fn saturating_modes_are_monotone(a in code(), b in code(), from_frac in -300i32..=300, to in format()) {
        let to = FixedFormat { overflow: if to.overflow == Overflow::SatSym { Overflow::SatSym } else { Overflow::Sat }, ..to };
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        prop_assert!(cast_code(lo, from_frac, &to) <= cast_code(hi, from_frac, &to));
    }

    #[test]
    fn rounding_error_is_bounded(c in -(1i128 << 100)..(1i128 << 100), from_frac in 0i32..=120, w in 8u32..=64, r in rounding()) {
        // when the result does not overflow, |result - x| < 1 LSB (truncations) or ≤ 1/2 LSB
        let to = FixedFormat { signed: true, width: w, frac: from_frac - 40, rounding: r, overflow: Overflow::Sat };
        let x = fixed_model::value(c, from_frac);
        let got = cast_code(c, from_frac, &to);
        if got != to.min_code() && got != to.max_code() {
            let err = (fixed_model::value(got as i128, to.frac) - x) * fixed_model::pow2(to.frac as i64);
            let err = if err < BigRational::from_integer(BigInt::from(0)) { -err } else { err };
            let bound = match r {
                Rounding::Trn | Rounding::TrnZero => BigRational::from_integer(BigInt::from(1)),
                _ => BigRational::new(BigInt::from(1), BigInt::from(2)),
            };
            prop_assert!(err < bound || (err == bound && !matches!(r, Rounding::Trn | Rounding::TrnZero)));
        }
    }

    #[test]
    fn double_round_trip(to in format(), seed in any::<u64>()) {
        // a code of a format of at most 53 bits is exact in a double and comes back unchanged
        let to = FixedFormat { width: to.width.min(53), frac: to.frac.clamp(-900, 900), ..to };
        let span = (to.max_code() as i128 - to.min_code() as i128 + 1) as u128;
        let c = (to.min_code() as i128 + (seed as u128 % span) as i128) as i64;
        let x = to_f64(c, &to);
        prop_assert_eq!(BigRational::from_float(x).unwrap(), fixed_model::value(c as i128, to.frac));
        let back = from_f64(x, &FixedFormat { overflow: Overflow::Sat, ..to });
        prop_assert_eq!(back, c);
    }

    #[test]
    fn arithmetic_is_exact(a in any::<i64>(), b in any::<i64>(), fa in -31i32..=31, fb in -31i32..=31) {
        let va = fixed_model::value(a as i128, fa);
        let vb = fixed_model::value(b as i128, fb);
        let (s, fs) = add(a, fa, b, fb).expect("fracs differ by at most 63");
        prop_assert_eq!(fs, fa.max(fb));
        prop_assert_eq!(fixed_model::value(s, fs), &va + &vb);
        let (d, fd) = sub(a, fa, b, fb).unwrap();
        prop_assert_eq!(fixed_model::value(d, fd), &va - &vb);
        let (p, fp) = mul(a, fa, b, fb).unwrap();
        prop_assert_eq!(fp, fa + fb);
        prop_assert_eq!(fixed_model::value(p, fp), &va * &vb);
        // the wide result converts to the nearest double of the exact value for small codes
        if s.unsigned_abs() < (1 << 53) {
            prop_assert_eq!(BigRational::from_float(wide_to_f64(s, fs)).unwrap(), fixed_model::value(s, fs));
        }
    }

    #[test]
    fn accumulate_is_exact(v in proptest::collection::vec((any::<i32>(), any::<i32>()), 0..64), fa in -20i32..=20, fb in -20i32..=20) {
        let (acc, f) = accumulate(v.iter().map(|&(a, b)| (a as i64, b as i64)), fa, fb).unwrap();
        let mut want = BigRational::from_integer(BigInt::from(0));
        for &(a, b) in &v {
            want += fixed_model::value(a as i128, fa) * fixed_model::value(b as i128, fb);
        }
        prop_assert_eq!(fixed_model::value(acc, f), want);
    }
}

#[test]
fn add_refuses_unaligned_beyond_128_bits() {
    assert!(add(1, 0, 1, 64).is_none());
    assert!(sub(1, -10, 1, 60).is_none());
    assert_eq!(add(3, 0, 1, 63), Some(((3i128 << 63) + 1, 63)));
}

#[test]
fn accumulate_reports_overflow_instead_of_wrapping() {
    let big = [(i64::MIN, i64::MIN); 3];
    assert_eq!(accumulate(big, 0, 0), None);
    let two = [(i64::MIN, i64::MIN), (i64::MIN, i64::MIN)];
    assert!(accumulate(two, 0, 0).is_none());
    let one = [(i64::MIN, i64::MIN)];
    assert_eq!(accumulate(one, 3, 4), Some((1i128 << 126, 7)));
}
