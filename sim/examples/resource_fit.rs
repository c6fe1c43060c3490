//! Checks every component's resource model ([`mase_hwlib::Component::resources`]) against Yosys
//! `synth_xilinx` over the fit set: each component's test parameter sets plus variants at other
//! operand widths (4, 8, 16 bits) and doubled parallelism, and for some components a spread of
//! larger instances ([`spread`]). Prints per instance the estimate and
//! the measurement, then per component and over the whole set: instances, median absolute LUT
//! and FF error, and whether DSP and BRAM (18k-equivalents) are exact; last, whether the
//! targets (median |LUT error| <= 20 % per component, DSP and BRAM exact) are met.
//!
//! `cargo run -p mase-sim --example resource_fit -- [--only NAME,…] [--save FILE] [--load FILE]
//! [--csv] [--tests-only] [--spread-only] [--max-lut N]`
//!
//! `--save FILE` writes the measurements (JSON) so that `--load FILE` re-checks a changed model
//! without running Yosys again; `--csv` prints one row per instance with the model's features
//! for refitting the constants (they live in each `hwlib/src/components/*.rs`); `--tests-only`
//! keeps only the test parameter sets (no width or parallelism variants), for a quick check;
//! `--spread-only` only the [`spread`] instances; `--max-lut N` skips instances estimated above
//! N LUTs (a softmax of many lanes takes Yosys a quarter of an hour).
//! Runs Yosys serially (about a second per small instance, a few minutes for the whole set).
//!
//! `sim/examples/resource_fit_measured.json` holds the measurements the committed coefficients
//! were fitted to (536 instances, Yosys 0.23; softmax with `--max-lut 10000`): `--load` it to
//! print the table without Yosys.

use std::collections::BTreeMap;

use mase_hwlib::{lookup, registry, resolve_params, Component, Params, Resources};
use mase_sim::{synth_component, synth_stimulus, SynthReport};

/// One instance of the fit set: component, parameter overrides, and what Yosys measured.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sample {
    component: String,
    overrides: Vec<(String, i64)>,
    measured: Resources,
}

/// Replaces every `*_PRECISION_0` parameter by `w` (fractions clamped to fit).
fn with_width(p: &Params, w: i64) -> Vec<(String, i64)> {
    let mut out: Vec<(String, i64)> = p.iter().map(|(k, v)| (k.clone(), *v)).collect();
    for i in 0..out.len() {
        if out[i].0.ends_with("_PRECISION_0") {
            out[i].1 = w;
            let frac = out[i].0.replace("_PRECISION_0", "_PRECISION_1");
            if let Some(f) = out.iter_mut().find(|(k, _)| *k == frac) {
                f.1 = f.1.min(w - 1).max(0);
            }
        }
    }
    out
}

/// Doubles every `*PARALLELISM_DIM_0` parameter and the matching `*TENSOR_SIZE_DIM_0` when
/// needed so the parallelism still divides the size.
fn with_double_parallelism(p: &Params) -> Vec<(String, i64)> {
    let mut out: Vec<(String, i64)> = p.iter().map(|(k, v)| (k.clone(), *v)).collect();
    for i in 0..out.len() {
        if out[i].0.ends_with("PARALLELISM_DIM_0") {
            out[i].1 *= 2;
            let size = out[i].0.replace("PARALLELISM_DIM_0", "TENSOR_SIZE_DIM_0");
            let par = out[i].1;
            if let Some(s) = out.iter_mut().find(|(k, _)| *k == size) {
                s.1 = (s.1 + par - 1) / par * par;
            }
        }
    }
    out
}

