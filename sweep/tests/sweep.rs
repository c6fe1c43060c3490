//! Sweeps of the labelled fixture MLP (`mlp_classifier`, a trained 16 → 32 → 10 classifier from `make_fixtures.py
//! --mlp-classifier`): the front is non-dominated and complete, the best 8-bit point keeps the float
//! model's accuracy, a rerun takes every point from the cache, merged shards equal the
//! unsharded sweep byte for byte, a point's `mase flow` configuration rebuilds the same design,
//! and bad configurations are errors that list what is valid. No Verilator here (see
//! verify.rs).

use std::path::{Path, PathBuf};

use mase_sweep::{Data, PointResult, Shard, SweepConfig, SweepOptions};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name)
}

const AXES: &str = r#"
[passes.auto_precision]
range = "min_max"
[sweep]
width = [6, 8, 12]
weight_width = [4, 8]
multiplier_budget = [1, 40, 400]
"#;

fn options(toml_text: &str, out: &Path) -> SweepOptions {
    let table: toml::Table = toml_text.parse().unwrap();
    let config = SweepConfig::from_table(table, "SWEEP.toml", None).unwrap();
    let mut data = Data::default();
    data.calibrate.insert("x".into(), vec![fixture("mlp_classifier.calib.x.npy")]);
    data.eval.insert("x".into(), vec![fixture("mlp_classifier.eval.x.npy")]);
    data.labels = Some(fixture("mlp_classifier.eval.labels.npy"));
    SweepOptions {
        model: fixture("mlp_classifier.onnx"),
        config,
        data,
        jobs: 2,
        shard: None,
        verify: 0,
        synth: 0,
        pnr: 0,
        out_dir: out.to_path_buf(),
        progress: false,
        cache_dir: None,
        front_rank: None,
    }
}

/// `(accuracy, LUTs, DSPs, ii)` of a built point: what the issue's front is over.
fn objectives(p: &PointResult) -> (f64, u64, u64, u64) {
    let m = p.metrics.as_ref().unwrap();
    (m.top1.unwrap(), m.lut, m.dsp, m.ii_cycles)
}

/// `a` at least as good as `b` everywhere and better somewhere (written out here, independent
/// of the crate's own function).
fn better(a: (f64, u64, u64, u64), b: (f64, u64, u64, u64)) -> bool {
    let ge = a.0 >= b.0 && a.1 <= b.1 && a.2 <= b.2 && a.3 <= b.3;
    ge && (a.0 > b.0 || a.1 < b.1 || a.2 < b.2 || a.3 < b.3)
}

const OUTPUTS: [&str; 5] = ["points.csv", "points.json", "pareto.csv", "pareto.svg", "README.md"];

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> =
        OUTPUTS.iter().map(|f| (f.to_string(), std::fs::read(dir.join(f)).unwrap())).collect();
    let mut configs: Vec<_> =
        std::fs::read_dir(dir.join("configs")).unwrap().flatten().map(|e| e.path()).collect();
    configs.sort();
    for c in configs {
        out.push((c.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&c).unwrap()));
    }
    out
}

