//! Accuracy of the exact integer `gelu`, `tanh` and `softmax` components against double-precision
//! arithmetic, in LSBs of the output format, over random inputs spanning the input format.
//!
//! Run: `cargo run --release -p mase-hwlib --example nonlinear_error [gelu | gelu_forms |
//! gelu_sweep | tanh_forms | softmax]` (prints tables; asserts nothing: the ≤ 1 LSB, ≤ 16 kbit
//! bounds of the interpolated GELU and tanh over the same sweep are unit tests in `gelu.rs` and
//! `tanh.rs`). `tanh_forms` takes every input code, the full tables of 6..12-bit formats and the
//! interpolated form of the 16-bit sweep as the binding chooses them, next to what a table of
//! every code (no symmetry, no saturation) would hold. `gelu_forms` takes every
//! input code, both GELU forms as the binding configures them (recommended range, segment bits
//! and bands), with the bits of one table; `gelu_sweep` the interpolated form for every 16-bit
//! input format with 8..14 fractional bits and outputs with 2 fewer to 2 more. The reference is the real function of the *quantized* input codes evaluated in f64
//! (GELU via `gelu::gelu_f64`, softmax via `exp` in f64 with max subtraction); the error of an
//! output code `y` is `|y · 2^-F_out − ref| / 2^-F_out`. Errors are taken over the inputs whose
//! reference lies inside the output range; the last column counts the others (they saturate:
//! e.g. GELU of an s16.12 input reaches 8, which an s16.14 output cannot hold, and softmax's 1.0
//! is one LSB above the largest u16.16 code).

use mase_hwlib::components::{gelu, softmax, tanh};
use mase_hwlib::resolve_params;
use mase_ir::fixed::{to_f64, FixedFormat, Overflow, Rounding};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Max and mean absolute error of `(got, reference)` pairs in units of the format's LSB, over
/// the pairs whose reference lies inside the format's range, and the number of pairs outside it
/// (those saturate: their error is the distance to the range, not an algorithm error).
fn stats(pairs: &[(f64, f64)], fmt: &FixedFormat) -> (f64, f64, usize) {
    let (lo, hi) = (to_f64(fmt.min_code(), fmt), to_f64(fmt.max_code(), fmt) + fmt.lsb());
    let inside: Vec<f64> =
        pairs.iter().filter(|(_, r)| *r >= lo && *r < hi).map(|(g, r)| (g - r).abs() / fmt.lsb()).collect();
    let max = inside.iter().cloned().fold(0.0, f64::max);
    (max, inside.iter().sum::<f64>() / inside.len().max(1) as f64, pairs.len() - inside.len())
}

fn gelu_rows(rng: &mut ChaCha8Rng) {
    println!("## gelu (16-bit signed input and output, 200000 random inputs each)\n");
    println!("| input | output | rounding | table range | entries | max err (LSB) | mean err (LSB) | out of range |");
    println!("|---|---|---|---|---|---|---|---|");
    for (fin, fout) in [(8, 8), (10, 10), (12, 12), (13, 13), (12, 14)] {
        for (rname, rmode) in [("TRN", 0), ("RND", 2)] {
            for narrow in [false, true] {
                let fi = FixedFormat::signed(16, fin);
                let mut ov = vec![
                    ("DATA_IN_0_PRECISION_0", 16),
                    ("DATA_IN_0_PRECISION_1", fin as i64),
                    ("DATA_OUT_0_PRECISION_0", 16),
                    ("DATA_OUT_0_PRECISION_1", fout as i64),
                    ("DATA_OUT_0_ROUNDING", rmode),
                ];
                if narrow {
                    let (lo, hi) = gelu::table_range(&fi, fout);
                    ov.push(("TABLE_NEG", -lo));
                    ov.push(("TABLE_POS", hi));
                }
                let p = resolve_params(&gelu::Gelu, &ov).expect("valid gelu parameters");
                let table = gelu::gelu_table(&p);
                let (lo, hi) = gelu::effective_range(&p);
                let fo = FixedFormat::signed(16, fout);
                let pairs: Vec<(f64, f64)> = (0..200_000)
                    .map(|_| {
                        let x = rng.gen_range(fi.min_code()..=fi.max_code());
                        let y = gelu::lookup_element(&p, &table, x);
                        (to_f64(y, &fo), gelu::gelu_f64(to_f64(x, &fi)))
                    })
                    .collect();
                let (max, mean, out) = stats(&pairs, &fo);
                println!(
                    "| s16.{fin} | s16.{fout} | {rname} | [{lo}, {hi}] | {} | {max:.3} | {mean:.3} | {out} |",
                    hi - lo + 1
                );
            }
        }
    }
    println!();
}

