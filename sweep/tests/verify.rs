//! `--verify 2 --synth 1` on the labelled fixture MLP: the two most accurate Pareto points are
//! emitted and simulated under Verilator with random stalls; both must be bit-exact against the
//! golden model, and the measured ii (with stalls) must not beat the cost model's figure by more
//! than 10%. The most accurate one is synthesized with Yosys: DSPs and block RAMs as estimated.

use std::path::PathBuf;

use mase_sweep::{Data, SweepConfig, SweepOptions};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name)
}

#[test]
fn verify_two_pareto_points_bit_exact_and_synthesize_one() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "[sweep]\nwidth = [8, 12]\nweight_width = [8]\nmultiplier_budget = [40, 400]\n";
    let config = SweepConfig::from_table(text.parse().unwrap(), "SWEEP.toml", None).unwrap();
    let mut data = Data::default();
    data.calibrate.insert("x".into(), vec![fixture("mlp_classifier.calib.x.npy")]);
    data.eval.insert("x".into(), vec![fixture("mlp_classifier.eval.x.npy")]);
    data.labels = Some(fixture("mlp_classifier.eval.labels.npy"));
    let opts = SweepOptions {
        model: fixture("mlp_classifier.onnx"),
        config,
        data,
        jobs: 1,
        shard: None,
        verify: 2,
        synth: 1,
        pnr: 0,
        out_dir: tmp.path().join("s"),
        progress: false,
        cache_dir: None,
        front_rank: None,
    };
    let o = mase_sweep::run_sweep(&opts).unwrap();
    assert_eq!(o.steps.verified.len(), 2, "{:?}", o.steps.verified);
    for v in &o.steps.verified {
        assert!(v.bit_exact, "{v:?}");
        let p = o.points.iter().find(|p| p.id == v.id).unwrap();
        assert!(p.pareto);
        assert_eq!(v.model_ii, p.metrics.as_ref().unwrap().ii_cycles);
        let ii = v.measured_ii.expect("4 inferences give a measured ii");
        assert!(ii >= v.model_ii as f64 * 0.9, "{v:?}");
    }
    assert!(tmp.path().join("s/verify.json").exists());
    assert_eq!(o.steps.synthesized.len(), 1, "{:?}", o.steps.synthesized);
    let s = &o.steps.synthesized[0];
    assert_eq!(s.id, o.steps.verified[0].id, "both take the front's most accurate point first");
    let m = o.points.iter().find(|p| p.id == s.id).unwrap().metrics.clone().unwrap();
    assert_eq!(
        (s.estimate.lut, s.estimate.dsp),
        (m.lut, m.dsp),
        "the sweep ranked the point by this estimate"
    );
    assert!(s.measured.lut > 0, "{s:?}");
    assert_eq!((s.measured.dsp, s.measured.bram18), (s.estimate.dsp, s.estimate.bram18), "{s:?}");
    assert!(tmp.path().join("s/synth.json").exists());
}
