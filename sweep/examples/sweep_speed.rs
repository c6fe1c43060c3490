//! Sweep speed: a 200-point sweep of the fixture classifier MLP (`mlp_classifier`, 16 → 32 → 10) with
//! golden-model accuracy on its 360 labelled evaluation rows, at `-j 1` and `-j 2` (fresh
//! output directories, so nothing is cached; the fastest of five runs each for the fixture), then a `-j 2` sweep
//! again (every point from the cache). Prints the times and the speedup; asserts nothing.
//!
//! `cargo run --release -p mase-sweep --example sweep_speed [MODEL.onnx INPUT POINTS]` — with a
//! model (e.g. the MiniLM-sized layer of `make_fixtures.py --minilm`), it sweeps `POINTS`
//! (default 50) seeded points of a width × weight-width × target-ii product (widths up to 16:
//! the softmax component takes at most 16-bit inputs) with seeded calibration and evaluation
//! inputs (`INPUT` names the graph input, for the message only).

use std::path::PathBuf;
use std::time::Instant;

use mase_sweep::{Data, SweepConfig, SweepOptions};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name)
}

/// Fresh runs per `-j` setting for the fixture MLP (a given model, whose sweep takes minutes,
/// runs once per setting).
const REPEATS: usize = 5;

fn run(opts: &SweepOptions) -> (f64, mase_sweep::SweepOutcome) {
    let t = Instant::now();
    let o = mase_sweep::run_sweep(opts).expect("sweep runs");
    (t.elapsed().as_secs_f64(), o)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tmp = tempfile::tempdir().expect("temporary directory");
    let (model, text, data) = if let Some(model) = args.first() {
        println!(
            "model         {model} (graph input {}), seeded inputs",
            args.get(1).map_or("?", String::as_str)
        );
        let points: usize = args.get(2).and_then(|p| p.parse().ok()).unwrap_or(50);
        let text = format!(
            "[calibration]\nsamples = 2\n[sweep]\nwidth = [6, 8, 10, 12, 14, 16]\n\
             weight_width = [4, 5, 6, 8]\ntarget_ii = [20000, 40000, 80000, 160000]\nsamples = {points}\n"
        );
        (PathBuf::from(model), text, Data::default())
    } else {
        let text = "[sweep]\nwidth = [4, 6, 8, 10, 12, 16, 20, 24]\nweight_width = [4, 5, 6, 8, 10]\n\
                    multiplier_budget = [20, 40, 80, 160, 640]\n"
            .to_string();
        let mut data = Data::default();
        data.calibrate.insert("x".into(), vec![fixture("mlp_classifier.calib.x.npy")]);
        data.eval.insert("x".into(), vec![fixture("mlp_classifier.eval.x.npy")]);
        data.labels = Some(fixture("mlp_classifier.eval.labels.npy"));
        (fixture("mlp_classifier.onnx"), text, data)
    };
    let config =
        SweepConfig::from_table(text.parse().expect("valid TOML"), "sweep_speed", None).expect("config");
    let opts = |jobs: usize, dir: &str| SweepOptions {
        model: model.clone(),
        config: config.clone(),
        data: data.clone(),
        jobs,
        shard: None,
        verify: 0,
        synth: 0,
        pnr: 0,
        out_dir: tmp.path().join(dir),
        progress: false,
        cache_dir: None,
        front_rank: None,
    };
    // The fastest of REPEATS fresh runs each, `-j 1` and `-j 2` alternating (the sweep takes well
    // under a second, so one run measures the machine's noise as much as the sweep).
    let mut j1: Vec<(f64, mase_sweep::SweepOutcome)> = Vec::new();
    let mut j2: Vec<(f64, mase_sweep::SweepOutcome)> = Vec::new();
    let repeats = if args.is_empty() { REPEATS } else { 1 };
    for k in 0..repeats {
        j1.push(run(&opts(1, &format!("j1_{k}"))));
        j2.push(run(&opts(2, &format!("j2_{k}"))));
    }
    let fastest = |mut v: Vec<(f64, mase_sweep::SweepOutcome)>| {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v.swap_remove(0)
    };
    let ((t1, o1), (t2, o2)) = (fastest(j1), fastest(j2));
    let failed = o1.points.iter().filter(|p| p.error.is_some()).count();
    println!(
        "points        {} ({} failed to build), {} on the front",
        o1.points.len(),
        failed,
        o1.points.iter().filter(|p| p.pareto).count()
    );
    println!("-j 1          {t1:.2} s ({:.1} ms/point)", t1 * 1e3 / o1.points.len() as f64);
    println!("-j 2          {t2:.2} s, speedup {:.2}x (fastest of {repeats} runs each)", t1 / t2);
    let (t3, o3) = run(&opts(2, "j2_0"));
    println!("rerun (cache) {t3:.3} s, {} evaluated, {} cached", o3.evaluated, o3.cached);
    let same = std::fs::read(tmp.path().join("j1_0/points.csv")).ok()
        == std::fs::read(tmp.path().join("j2_0/points.csv")).ok();
    println!("-j 1 and -j 2 points.csv identical: {same} ({} vs {} evaluated)", o1.evaluated, o2.evaluated);
}