/// Resolved parameters of a gelu instance as the binding chooses them for the given formats
/// and form: the recommended table range, and for the interpolated form the segment bits.
fn gelu_params(fi: &FixedFormat, fo: &FixedFormat, rmode: i64, interp: bool) -> mase_hwlib::Params {
    let (lo, hi) = gelu::table_range(fi, fo.frac);
    let spec = gelu::InterpSpec::uniform(*fi, *fo, lo, hi, 0, gelu::GUARD_BITS);
    let spec = if interp { gelu::choose(&spec, &gelu::gelu_f64) } else { spec };
    let ov = vec![
        ("DATA_IN_0_PRECISION_0", fi.width as i64),
        ("DATA_IN_0_PRECISION_1", fi.frac as i64),
        ("DATA_OUT_0_PRECISION_0", fo.width as i64),
        ("DATA_OUT_0_PRECISION_1", fo.frac as i64),
        ("DATA_OUT_0_ROUNDING", rmode),
    ]
    .into_iter()
    .chain(spec.table_params(interp))
    .collect::<Vec<_>>();
    resolve_params(&gelu::Gelu, &ov).expect("valid gelu parameters")
}

/// Segment bits and bands of an interpolated instance: `S_in/S_mid/S_out @ B_mid/B_out`
/// (`S` alone when the table is one band).
fn segments(p: &mase_hwlib::Params) -> String {
    if p["FORM"] != 1 {
        return "-".into();
    }
    let spec = gelu::interp_spec(p);
    let used: Vec<_> = spec.bands().into_iter().filter(|b| b.words > 0).collect();
    if used.iter().all(|b| b.seg == spec.seg[0]) {
        return spec.seg[0].to_string();
    }
    format!("{}/{}/{} @ {}/{}", spec.seg[0], spec.seg[1], spec.seg[2], spec.band[0], spec.band[1])
}

/// Rows of gelu instances over every input code: formats, table size per ROM, worst-case
/// error (the budget: 16 kbit per lane and 1 LSB).
fn gelu_rows_of(title: &str, formats: &[(u32, i32, u32, i32)], forms: &[bool]) {
    println!("## {title}\n");
    println!("| input | output | rounding | form | segments (in/mid/out @ bands) | ROM words | word bits | ROM bits | max err (LSB) | mean err (LSB) | out of range |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for &(wi, fin, wo, fout) in formats {
        for (rname, rmode) in [("TRN", 0), ("RND", 2)] {
            for &interp in forms {
                let fi = FixedFormat::signed(wi, fin);
                let fo = FixedFormat::signed(wo, fout);
                let p = gelu_params(&fi, &fo, rmode, interp);
                let table = gelu::gelu_table(&p);
                let pairs: Vec<(f64, f64)> = (fi.min_code()..=fi.max_code())
                    .map(|x| {
                        (to_f64(gelu::lookup_element(&p, &table, x), &fo), gelu::gelu_f64(to_f64(x, &fi)))
                    })
                    .collect();
                let (max, mean, out) = stats(&pairs, &fo);
                let form = if interp { "interp" } else { "table" };
                println!(
                    "| s{wi}.{fin} | s{wo}.{fout} | {rname} | {form} | {} | {} | {} | {} | {max:.3} | {mean:.3} | {out} |",
                    segments(&p),
                    table.len(),
                    gelu::word_bits(&p),
                    gelu::table_bits(&p)
                );
            }
        }
    }
    println!();
}

