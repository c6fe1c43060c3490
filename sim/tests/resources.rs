//! The resource model (`Component::resources`) against Yosys `synth_xilinx` on small instances:
//! DSP, block RAM and LUT RAM exact, LUT and FF within the model's tolerance. The whole fit set
//! (minutes) is `cargo run -p mase-sim --example resource_fit`. Needs Yosys on PATH.

use mase_hwlib::overrides::{layer_formats, modes, row};
use rayon::prelude::*;

/// Relative error of `est` against `meas`.
fn rel(est: u64, meas: u64) -> f64 {
    (est as f64 - meas as f64).abs() / (meas.max(1) as f64)
}

/// Parameter overrides as `synth_component` takes them.
fn ov(pairs: &[(&str, i64)]) -> Vec<(String, i64)> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn resource_model_matches_yosys_on_small_instances() {
    let cases: Vec<(&str, Vec<(String, i64)>)> = vec![
        ("relu", vec![]),
        // A row selection at its defaults: the output skid buffer and three small counters.
        ("row_select", vec![]),
        // An embedding at its defaults: a 10 x 8 table of s8.6 in one block RAM, four lanes.
        ("embedding", vec![]),
        ("skid_buffer", ov(&[("DATA_WIDTH", 13), ("LANES", 3)])),
        // A scalar multiply at its defaults: four lanes of 8 x 6 bits on four DSPs with their
        // product registers (a shared product register once lost three lanes in synth_xilinx).
        ("mul", vec![]),
        // An 8-bit linear with one DSP, a weight ROM in block RAM and a LUT-RAM row buffer.
        (
            "linear",
            ov(&[row(5, 1), vec![("WEIGHT_TENSOR_SIZE_DIM_1", 3), ("WEIGHT_PARALLELISM_DIM_1", 1)]].concat()),
        ),
        // A link of four flits per beat: rotating sender, LUT-RAM receiver buffer, SRL link model.
        ("link", ov(&[("DATA_WIDTH", 16), ("LANES", 4), ("LINK_WIDTH", 16), ("LATENCY", 3), ("DEPTH", 4)])),
        // A deep FIFO: block RAM, not LUT RAM.
        ("fifo", ov(&[("DEPTH", 1024), ("DATA_WIDTH", 16)])),
        // The block RAM's read registered once more in FFs.
        ("fifo", ov(&[("DEPTH", 1024), ("DATA_WIDTH", 16), ("OUT_REG", 1)])),
        // The stitcher's join FIFO: also its input and its not-full flag registered and its
        // memory free of collision checks.
        (
            "fifo",
            ov(&[
                ("DEPTH", 552),
                ("DATA_WIDTH", 16),
                ("OUT_REG", 1),
                ("IN_REG", 1),
                ("READY_REG", 1),
                ("NO_RW_CHECK", 1),
            ]),
        ),
        // Softmax at its defaults: products at the widths Yosys keeps, exp tables in block RAM,
        // FIFOs in block and distributed RAM by memory_libmap's costs.
        ("softmax", vec![]),
        // Unfolded layer_norm over a row of 7 (one of its test sets): constant factors D = 7 in
        // the statistics and the per-lane centring, the Newton products of the 1/sqrt unit, the
        // per-slot statistics in distributed RAM.
        (
            "layer_norm",
            ov(&[
                layer_formats((4, 2), (3, 1), (2, 1), (6, 3)),
                row(7, 1),
                modes(6, 3),
                vec![("EPS", 1), ("EPS_FRAC", 5), ("NORM_FRAC", 8)],
            ]
            .concat()),
        ),
    ];
    // One Yosys per core: the runs are independent, and one at a time left a core idle for the
    // whole test (the provisioned WebAssembly Yosys takes about 20 s per case).
    let reports: Vec<_> = cases
        .par_iter()
        .map(|(name, ov)| mase_sim::synth_component(name, ov).map_err(|e| format!("{name} {ov:?}: {e}")))
        .collect();
    let mut failures = Vec::new();
    for ((name, ov), r) in cases.iter().zip(reports) {
        let r = match r {
            Ok(r) => r,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let e = r.estimate;
        let exact = [("dsp", e.dsp, r.dsp), ("bram18", e.bram18, r.bram18), ("lutram", e.lutram, r.lutram)];
        for (k, est, meas) in exact {
            if est != meas {
                failures.push(format!("{name} {ov:?}: {k} estimate {est}, Yosys {meas}"));
            }
        }
        for (k, est, meas) in [("lut", e.lut, r.lut), ("ff", e.ff, r.ff)] {
            if rel(est, meas) > 0.25 {
                failures.push(format!("{name} {ov:?}: {k} estimate {est}, Yosys {meas} (> 25 % off)"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
