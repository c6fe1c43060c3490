//! Saturation reports of quantized execution: the counts are exact (checked against counts
//! computed here from the data with independent arithmetic), a run that stays in range reports
//! zero, WRAP is counted apart from the SAT family, and the warnings name node and format.

mod support;

use std::collections::HashMap;

use mase_ir::fixed::{FixedFormat, Overflow, Rounding};
use mase_ir::pass::{find_pass, run_pass};
use mase_ir::quant::saturation::{SiteCounts, WARN_FRACTION};
use mase_ir::quant::{
    format_of, run_quantized, run_quantized_counted, run_quantized_values, QValue, SaturationCounter,
};
use mase_ir::{MaseGraph, Tensor};
use ndarray::ArrayD;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use support::{mlp, rand_tensor};

/// 8-bit activations: linear inputs s8.5 ([-4, 4)), outputs s8.4, relu s8.4; so fc2 re-casts
/// its s8.4 input into s8.5. `out_overflow` is the linear outputs' overflow mode.
fn quantized(seed: u64, out_overflow: &str) -> MaseGraph {
    let cfg: toml::Table = format!(
        "by = \"type\"\n[default.config]\nname = \"NA\"\n[linear.config]\nname = \"integer\"\n\
         data_in_width = 8\ndata_in_frac_width = 5\nweight_width = 8\nweight_frac_width = 7\n\
         bias_width = 8\nbias_frac_width = 7\ndata_out_width = 8\ndata_out_frac_width = 4\n\
         data_out_overflow = \"{out_overflow}\"\n\
         [relu.config]\nname = \"integer\"\ndata_in_width = 8\ndata_in_frac_width = 4\n\
         data_out_width = 8\ndata_out_frac_width = 4\n"
    )
    .parse()
    .unwrap();
    run_pass(find_pass("quantize").unwrap(), mlp(seed), &cfg).unwrap().0
}

fn input(seed: u64, scale: f32) -> HashMap<String, Tensor> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    HashMap::from([("x".to_string(), rand_tensor(&mut rng, &[4, 16], scale))])
}

fn fmt(g: &MaseGraph, node: &str, which: &str, key: &str) -> FixedFormat {
    let n = g.node(g.find(node).unwrap());
    let m = if which == "args" { &n.meta.common.args } else { &n.meta.common.results };
    m.get(key).and_then(format_of).unwrap()
}

fn codes(vals: &[QValue], g: &MaseGraph, node: &str) -> ArrayD<i64> {
    match &vals[g.find(node).unwrap().0] {
        QValue::Fixed { codes, .. } => codes.clone(),
        QValue::Float(_) => panic!("{node} is not fixed"),
    }
}

/// How many of the integers `n` fall outside `fmt`'s codes.
fn outside(ns: impl Iterator<Item = i128>, f: &FixedFormat) -> u64 {
    ns.filter(|n| *n < f.min_code() as i128 || *n > f.max_code() as i128).count() as u64
}

/// The expected overflow counts of the sites `x`, `fc1` and `fc2/data_in_0`, computed from the
/// data: floor(x·2^5) in f64 (exact: x is an f32), fc1 as Σ x·w + b in i128 floored to 4
/// fractional bits, and the relu/reshape codes shifted to 5 fractional bits.
fn expected(g: &MaseGraph, inp: &HashMap<String, Tensor>) -> [(String, u64, u64); 3] {
    let vals = run_quantized_values(g, inp).unwrap();
    let xf = fmt(g, "x", "results", "data_out_0");
    assert_eq!((xf.width, xf.frac, xf.rounding), (8, 5, Rounding::Trn));
    let x = inp["x"].as_f32().unwrap();
    let x_events = outside(x.iter().map(|v| (f64::from(*v) * 32.0).floor() as i128), &xf);

    let xc = codes(&vals, g, "x");
    let (w, b) = (&g.qweights["fc1.weight"], &g.qweights["fc1.bias"]);
    let of = fmt(g, "fc1", "results", "data_out_0");
    let prod_frac = xf.frac + w.format.frac;
    assert!(prod_frac >= b.format.frac && prod_frac > of.frac);
    let mut sums = Vec::new();
    for r in 0..4 {
        for o in 0..8 {
            let mut acc: i128 = (b.codes[[o]] as i128) << (prod_frac - b.format.frac);
            for i in 0..16 {
                acc += xc[[r, i]] as i128 * w.codes[[o, i]] as i128;
            }
            sums.push(acc.div_euclid(1i128 << (prod_frac - of.frac)));
        }
    }
    let fc1_events = outside(sums.into_iter(), &of);

    let vf = fmt(g, "view", "results", "data_out_0");
    let inf = fmt(g, "fc2", "args", "data_in_0");
    assert_eq!(inf.frac, vf.frac + 1);
    let recast = outside(codes(&vals, g, "view").iter().map(|c| (*c as i128) << 1), &inf);
    [("x".into(), x_events, 64), ("fc1".into(), fc1_events, 32), ("fc2/data_in_0".into(), recast, 32)]
}