/// Both gelu forms over every input code of several formats.
fn gelu_form_rows() {
    let formats = [
        (16, 12, 16, 12),
        (16, 8, 16, 8),
        (16, 10, 16, 12),
        (16, 13, 16, 13),
        (16, 12, 16, 14),
        (8, 4, 8, 4),
        (8, 5, 8, 6),
    ];
    gelu_rows_of("gelu forms, every input code (binding's choices)", &formats, &[false, true]);
}

/// The interpolated form over the unit test's sweep of 16-bit formats.
fn gelu_sweep_rows() {
    let mut formats = Vec::new();
    for fin in 8..=14 {
        for fout in (fin - 2).max(0)..=(fin + 2).min(15) {
            formats.push((16, fin, 16, fout));
        }
    }
    gelu_rows_of("gelu interpolated form, 16-bit sweep, every input code", &formats, &[true]);
}

/// tanh over every input code: the component's forms as the binding chooses them, against
/// what odd symmetry and saturation save (a table of every code; the interpolated form over every
/// code without symmetry). Errors against libm's `tanh` of the input code.
fn tanh_rows(title: &str, formats: &[(u32, i32, u32, i32)], interp: bool) {
    println!("## {title}\n");
    println!("| input | output | rounding | HI | every code: bits | over [0, HI]: segments | words | word bits | bits | max err (LSB) | mean err (LSB) | out of range |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for &(wi, fin, wo, fout) in formats {
        for (rname, rounding) in [("TRN", Rounding::Trn), ("RND", Rounding::Rnd)] {
            let fi = FixedFormat::signed(wi, fin);
            let fo = FixedFormat::signed(wo, fout).with_modes(rounding, Overflow::Sat);
            let spec = tanh::binding_spec(fi, fo, interp);
            let mut ov = vec![
                ("DATA_IN_0_PRECISION_0", wi as i64),
                ("DATA_IN_0_PRECISION_1", fin as i64),
                ("DATA_OUT_0_PRECISION_0", wo as i64),
                ("DATA_OUT_0_PRECISION_1", fout as i64),
                ("DATA_OUT_0_ROUNDING", if rounding == Rounding::Rnd { 2 } else { 0 }),
            ];
            ov.extend(spec.table_params(interp).into_iter().filter(|(k, _)| *k != "TABLE_NEG"));
            let p = resolve_params(&tanh::Tanh, &ov).expect("valid tanh parameters");
            let (table, lp) = (tanh::tanh_table(&p), tanh::lookup_params(&p));
            let pairs: Vec<(f64, f64)> = (fi.min_code()..=fi.max_code())
                .map(|x| (to_f64(gelu::lookup_element(&lp, &table, x), &fo), to_f64(x, &fi).tanh()))
                .collect();
            let (max, mean, out) = stats(&pairs, &fo);
            // Without symmetry or saturation: every code tabulated, or interpolated over every code.
            // (The interpolated one for `fout = fin`, TRN only: its search over every code is slow.)
            let every = if interp && (fout != fin || rounding != Rounding::Trn) {
                "".to_string()
            } else if interp {
                let all =
                    gelu::InterpSpec::uniform(fi, fo, fi.min_code(), fi.max_code(), 0, gelu::GUARD_BITS);
                let c = gelu::choose(&all, &tanh::tanh_f64);
                format!(
                    "{} ({}x{}, {:.2} LSB)",
                    c.bits(),
                    c.depth(),
                    c.word_bits(),
                    c.best_offset(&tanh::tanh_f64).1
                )
            } else {
                format!("{}", (1u64 << wi) * wo as u64)
            };
            println!(
                "| s{wi}.{fin} | s{wo}.{fout} | {rname} | {} | {every} | {} | {} | {} | {} | {max:.3} | {mean:.3} | {out} |",
                spec.hi,
                segments(&lp),
                table.len(),
                gelu::word_bits(&lp),
                gelu::table_bits(&lp)
            );
        }
    }
    println!();
}

