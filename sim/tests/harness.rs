//! The harness's own behaviour on real Verilator builds: scoreboard reports, VCD window around a
//! mismatch, deadlock watchdog, build cache and concurrent builds, bench report keys. Needs
//! Verilator (fails loudly without one).

use mase_hwlib::{lookup, resolve_params, Component, Params, StreamValues};
use mase_sim::{
    bench_component, build, component_build_spec, run_streams, simulate_component, Model, RunConfig, SimError,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn instance(name: &str, ov: &[(&str, i64)]) -> (&'static dyn Component, Params) {
    let c = lookup(name).unwrap();
    let p = resolve_params(c, ov).unwrap();
    (c, p)
}

#[test]
fn scoreboard_names_stream_element_and_cycle_and_vcd_covers_the_window() {
    let (c, p) = instance("relu", &[]);
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let stim = c.random_stimulus(&p, 6, &mut rng);
    let mut expected = c.model(&p, &stim).unwrap();
    // Corrupt element 9 of the expectation: the scoreboard must point at exactly it.
    expected["data_out_0"][9] ^= 1;
    let spec = component_build_spec(c, &p, &stim, false).unwrap();
    let mut m = Model::new(&build(&spec).unwrap()).unwrap();
    let cfg = RunConfig { seed: 3, stall_prob: 0.3, ..RunConfig::default() };
    let r = run_streams(&mut m, &c.streams(&p), &stim.inputs, &expected, &cfg).unwrap();
    assert_eq!(r.mismatch_count, 1);
    let mm = &r.mismatches[0];
    assert_eq!((mm.stream.as_str(), mm.index, mm.beat, mm.lane), ("data_out_0", 9, 2, 1));
    assert_eq!(mm.actual, r.outputs["data_out_0"][9]);
    assert!(mm.to_string().contains("data_out_0[9]"));

    // Same run on the traced build, dumping cycles around the mismatch.
    let dir = tempfile::tempdir().unwrap();
    let vcd = dir.path().join("win.vcd");
    let (from, to) = (mm.cycle.saturating_sub(4), mm.cycle + 4);
    let traced = build(&component_build_spec(c, &p, &stim, true).unwrap()).unwrap();
    assert_ne!(traced.key, build(&spec).unwrap().key, "traced build must be a separate cache entry");
    let mut tm = Model::new(&traced).unwrap();
    let cfg = RunConfig { vcd: Some((vcd.clone(), from, to)), ..cfg };
    let r2 = run_streams(&mut tm, &c.streams(&p), &stim.inputs, &expected, &cfg).unwrap();
    assert_eq!(r2.mismatches, r.mismatches, "traced rerun must reproduce the run");
    let text = std::fs::read_to_string(&vcd).unwrap();
    assert!(text.contains("$enddefinitions") && text.contains("data_out_0"), "VCD header missing");
    let times: Vec<u64> =
        text.lines().filter_map(|l| l.strip_prefix('#')).filter_map(|t| t.trim().parse().ok()).collect();
    assert!(!times.is_empty());
    assert!(times.iter().all(|t| *t >= 2 * from && *t <= 2 * to + 1), "VCD outside window: {times:?}");
}

#[test]
fn watchdog_names_the_starved_output_stream() {
    let (c, p) = instance("fifo", &[("DEPTH", 4)]);
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let stim = c.random_stimulus(&p, 5, &mut rng);
    let mut expected: StreamValues = c.model(&p, &stim).unwrap();
    expected["data_out_0"].extend([1, 2, 3]); // three beats the FIFO never gets
    let mut m = Model::new(&build(&component_build_spec(c, &p, &stim, false).unwrap()).unwrap()).unwrap();
    let cfg = RunConfig { watchdog_cycles: 200, ..RunConfig::default() };
    match run_streams(&mut m, &c.streams(&p), &stim.inputs, &expected, &cfg) {
        Err(SimError::Deadlock { detail, .. }) => {
            assert!(detail.contains("`data_out_0` 5/8 beats, output starved"), "{detail}")
        }
        other => panic!("expected a deadlock, got {other:?}"),
    }
}

#[test]
fn concurrent_builds_of_one_design_build_once_and_repeat_is_a_cache_hit() {
    let (c, p) = instance("skid_buffer", &[("DATA_WIDTH", 37), ("LANES", 3)]);
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let stim = c.random_stimulus(&p, 4, &mut rng);
    let spec = component_build_spec(c, &p, &stim, false).unwrap();
    let (a, b) = std::thread::scope(|s| {
        let ha = s.spawn(|| build(&spec).unwrap());
        let hb = s.spawn(|| build(&spec).unwrap());
        (ha.join().unwrap(), hb.join().unwrap())
    });
    assert_eq!(a.key, b.key);
    assert!(a.cache_hit || b.cache_hit, "both threads built the same key");
    let again = build(&spec).unwrap();
    assert!(again.cache_hit && again.lib == a.lib);
    // Two instances of one library in two threads simulate independently.
    std::thread::scope(|s| {
        for seed in [1u64, 2] {
            let (stim, p) = (&stim, &p);
            s.spawn(move || {
                let cfg = RunConfig { seed, stall_prob: 0.5, ..RunConfig::default() };
                let r = simulate_component(c, p, stim, &cfg).unwrap();
                assert_eq!(r.run.mismatch_count, 0);
            });
        }
    });
}

#[test]
fn bench_report_has_the_cli_keys_and_matches_the_cost_model() {
    let r = bench_component("relu", &[("DATA_IN_0_TENSOR_SIZE_DIM_0".into(), 16)], 16, 9, 0.2).unwrap();
    let json = serde_json::to_value(&r).unwrap();
    for k in [
        "bit_exact",
        "mismatches",
        "latency_cycles",
        "ii_cycles",
        "multipliers",
        "sim_cycles_per_s",
        "build_s",
        "cache_hit",
    ] {
        assert!(json.get(k).is_some(), "missing key {k}");
    }
    assert!(r.bit_exact && r.mismatches == 0);
    assert_eq!(r.latency_cycles, r.model_latency_cycles);
    assert_eq!(r.ii_cycles, r.model_ii_cycles as f64);
    let e = bench_component("relu", &[("DATA_IN_0_PARALLELISM_DIM_0".into(), 3)], 4, 1, 0.0).unwrap_err();
    assert!(
        e.to_string().contains("DATA_IN_0_PARALLELISM_DIM_0 (3) must divide DATA_IN_0_TENSOR_SIZE_DIM_0 (8)"),
        "{e}"
    );
    let e = bench_component("relu", &[("NOPE".into(), 3)], 4, 1, 0.0).unwrap_err();
    assert!(e.to_string().contains("no parameter `NOPE`"), "{e}");
}

/// `name` at rows of `len` elements, two lanes, at each of `folds` (full rate and folded forms of
/// one row shape), simulated (Verilator, random stalls) with `seed`: each is bit-exact and
/// measures the ii and latency its cost model gives. Returns (model ii, multipliers) per fold.
fn fold_figures(name: &str, len: i64, folds: &[i64], seed: u64) -> Vec<(u64, u64)> {
    folds
        .iter()
        .map(|&fold| {
            let ov = [
                ("DATA_IN_0_TENSOR_SIZE_DIM_0".to_string(), len),
                ("DATA_IN_0_PARALLELISM_DIM_0".to_string(), 2),
                ("FOLD".to_string(), fold),
            ];
            let r = bench_component(name, &ov, 10, seed, 0.3).unwrap();
            assert!(r.bit_exact && r.mismatches == 0, "{name} FOLD={fold}: {} mismatches", r.mismatches);
            assert_eq!(r.latency_cycles, r.model_latency_cycles, "{name} FOLD={fold} latency");
            assert_eq!(r.ii_cycles, r.model_ii_cycles as f64, "{name} FOLD={fold} ii");
            (r.model_ii_cycles, r.multipliers)
        })
        .collect()
}

#[test]
fn folded_layer_norm_measures_the_ii_and_latency_its_cost_model_gives() {
    // Full rate and folded forms of one row shape: the measured ii and latency are the cost
    // model's, and folding trades rate for multipliers.
    let figures = fold_figures("layer_norm", 24, &[1, 3, 4], 5);
    assert_eq!(figures[0].0 * 3, figures[1].0, "FOLD=3 runs at a third of the rate");
    // FOLD = 4 lends lane 0's free phase to the 1/sqrt unit: one multiplier fewer than FOLD = 3.
    assert!(figures[1].1 < figures[0].1 && figures[2].1 + 1 == figures[1].1, "multipliers {figures:?}");
}

#[test]
fn folded_softmax_measures_the_ii_and_latency_its_cost_model_gives() {
    let figures = fold_figures("softmax", 12, &[1, 2], 3);
    assert_eq!(figures[0].0 * 2, figures[1].0, "FOLD=2 runs at half the rate");
    assert_eq!(figures[1].1 + 2, figures[0].1, "one multiplier per lane fewer: {figures:?}");
}