fn counted(g: &MaseGraph, inp: &HashMap<String, Tensor>) -> mase_ir::quant::SaturationReport {
    let mut sat = SaturationCounter::new();
    let outs = run_quantized_counted(g, inp, &mut sat).unwrap();
    assert_eq!(outs, run_quantized(g, inp).unwrap(), "counting changes no value");
    sat.report()
}

#[test]
fn clipped_counts_are_exact() {
    let g = quantized(1, "SAT");
    // Inputs up to ±12 against an input format holding [-4, 4): about two thirds clip.
    let inp = input(2, 12.0);
    let report = counted(&g, &inp);
    for (site, events, total) in expected(&g, &inp) {
        let s = &report.saturation[&site];
        assert_eq!((s.clipped, s.wrapped, s.total), (events, 0, total), "site {site}");
    }
    assert!(report.saturation["x"].clipped > 0, "the test data must clip");
    assert!(report.saturation["fc1"].clipped > 0, "the test data must clip fc1");
    // Warnings: exactly the sites over 0.1 %, each naming the node and its format.
    let over: Vec<(&String, &SiteCounts)> =
        report.saturation.iter().filter(|(_, s)| s.clipped as f64 > WARN_FRACTION * s.total as f64).collect();
    assert_eq!(report.warnings.len(), over.len());
    for ((site, s), w) in over.iter().zip(&report.warnings) {
        let node = site.split('/').next().unwrap();
        assert!(w.contains(&format!("'{node}'")) && w.contains(&s.format), "{w}");
    }
    assert!(report.saturation["x"].format.contains("s8.5"), "{}", report.saturation["x"].format);
}

#[test]
fn counts_add_up_over_inferences() {
    let g = quantized(3, "SAT");
    let (a, b) = (input(4, 6.0), input(5, 6.0));
    let mut sat = SaturationCounter::new();
    run_quantized_counted(&g, &a, &mut sat).unwrap();
    run_quantized_counted(&g, &b, &mut sat).unwrap();
    let both = sat.report();
    let (ra, rb) = (counted(&g, &a), counted(&g, &b));
    for (site, s) in &both.saturation {
        assert_eq!(s.clipped, ra.saturation[site].clipped + rb.saturation[site].clipped, "{site}");
        assert_eq!(s.total, ra.saturation[site].total + rb.saturation[site].total, "{site}");
    }
}

#[test]
fn wrapped_values_are_counted_apart() {
    let g = quantized(1, "WRAP");
    let inp = input(2, 12.0);
    let report = counted(&g, &inp);
    let [_, (site, events, total), _] = expected(&g, &inp);
    assert!(events > 0);
    let s = &report.saturation[&site];
    assert_eq!((s.clipped, s.wrapped, s.total), (0, events, total));
    assert!(report.warnings.iter().any(|w| w.contains("'fc1' wrapped") && w.contains("WRAP")));
}

#[test]
fn in_range_run_reports_zero() {
    let g = quantized(1, "SAT");
    let inp = input(2, 0.1);
    let report = counted(&g, &inp);
    for (site, _, total) in expected(&g, &inp) {
        assert_eq!(report.saturation[&site].total, total, "{site} is listed with its total");
    }
    assert!(report.saturation.values().all(|s| s.clipped == 0 && s.wrapped == 0), "{report:?}");
    assert!(report.warnings.is_empty());
    assert_eq!(report.events().count(), 0);
    // The reshape moves codes in their own format: no cast, no site.
    assert!(!report.saturation.contains_key("view"));
}

#[test]
fn sat_sym_min_code_and_infinity_count_as_clipped() {
    let f = FixedFormat::signed(4, 0).with_modes(Rounding::Trn, Overflow::SatSym);
    // -8 is a code of s4.0 that SAT_SYM replaces by -7; 7.5 floors to 7 (fits); ∞ and 9 clip.
    let vals = [-8.0f32, 7.5, f32::INFINITY, 9.0, 0.0, f32::NAN];
    let t = Tensor::from_f32(&[vals.len()], vals.to_vec()).unwrap();
    let v = QValue::Float(t);
    let cast = v.cast_to(&f);
    let mut sat = SaturationCounter::new();
    sat.record_value("n", &v, &f, &cast);
    let s = &sat.report().saturation["n"];
    assert_eq!((s.clipped, s.wrapped, s.total), (3, 0, vals.len() as u64));
}