#[test]
fn front_accuracy_cache_and_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let full = tmp.path().join("full");
    let opts = options(AXES, &full);
    let o = mase_sweep::run_sweep(&opts).unwrap();
    assert_eq!((o.points.len(), o.evaluated, o.cached), (18, 18, 0));

    // Budget 1 is below what the MLP needs at any parallelism: those points fail with the
    // flow's message; the others are built.
    let failed: Vec<&PointResult> = o.points.iter().filter(|p| p.error.is_some()).collect();
    assert!(failed.iter().all(|p| p.spec.rate == Some(mase_sweep::Rate::MultiplierBudget(1))), "{failed:?}");
    let built: Vec<&PointResult> = o.points.iter().filter(|p| p.metrics.is_some()).collect();
    assert!(built.len() >= 12, "{} built", built.len());

    // The front: no point beats a front point, and every other built point is beaten.
    for p in &built {
        let beaten = built.iter().any(|q| better(objectives(q), objectives(p)));
        assert_eq!(p.pareto, !beaten, "{} pareto flag {} but beaten = {beaten}", p.id, p.pareto);
    }
    let csv = std::fs::read_to_string(full.join("points.csv")).unwrap();
    assert!(built.iter().any(|p| p.pareto) && built.iter().any(|p| !p.pareto), "{csv}");

    // Best 8-bit point (activations and weights) within 1 point of the float model.
    let float = built[0].metrics.as_ref().unwrap().float_top1.unwrap();
    let best8 = built
        .iter()
        .filter(|p| p.spec.width == 8 && p.spec.weight_width == 8)
        .map(|p| objectives(p).0)
        .fold(f64::NEG_INFINITY, f64::max);
    assert!((float - best8).abs() <= 0.01, "best 8-bit top-1 {best8} vs float {float}");
    // Narrower settings cost accuracy (cosine against the float model).
    let cos = |w: u32, ww: u32| {
        built
            .iter()
            .find(|p| p.spec.width == w && p.spec.weight_width == ww)
            .unwrap()
            .metrics
            .as_ref()
            .unwrap()
            .cosine
    };
    assert!(cos(6, 4) < cos(12, 8), "cosine 6/4 {} vs 12/8 {}", cos(6, 4), cos(12, 8));

    // The SVG draws every built point and marks the front.
    let svg = std::fs::read_to_string(full.join("pareto.svg")).unwrap();
    assert_eq!(svg.matches("<circle cx").count() - 7, built.len(), "points + 7 legend circles");
    assert_eq!(svg.matches(r#"r="6" fill="rgb"#).count() - 5, built.iter().filter(|p| p.pareto).count());

    // Rerun: everything from the cache, same bytes.
    let before = files(&full);
    let again = mase_sweep::run_sweep(&opts).unwrap();
    assert_eq!((again.evaluated, again.cached), (0, 18));
    assert_eq!(files(&full), before);

    // Three shards, merged, equal the unsharded sweep.
    let mut dirs = Vec::new();
    for i in 0..3 {
        let d = tmp.path().join(format!("shard{i}"));
        let mut s = options(AXES, &d);
        s.shard = Some(Shard { index: i, count: 3 });
        s.jobs = 1;
        let r = mase_sweep::run_sweep(&s).unwrap();
        assert_eq!(r.points.len(), 6);
        dirs.push(d);
    }
    let merged = tmp.path().join("merged");
    mase_sweep::merge(&dirs, &merged).unwrap();
    assert_eq!(files(&merged), before);
    // The merged cache serves a rerun in the merged directory.
    let mut m = options(AXES, &merged);
    m.jobs = 1;
    assert_eq!(mase_sweep::run_sweep(&m).unwrap().evaluated, 0);
}

/// Emits `p` with `mase_emit::flow::run_flow` from its `configs/<id>.toml` and checks that the
/// design is the sweep's: same figures, same `top.sv`.
fn check_point_config_rebuilds(opts: &SweepOptions, p: &PointResult, tmp: &Path) {
    let m = p.metrics.as_ref().unwrap();
    let cfg = mase_emit::FlowConfig::from_file(&opts.out_dir.join("configs").join(format!("{}.toml", p.id)))
        .unwrap();
    let mut fo = mase_emit::flow::FlowOptions::new("mlp", tmp.join(&p.id));
    fo.config = cfg;
    fo.config.calibration.inputs = opts.data.calibrate.clone();
    let onnx = std::fs::read(&opts.model).unwrap();
    let f = mase_emit::flow::run_flow(&onnx, &fo).unwrap();
    let r = &f.emitted.report;
    assert_eq!((r.ii_cycles, r.multipliers, r.memory_bits), (m.ii_cycles, m.multipliers, m.memory_bits));
    let ops: Vec<String> = p.spec.ops.keys().cloned().collect();
    let ctx = mase_sweep::Context::prepare(&onnx, "mlp", &opts.config.base, &opts.data, &ops).unwrap();
    let (_, design) = ctx.build(&p.spec).unwrap();
    let top = std::fs::read_to_string(tmp.join(&p.id).join("top.sv")).unwrap();
    assert_eq!(mase_emit::sv::top_sv(&design), top, "{}", p.id);
    let readme = std::fs::read_to_string(opts.out_dir.join("README.md")).unwrap();
    assert!(!p.pareto || readme.contains(&format!("--config configs/{}.toml", p.id)), "{readme}");
}

#[test]
fn a_points_flow_configuration_rebuilds_its_design() {
    let tmp = tempfile::tempdir().unwrap();
    let opts =
        options("[sweep]\nwidth = [10]\nweight_width = [6]\ntarget_ii = [64]\n", &tmp.path().join("s"));
    let o = mase_sweep::run_sweep(&opts).unwrap();
    check_point_config_rebuilds(&opts, &o.points[0], tmp.path());
}

#[test]
fn per_op_widths_change_only_that_ops_formats() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "[sweep]\nwidth = [8]\n[sweep.ops.relu]\nwidth = [8, 16]\n";
    let opts = options(text, &tmp.path().join("s"));
    let ctx = mase_sweep::Context::prepare(
        &std::fs::read(&opts.model).unwrap(),
        "mlp",
        &opts.config.base,
        &opts.data,
        &["relu".to_string()],
    )
    .unwrap();
    let points = mase_sweep::point::selected(&opts.config);
    assert_eq!(points.len(), 2);
    let widths = |k: usize| {
        let (g, _) = ctx.build(&points[k]).unwrap();
        g.nodes()
            .filter_map(|(_, n)| {
                n.meta
                    .common
                    .results
                    .get("data_out_0")
                    .and_then(|r| r.precision.first().copied())
                    .map(|w| (n.op.mase_op(), w))
            })
            .collect::<Vec<_>>()
    };
    let (a, b) = (widths(0), widths(1));
    assert!(
        a.iter().any(|(op, w)| *op == "relu" && *w == 8) && b.iter().any(|(op, w)| *op == "relu" && *w == 16)
    );
    assert!(b.iter().filter(|(op, _)| *op == "linear").all(|(_, w)| *w == 8), "{b:?}");
    let o = mase_sweep::run_sweep(&opts).unwrap();
    assert!(o.points.iter().all(|p| p.metrics.is_some()), "{:?}", o.points);
    let csv = std::fs::read_to_string(tmp.path().join("s/points.csv")).unwrap();
    assert!(csv.lines().next().unwrap().contains("relu_width"), "{csv}");
    // The per-op point's flow configuration (`[passes.auto_precision.ops.relu]`) rebuilds it.
    check_point_config_rebuilds(&opts, &o.points[1], tmp.path());
}