/// Larger instances than the test sets hold, for the components whose cost grows with size in
/// ways small instances do not show (wide adder trees, deep weight ROMs, many lanes).
fn spread(name: &str) -> Vec<Vec<(&'static str, i64)>> {
    let lin = |inn, out, pi, po, w| {
        vec![
            ("DATA_IN_0_TENSOR_SIZE_DIM_0", inn),
            ("WEIGHT_TENSOR_SIZE_DIM_1", out),
            ("DATA_IN_0_PARALLELISM_DIM_0", pi),
            ("WEIGHT_PARALLELISM_DIM_1", po),
            ("DATA_IN_0_PRECISION_0", w),
            ("WEIGHT_PRECISION_0", w),
            ("BIAS_PRECISION_0", w),
            ("DATA_OUT_0_PRECISION_0", w),
        ]
    };
    match name {
        "linear" => vec![
            lin(128, 128, 8, 8, 8),
            lin(256, 64, 16, 4, 8),
            lin(384, 384, 4, 4, 8),
            lin(64, 64, 2, 2, 16),
            lin(64, 64, 8, 8, 4),
            lin(32, 96, 2, 8, 8),
            lin(384, 96, 8, 2, 16),
        ],
        // The binding's tables: exact ones of 10 and 12 bits (deep logic ROMs), interpolated
        // 16-bit ones (s16.12 and s16.8 as the binding chooses them), at 1..4 lanes.
        "tanh" => {
            let fmt = |w, f| {
                vec![
                    ("DATA_IN_0_PRECISION_0", w),
                    ("DATA_IN_0_PRECISION_1", f),
                    ("DATA_OUT_0_PRECISION_0", w),
                    ("DATA_OUT_0_PRECISION_1", f),
                ]
            };
            let lanes = |p| vec![("DATA_IN_0_TENSOR_SIZE_DIM_0", 8), ("DATA_IN_0_PARALLELISM_DIM_0", p)];
            let s16_12 = mase_hwlib::components::tanh::TEST_INTERP16.to_vec();
            let s16_8 = vec![
                ("TABLE_POS", 1243),
                ("FORM", 1),
                ("SEG_BITS", 5),
                ("SEG_BITS_MID", 6),
                ("SEG_BITS_OUT", 7),
                ("BAND_MID", 320),
                ("BAND_OUT", 512),
            ];
            vec![
                [fmt(12, 8), lanes(1), vec![("TABLE_POS", 799)]].concat(),
                [fmt(12, 8), lanes(2), vec![("TABLE_POS", 799)]].concat(),
                [fmt(10, 6), lanes(2), vec![("TABLE_POS", 156)]].concat(),
                [fmt(10, 7), lanes(1), vec![("TABLE_POS", 355)]].concat(),
                [fmt(16, 12), lanes(1), s16_12.clone()].concat(),
                [fmt(16, 12), lanes(4), s16_12].concat(),
                [fmt(16, 8), lanes(2), s16_8].concat(),
            ]
        }
        // Tables of realistic depth: block ROMs of several RAMB18/36 (position and small
        // vocabulary embeddings), 8 and 16 bits, 4..16 lanes.
        "embedding" => {
            let emb = |v, h, idx, p, w| {
                vec![
                    ("IDX_WIDTH", idx),
                    ("WEIGHT_TENSOR_SIZE_DIM_0", h),
                    ("WEIGHT_TENSOR_SIZE_DIM_1", v),
                    ("DATA_OUT_0_TENSOR_SIZE_DIM_0", h),
                    ("DATA_OUT_0_PARALLELISM_DIM_0", p),
                    ("WEIGHT_PRECISION_0", w),
                    ("WEIGHT_PRECISION_1", w - 2),
                    ("DATA_OUT_0_PRECISION_0", w),
                    ("DATA_OUT_0_PRECISION_1", w - 4),
                ]
            };
            vec![
                emb(512, 64, 9, 8, 8),
                emb(1000, 32, 10, 4, 16),
                emb(30, 128, 5, 16, 8),
                emb(128, 96, 7, 8, 16),
            ]
        }
        _ => Vec::new(),
    }
}

/// The fit set of one component: test parameters, width variants, doubled parallelism; only
/// valid and distinct sets.
fn fit_set(c: &dyn Component, tests_only: bool, spread_only: bool) -> Vec<Vec<(String, i64)>> {
    let mut seen: Vec<Params> = Vec::new();
    let mut out = Vec::new();
    let mut push = |o: Vec<(String, i64)>, seen: &mut Vec<Params>| {
        if let Ok(p) = resolve_params(c, &o) {
            if !seen.contains(&p) {
                seen.push(p);
                out.push(o);
            }
        }
    };
    if !tests_only {
        for o in spread(c.name()) {
            push(o.iter().map(|(k, v)| (k.to_string(), *v)).collect(), &mut seen);
        }
    }
    if spread_only {
        return out;
    }
    for t in c.test_params() {
        let o: Vec<(String, i64)> = t.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let Ok(p) = resolve_params(c, &o) else { continue };
        push(o, &mut seen);
        if tests_only {
            continue;
        }
        for w in [4, 8, 16] {
            push(with_width(&p, w), &mut seen);
        }
        push(with_double_parallelism(&p), &mut seen);
    }
    out
}

fn measured(r: &SynthReport) -> Resources {
    Resources { lut: r.lut, ff: r.ff, dsp: r.dsp, bram18: r.bram18, lutram: r.lutram }
}

/// Relative error of an estimate (measured 0: 0 when the estimate is 0, else 1).
fn rel(est: u64, meas: u64) -> f64 {
    if meas == 0 {
        if est == 0 {
            0.0
        } else {
            1.0
        }
    } else {
        (est as f64 - meas as f64).abs() / meas as f64
    }
}

/// Errors of one component's (or the whole set's) estimates.
#[derive(Default)]
struct Tally {
    lut: Vec<f64>,
    ff: Vec<f64>,
    dsp_bad: usize,
    bram_bad: usize,
    lutram_bad: usize,
}

impl Tally {
    fn add(&mut self, e: &Resources, m: &Resources) {
        self.lut.push(rel(e.lut, m.lut));
        self.ff.push(rel(e.ff, m.ff));
        self.dsp_bad += usize::from(e.dsp != m.dsp);
        self.bram_bad += usize::from(e.bram18 != m.bram18);
        self.lutram_bad += usize::from(e.lutram != m.lutram);
    }

