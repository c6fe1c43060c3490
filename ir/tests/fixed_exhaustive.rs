//! Exhaustive check of `cast_code` and `from_f64` against the exact rational model
//! (`fixed_model`): every target format up to width 10 (signed and unsigned, fractional bits
//! negative, zero, inside and beyond the width), every rounding × overflow mode, every code of
//! several source formats, and a dense set of doubles (grids with all kinds of ties, random
//! full-mantissa doubles, extremes, subnormals, infinities).

mod fixed_model;

use mase_ir::fixed::{cast_code, from_f64, FixedFormat, Overflow, Rounding};
use num_bigint::BigInt;
use num_rational::BigRational;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Fractional bit counts tested for a target of width `w`.
fn target_fracs(w: u32) -> Vec<i32> {
    let w = w as i32;
    let mut v = vec![-3, -1, 0, 1, w / 2, w - 1, w, w + 3];
    v.sort();
    v.dedup();
    v
}

/// Every target format (without modes) up to width 10.
fn targets() -> Vec<(bool, u32, i32)> {
    let mut t = Vec::new();
    for w in 1..=10u32 {
        for signed in [true, false] {
            for f in target_fracs(w) {
                t.push((signed, w, f));
            }
        }
    }
    t
}

/// Checks every target format and mode on one exact source value; `got` is the implementation
/// under test. Returns the number of comparisons.
fn check_value(
    x: &BigRational,
    what: &dyn Fn() -> String,
    got: &dyn Fn(&FixedFormat) -> i64,
    targets: &[(bool, u32, i32)],
) -> usize {
    let mut fracs: Vec<i32> = targets.iter().map(|t| t.2).collect();
    fracs.sort();
    fracs.dedup();
    let mut n = 0;
    for &f in &fracs {
        let scaled = x * fixed_model::pow2(f as i64);
        for r in Rounding::ALL {
            let rounded: BigInt = fixed_model::round(&scaled, r);
            let small = i128::try_from(&rounded).ok();
            for &(signed, w, _) in targets.iter().filter(|t| t.2 == f) {
                for o in Overflow::ALL {
                    let fmt = FixedFormat { signed, width: w, frac: f, rounding: r, overflow: o };
                    let want = match small {
                        Some(s) => fixed_model::overflow_small(s, signed, w, o) as i64,
                        None => i64::try_from(&fixed_model::overflow(&rounded, signed, w, o)).unwrap(),
                    };
                    let g = got(&fmt);
                    assert_eq!(g, want, "{} into {fmt}: got {g}, model {want}", what());
                    n += 1;
                }
            }
        }
    }
    n
}

#[test]
fn cast_from_fixed_matches_rational_model() {
    let targets = targets();
    // (signed, width, frac) of the sources: every code of each.
    let sources = [(true, 11, 5), (false, 10, 9), (true, 9, -2), (true, 8, 13), (false, 7, 0)];
    let mut n = 0;
    for (signed, w, sf) in sources {
        let src = if signed { FixedFormat::signed(w, sf) } else { FixedFormat::unsigned(w, sf) };
        for code in src.min_code()..=src.max_code() {
            let x = fixed_model::value(code as i128, sf);
            n += check_value(
                &x,
                &|| format!("code {code} of {src}"),
                &|fmt| cast_code(code as i128, sf, fmt),
                &targets,
            );
        }
    }
    assert!(n > 1_000_000, "only {n} comparisons");
}

/// The dense set of doubles.
fn doubles() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::from_bits(1),
        -f64::from_bits(1),
        f64::from_bits(0x000f_ffff_ffff_ffff),
        1e300,
        -1e300,
        1e-300,
        -1e-300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.1,
        -0.1,
        1.0 / 3.0,
    ];
    // grids k / 2^j: exact ties and near-ties for every target LSB
    for j in 0..=7 {
        for k in -140i32..=140 {
            v.push(k as f64 / (1u32 << j) as f64);
        }
    }
    // just off the ties: k/2^j ± one ULP
    for j in 0..=6 {
        for k in -60i32..=60 {
            let t = (2 * k + 1) as f64 / (2u32 << j) as f64;
            v.push(f64::from_bits(t.to_bits() + 1));
            v.push(f64::from_bits(t.to_bits() - 1));
        }
    }
    // random full-mantissa doubles over a wide range of magnitudes
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed_f1ed);
    for _ in 0..1500 {
        let e: i32 = rng.gen_range(-24..16);
        let m: f64 = rng.gen_range(1.0..2.0);
        let s = if rng.gen_bool(0.5) { -1.0 } else { 1.0 };
        v.push(s * m * 2f64.powi(e));
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v.dedup_by(|a, b| a.to_bits() == b.to_bits());
    v
}

#[test]
fn cast_from_double_matches_rational_model() {
    let targets = targets();
    let mut n = 0;
    for x in doubles() {
        let exact = fixed_model::f64_value(x).expect("no NaN in the set");
        n += check_value(&exact, &|| format!("double {x:e}"), &|fmt| from_f64(x, fmt), &targets);
    }
    assert!(n > 1_000_000, "only {n} comparisons");
    // NaN is defined as 0 in every format and mode.
    for (signed, w, f) in targets {
        for r in Rounding::ALL {
            for o in Overflow::ALL {
                let fmt = FixedFormat { signed, width: w, frac: f, rounding: r, overflow: o };
                assert_eq!(from_f64(f64::NAN, &fmt), 0, "NaN into {fmt}");
            }
        }
    }
}