fn config_error(text: &str) -> String {
    let table: toml::Table = text.parse().unwrap();
    SweepConfig::from_table(table, "SWEEP.toml", None).unwrap_err().to_string()
}

#[test]
fn bad_configurations_are_errors_listing_what_is_valid() {
    let e = config_error("[sweep]\nwidth = [8]\nweight_precision = [8]\n");
    for k in [
        "SWEEP.toml",
        "weight_precision",
        "weight_granularity",
        "width",
        "weight_width",
        "multiplier_budget",
        "target_ii",
        "samples",
        "ops",
    ] {
        assert!(e.contains(k), "{k} missing in: {e}");
    }
    let e = config_error("[sweep.ops.relu]\nwidths = [8]\n");
    assert!(e.contains("widths") && e.contains("`width`"), "{e}");
    let e = config_error("[sweep]\nmultiplier_budget = [8]\ntarget_ii = [100]\n");
    assert!(e.contains("choose one rate axis"), "{e}");
    let e = config_error("[sweep]\nwidth = []\n");
    assert!(e.contains("width = []"), "{e}");
    let e = config_error("[sweep]\nwidth = [80]\n");
    assert!(e.contains("2..=64"), "{e}");
    let e = config_error("[passes.quantize]\nby = \"type\"\n[sweep]\nwidth = [8]\n");
    assert!(e.contains("nothing to sweep"), "{e}");
    let e = config_error("[hardware]\nfoo = 1\n[sweep]\nwidth = [8]\n");
    assert!(e.contains("foo") && e.contains("multiplier_budget"), "{e}");
    let e = config_error("[passes.auto_precision.ops.relu]\nwidths = 8\n[sweep]\nwidth = [8]\n");
    assert!(e.contains("widths") && e.contains("`width`"), "{e}");
    let e = config_error("[passes.auto_precision]\nwidth = 8\n");
    assert!(e.contains("no [sweep] table"), "{e}");
    // An op the model does not have.
    let tmp = tempfile::tempdir().unwrap();
    let opts = options("[sweep]\n[sweep.ops.softmax]\nwidth = [8]\n", &tmp.path().join("s"));
    let e = mase_sweep::run_sweep(&opts).unwrap_err().to_string();
    assert!(e.contains("softmax") && e.contains("linear") && e.contains("relu"), "{e}");
    // Bad shards.
    for s in ["3/3", "1", "a/2", "0/0"] {
        let e = s.parse::<Shard>().unwrap_err().to_string();
        assert!(e.contains("I/N"), "{e}");
    }
}

#[test]
fn samples_draw_a_seeded_subset_and_shards_partition_it() {
    let text = "[sweep]\nwidth = [4, 6, 8, 10, 12]\nweight_width = [4, 6, 8]\nsamples = 7\nseed = 3\n";
    let table: toml::Table = text.parse().unwrap();
    let cfg = SweepConfig::from_table(table, "SWEEP.toml", None).unwrap();
    let a = mase_sweep::point::selected(&cfg);
    assert_eq!(a.len(), 7);
    assert_eq!(a, mase_sweep::point::selected(&cfg), "seeded");
    assert!(a.windows(2).all(|w| w[0].index < w[1].index));
    let mut union: Vec<usize> =
        (0..3).flat_map(|i| Shard { index: i, count: 3 }.slice(a.clone())).map(|p| p.index).collect();
    union.sort_unstable();
    assert_eq!(union, a.iter().map(|p| p.index).collect::<Vec<_>>());
}

#[test]
fn weight_granularity_is_an_axis_and_each_point_rebuilds_with_it() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options(
        "[sweep]\nwidth = [8]\nweight_width = [4]\nweight_granularity = [\"per_tensor\", \"per_channel\"]\n",
        &tmp.path().join("s"),
    );
    let o = mase_sweep::run_sweep(&opts).unwrap();
    let grans: Vec<&str> = o.points.iter().map(|p| p.spec.weight_granularity.as_str()).collect();
    assert_eq!(grans, ["per_tensor", "per_channel"]);
    let csv = std::fs::read_to_string(opts.out_dir.join("points.csv")).unwrap();
    assert!(
        csv.lines().next().unwrap().contains("weight_granularity") && csv.contains("per_channel"),
        "{csv}"
    );
    // The per-channel point's configuration rebuilds its design (per-channel linears included).
    check_point_config_rebuilds(&opts, &o.points[1], tmp.path());
}
