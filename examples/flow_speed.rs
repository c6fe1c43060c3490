//! Wall time of the whole flow (import, analysis passes, quantization, hardware passes, emit) on
//! one ONNX model, meant for a MiniLM-sized BERT encoder layer (hidden 384, 12 heads, FFN 1536,
//! seq 16). Not part of `cargo test`.
//!
//! ```text
//! python3 scripts/make_fixtures.py --minilm /tmp/minilm.onnx
//! cargo run --release --example flow_speed -- /tmp/minilm.onnx
//! ```
//!
//! The flow runs [`RUNS`] times with the default configuration (auto precision from four seeded
//! calibration samples), each time into a fresh project directory under the system temporary
//! directory that is removed afterwards. For each run it prints the milliseconds of every step as
//! `run_flow` measured them and the wall time of the call; then the design figures of the last
//! run. The quantize step is then split, outside `run_flow`, into calibration statistics
//! (`software_stats`) and format choice (`auto_precision`), with the same public functions and
//! arguments the flow uses.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use mase_emit::flow::{run_flow, seeded_inputs, FlowOptions};
use mase_ir::onnx::{import_bytes, ImportOptions};
use mase_ir::passes::add_software_metadata::{software_stats, StatsOptions};
use mase_ir::passes::auto_precision::auto_precision;

/// How many times the whole flow runs.
const RUNS: usize = 3;

/// Calibration samples the flow draws when the configuration does not say (`[calibration]`).
const CALIBRATION_SAMPLES: u64 = 4;

/// A project directory under the system temporary directory that no other process uses.
fn fresh_dir(run: usize) -> Result<PathBuf> {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).context("system clock before 1970")?.as_nanos();
    let dir = std::env::temp_dir().join(format!("mase_flow_speed_{}_{nanos}_{run}", std::process::id()));
    if dir.exists() {
        bail!("{} already exists", dir.display());
    }
    Ok(dir)
}

/// Milliseconds since `t`.
fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() -> Result<()> {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!(
            "usage: flow_speed MODEL.onnx\n\
             make the MiniLM-sized layer with: python3 scripts/make_fixtures.py --minilm /tmp/minilm.onnx\n\
             then: cargo run --release --example flow_speed -- /tmp/minilm.onnx"
        );
        std::process::exit(2);
    };
    let bytes = std::fs::read(&path).with_context(|| {
        format!("reading {path} (make it with: python3 scripts/make_fixtures.py --minilm {path})")
    })?;
    println!("model: {path} ({} bytes)", bytes.len());

    let mut last = None;
    for run in 1..=RUNS {
        let dir = fresh_dir(run)?;
        let t = Instant::now();
        let result = run_flow(&bytes, &FlowOptions::new(path.clone(), &dir));
        let total = ms(t);
        let removed = if dir.exists() { std::fs::remove_dir_all(&dir) } else { Ok(()) };
        let flow = result.with_context(|| format!("flow on {path}"))?;
        removed.with_context(|| format!("removing {}", dir.display()))?;
        let steps: Vec<String> = flow.times_ms.iter().map(|(s, t)| format!("{s} {t:.1}")).collect();
        let quantize = flow.times_ms.iter().find(|(s, _)| *s == "quantize").map_or(0.0, |(_, t)| *t);
        println!(
            "run {run}: total {total:.1} ms | {} | quantize (calibration + formats) {quantize:.1} ms, {:.0}% \
             of total | {} files",
            steps.join(", "),
            100.0 * quantize / total,
            flow.emitted.files.len()
        );
        last = Some(flow);
    }

    if let Some(flow) = last {
        let r = &flow.emitted.report;
        let counts: Vec<String> = r.instance_counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
        println!(
            "design {}: ii {} cycles/inference (slowest {}), latency estimate {} cycles, {} multipliers, \
             {} memory bits, instances: {}",
            r.top,
            r.ii_cycles,
            r.slowest,
            r.latency_cycles_estimate,
            r.multipliers,
            r.memory_bits,
            counts.join(", ")
        );
    }

    // The quantize step of the default configuration, split into its two halves.
    let opts = ImportOptions::default();
    let graph = import_bytes(&bytes, &path, &opts)?;
    let chain = ["init_metadata", "add_common_metadata", "remove_dropout", "validate"];
    let (graph, _) = mase_ir::pass::run_passes(graph, &chain, &toml::Table::new())?;
    let auto = mase_emit::config::AutoPrecision::default().options()?;
    for run in 1..=RUNS {
        let t = Instant::now();
        let samples: Vec<HashMap<_, _>> = (0..CALIBRATION_SAMPLES)
            .map(|s| seeded_inputs(&graph, 10 + s))
            .collect::<mase_ir::Result<_>>()?;
        let t_inputs = ms(t);
        let t = Instant::now();
        let stats = software_stats(graph.clone(), &samples, &StatsOptions::default())?;
        let t_stats = ms(t);
        let t = Instant::now();
        auto_precision(stats, &auto)?;
        let t_auto = ms(t);
        println!(
            "quantize split {run}: seeded inputs {t_inputs:.1} ms, software_stats ({CALIBRATION_SAMPLES} \
             samples) {t_stats:.1} ms, auto_precision {t_auto:.1} ms"
        );
    }
    Ok(())
}