    /// One row: instances, median |LUT| and |FF| error, DSP, BRAM and LUTRAM exact (or how many
    /// wrong).
    fn print(&self, name: &str) {
        let exact = |bad: usize| if bad == 0 { "y".to_string() } else { format!("n ({bad} off)") };
        println!(
            "{name:<16} {:>4}  {:>7.1} %  {:>6.1} %  {:>9}  {:>10}  {:>12}",
            self.lut.len(),
            100.0 * median(self.lut.clone()),
            100.0 * median(self.ff.clone()),
            exact(self.dsp_bad),
            exact(self.bram_bad),
            exact(self.lutram_bad)
        );
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Whether `--only` (a comma-separated list of component names) selects `name`.
fn selected(only: &Option<String>, name: &str) -> bool {
    only.as_ref().is_none_or(|o| o.split(',').any(|n| n == name))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut only, mut save, mut load, mut csv, mut tests_only, mut spread_only) =
        (None, None, None, false, false, false);
    let mut max_lut = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--only" => only = Some(args.next().ok_or("--only needs a component name")?),
            "--save" => save = Some(args.next().ok_or("--save needs a file")?),
            "--load" => load = Some(args.next().ok_or("--load needs a file")?),
            "--csv" => csv = true,
            "--tests-only" => tests_only = true,
            "--spread-only" => spread_only = true,
            "--max-lut" => max_lut = Some(args.next().ok_or("--max-lut needs a number")?.parse::<u64>()?),
            other => return Err(format!("unknown argument `{other}`").into()),
        }
    }
    let samples: Vec<Sample> = if let Some(f) = &load {
        serde_json::from_str(&std::fs::read_to_string(f)?)?
    } else {
        let mut v = Vec::new();
        for c in registry() {
            if !selected(&only, c.name()) {
                continue;
            }
            for o in fit_set(*c, tests_only, spread_only) {
                let est = c.resources(&resolve_params(*c, &o)?);
                if max_lut.is_some_and(|m| est.lut > m) {
                    eprintln!("{} {:?}: skipped (estimate {} LUTs)", c.name(), o, est.lut);
                    continue;
                }
                let r = synth_component(c.name(), &o)?;
                eprintln!("{} {:?}: {:.1} s", c.name(), o, r.synth_s);
                v.push(Sample { component: c.name().into(), overrides: o, measured: measured(&r) });
                // Saved as it goes, so an interrupted run keeps what it measured.
                if let Some(f) = &save {
                    std::fs::write(f, serde_json::to_string_pretty(&v)?)?;
                }
            }
        }
        v
    };
    let mut per: BTreeMap<String, Tally> = BTreeMap::new();
    let mut all = Tally::default();
    for s in &samples {
        if !selected(&only, &s.component) {
            continue;
        }
        let c = lookup(&s.component)?;
        let p = resolve_params(c, &s.overrides)?;
        // The estimate sees the memory contents Yosys synthesized the instance with.
        let e = c.resources_with_memories(&p, &synth_stimulus(c, &p).memories);
        let m = &s.measured;
        if csv {
            let vals: Vec<String> = p.iter().map(|(k, v)| format!("{k}={v}")).collect();
            println!(
                "{},{},{},{},{},{},{},{},{},{},{}",
                s.component,
                m.lut,
                e.lut,
                m.ff,
                e.ff,
                m.dsp,
                e.dsp,
                m.bram18,
                e.bram18,
                m.lutram,
                vals.join(",")
            );
        } else {
            let ov: Vec<String> = s.overrides.iter().map(|(k, v)| format!("{k}={v}")).collect();
            println!(
                "{:<15} lut {:>6}/{:<6} ff {:>6}/{:<6} dsp {:>3}/{:<3} bram18 {:>3}/{:<3} lutram {:>4}/{:<4} {}",
                s.component,
                e.lut,
                m.lut,
                e.ff,
                m.ff,
                e.dsp,
                m.dsp,
                e.bram18,
                m.bram18,
                e.lutram,
                m.lutram,
                ov.join(" ")
            );
        }
        per.entry(s.component.clone()).or_default().add(&e, m);
        all.add(&e, m);
    }
    println!(
        "\n{:<16} {:>4}  {:>9}  {:>8}  {:>9}  {:>10}  {:>12}",
        "component", "n", "LUT |err|", "FF |err|", "DSP exact", "BRAM exact", "LUTRAM exact"
    );
    for (c, t) in &per {
        t.print(c);
    }
    all.print("all");
    let lut_ok = per.values().all(|t| median(t.lut.clone()) <= 0.2);
    let exact = per.values().all(|t| t.dsp_bad == 0 && t.bram_bad == 0);
    println!(
        "target (per component: median |LUT error| <= 20 %, DSP and BRAM exact): LUT {}, DSP/BRAM {}",
        if lut_ok { "met" } else { "missed" },
        if exact { "met" } else { "missed" }
    );
    Ok(())
}