/// Both tanh forms: full tables of 6..12-bit formats, the interpolated form over the unit test's
/// 16-bit sweep.
fn tanh_form_rows() {
    let mut small = Vec::new();
    for (w, f) in [(6, 3), (8, 4), (8, 5), (10, 6), (10, 7), (12, 8), (12, 9)] {
        small.push((w, f, w, f));
        small.push((w, f, w, w as i32 - 2));
    }
    tanh_rows("tanh full table (binding's saturation point), every input code", &small, false);
    let mut wide = Vec::new();
    for fin in 8..=14 {
        for fout in (fin - 2)..=(fin + 2).min(15) {
            wide.push((16, fin, 16, fout));
        }
    }
    tanh_rows("tanh interpolated form (binding's choice), 16-bit sweep, every input code", &wide, true);
}

fn softmax_rows(rng: &mut ChaCha8Rng) {
    println!("## softmax (16-bit signed input, 16-bit output, default internal widths)\n");
    println!("| input | output | rounding | L | rows | max err (LSB) | mean err (LSB) | out of range |");
    println!("|---|---|---|---|---|---|---|---|");
    for fin in [8, 10, 12, 13] {
        for (signed, fout) in [(0, 16), (1, 15)] {
            for (rname, rmode) in [("TRN", 0), ("RND", 2)] {
                for l in [64i64, 197, 512] {
                    let ov = vec![
                        ("DATA_IN_0_PRECISION_0", 16),
                        ("DATA_IN_0_PRECISION_1", fin),
                        ("DATA_IN_0_TENSOR_SIZE_DIM_0", l),
                        ("DATA_IN_0_PARALLELISM_DIM_0", 1),
                        ("DATA_OUT_0_PRECISION_0", 16),
                        ("DATA_OUT_0_PRECISION_1", fout),
                        ("DATA_OUT_0_SIGNED", signed),
                        ("DATA_OUT_0_ROUNDING", rmode),
                    ];
                    let p = resolve_params(&softmax::Softmax, &ov).expect("valid softmax parameters");
                    let w = softmax::Widths::of(&p);
                    let (t_hi, t_lo) = softmax::exp_tables(w.ef, w.h);
                    let fi = FixedFormat::signed(16, fin as i32);
                    let fo = FixedFormat { signed: signed == 1, ..FixedFormat::signed(16, fout as i32) };
                    let rows = (40_000 / l).max(20);
                    let mut pairs = Vec::new();
                    for _ in 0..rows {
                        // random rows spanning the input format; every other row squeezed into a
                        // narrow window (logits of similar size, where many terms matter)
                        let span = if rng.gen_bool(0.5) { 1i64 << 16 } else { 8i64 << fin };
                        let base = rng.gen_range(fi.min_code()..=fi.max_code() - span.min(1 << 15) + 1);
                        let row: Vec<i64> = (0..l)
                            .map(|_| (base + rng.gen_range(0..span)).clamp(fi.min_code(), fi.max_code()))
                            .collect();
                        let y = softmax::softmax_row(&p, &t_hi, &t_lo, &row);
                        let m = row.iter().copied().max().unwrap_or(0);
                        let ex: Vec<f64> = row.iter().map(|&x| (to_f64(x - m, &fi)).exp()).collect();
                        let s: f64 = ex.iter().sum();
                        for (yi, e) in y.iter().zip(&ex) {
                            pairs.push((to_f64(*yi, &fo), e / s));
                        }
                    }
                    let (max, mean, out) = stats(&pairs, &fo);
                    let sign = if signed == 1 { "s" } else { "u" };
                    println!(
                        "| s16.{fin} | {sign}16.{fout} | {rname} | {l} | {rows} | {max:.3} | {mean:.4} | {out} |"
                    );
                }
            }
        }
    }
    println!();
}

fn main() {
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let which: Vec<String> = std::env::args().skip(1).collect();
    let all = which.is_empty();
    if all || which.iter().any(|w| w == "gelu") {
        gelu_rows(&mut rng);
    }
    if all || which.iter().any(|w| w == "gelu_forms") {
        gelu_form_rows();
    }
    if all || which.iter().any(|w| w == "gelu_sweep") {
        gelu_sweep_rows();
    }
    if all || which.iter().any(|w| w == "tanh_forms") {
        tanh_form_rows();
    }
    if all || which.iter().any(|w| w == "softmax") {
        softmax_rows(&mut rng);
    }
}
