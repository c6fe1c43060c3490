//! The resource model (`Component::resources`) against Yosys `synth_xilinx` on small instances:
//! DSP, block RAM and LUT RAM exact, LUT and FF within the model's tolerance. The whole fit set
//! (minutes) is `cargo run -p mase-sim --example resource_fit`. Needs Yosys on PATH.

/// Relative error of `est` against `meas`.
fn rel(est: u64, meas: u64) -> f64 {
    (est as f64 - meas as f64).abs() / (meas.max(1) as f64)
}

#[test]
fn resource_model_matches_yosys_on_small_instances() {
    let cases: Vec<(&str, Vec<(String, i64)>)> = vec![
        ("relu", vec![]),
        // A row selection at its defaults: the output skid buffer and three small counters.
        ("row_select", vec![]),
        // An embedding at its defaults: a 10 x 8 table of s8.6 in one block RAM, four lanes.
        ("embedding", vec![]),
        ("skid_buffer", vec![("DATA_WIDTH".into(), 13), ("LANES".into(), 3)]),
        // A scalar multiply at its defaults: four lanes of 8 x 6 bits on four DSPs with their
        // product registers (a shared product register once lost three lanes in synth_xilinx).
        ("mul", vec![]),
        // An 8-bit linear with one DSP, a weight ROM in block RAM and a LUT-RAM row buffer.
        (
            "linear",
            vec![
                ("DATA_IN_0_TENSOR_SIZE_DIM_0".into(), 5),
                ("DATA_IN_0_PARALLELISM_DIM_0".into(), 1),
                ("WEIGHT_TENSOR_SIZE_DIM_1".into(), 3),
                ("WEIGHT_PARALLELISM_DIM_1".into(), 1),
            ],
        ),
        // A link of four flits per beat: rotating sender, LUT-RAM receiver buffer, SRL link model.
        (
            "link",
            vec![
                ("DATA_WIDTH".into(), 16),
                ("LANES".into(), 4),
                ("LINK_WIDTH".into(), 16),
                ("LATENCY".into(), 3),
                ("DEPTH".into(), 4),
            ],
        ),
        // A deep FIFO: block RAM, not LUT RAM.
        ("fifo", vec![("DEPTH".into(), 1024), ("DATA_WIDTH".into(), 16)]),
        // The stitcher's FIFO: the block RAM's read registered once more in FFs.
        ("fifo", vec![("DEPTH".into(), 1024), ("DATA_WIDTH".into(), 16), ("OUT_REG".into(), 1)]),
        // Softmax at its defaults: products at the widths Yosys keeps, exp tables in block RAM,
        // FIFOs in block and distributed RAM by memory_libmap's costs.
        ("softmax", vec![]),
        // Unfolded layer_norm over a row of 7 (one of its test sets): constant factors D = 7 in
        // the statistics and the per-lane centring, the Newton products of the 1/sqrt unit, the
        // per-slot statistics in distributed RAM.
        (
            "layer_norm",
            [
                ("DATA_IN_0_PRECISION_0", 4),
                ("DATA_IN_0_PRECISION_1", 2),
                ("WEIGHT_PRECISION_0", 3),
                ("WEIGHT_PRECISION_1", 1),
                ("BIAS_PRECISION_0", 2),
                ("BIAS_PRECISION_1", 1),
                ("DATA_OUT_0_PRECISION_0", 6),
                ("DATA_OUT_0_PRECISION_1", 3),
                ("DATA_IN_0_TENSOR_SIZE_DIM_0", 7),
                ("DATA_IN_0_PARALLELISM_DIM_0", 1),
                ("DATA_OUT_0_ROUNDING", 6),
                ("DATA_OUT_0_OVERFLOW", 3),
                ("EPS", 1),
                ("EPS_FRAC", 5),
                ("NORM_FRAC", 8),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        ),
    ];
    let mut failures = Vec::new();
    for (name, ov) in &cases {
        let r = mase_sim::synth_component(name, ov).unwrap_or_else(|e| panic!("{name} {ov:?}: {e}"));
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
