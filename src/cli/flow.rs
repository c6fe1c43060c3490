//! Whole-design commands: `mase emit` (hardware passes + project), `mase sim` (Verilator run of
//! an emitted project against the golden model) and `mase flow` (ONNX to project in one go).

use std::collections::HashMap;
use std::path::Path;

use anyhow::{bail, Context};
use mase_emit::design::PortDir;
use mase_emit::HwConfig;
use mase_ir::fixed::to_f64;
use mase_ir::Tensor;
use mase_sim::{check_project, load_project, Project, RunConfig};

use super::quantize::read_toml;

/// Rate overrides from the command line (`mase emit` and `mase flow`).
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct Rate {
    /// Cycles per input row the slowest stage may take (overrides the hardware configuration).
    #[arg(long, value_name = "CYCLES", conflicts_with = "multiplier_budget")]
    pub target_ii: Option<u64>,
    /// Most multipliers the design may use (overrides the hardware configuration).
    #[arg(long, value_name = "N")]
    pub multiplier_budget: Option<u64>,
}

/// `mase emit PREFIX --config HW.toml -o DIR`.
pub fn emit(prefix: &Path, config: Option<&Path>, rate: Rate, out: &Path) -> anyhow::Result<()> {
    let mut cfg = match config {
        Some(c) => {
            let mut h = HwConfig::from_table(&read_toml(c)?, &c.display().to_string())?;
            h.base_dir = c.parent().map(Path::to_path_buf);
            h
        }
        None => HwConfig::default(),
    };
    if rate.target_ii.is_some() || rate.multiplier_budget.is_some() {
        cfg.target_ii = None;
        cfg.target_ii_per_row = rate.target_ii;
        cfg.multiplier_budget = rate.multiplier_budget;
        cfg = cfg.checked("command line")?;
    }
    let graph = mase_ir::checkpoint::load(prefix)?;
    let (pass, graph, info, design, system) = mase_emit::flow::hardware(graph, &cfg)?;
    let emitted = mase_emit::flow::write_emitted(&graph, &design, system.as_ref(), out)?;
    eprintln!("{pass}: {}", serde_json::to_string(&info)?);
    print_emitted(out, &emitted.report, emitted.files.len(), system.as_ref())?;
    Ok(())
}

fn print_emitted(
    out: &Path,
    r: &mase_emit::report::Report,
    files: usize,
    system: Option<&mase_emit::system::System>,
) -> anyhow::Result<()> {
    if let Some(sys) = system {
        let rep = mase_emit::system_project::system_report(sys)?;
        for d in &rep.devices {
            println!(
                "device     {}: stage ii {} cycles, {} / {} multipliers, {} / {} memory bits ({})",
                d.device.name,
                d.ii_cycles,
                d.multipliers,
                d.device.multipliers,
                d.memory_bits,
                d.device.memory_bits,
                d.top
            );
        }
        for l in &rep.links {
            println!(
                "link       {} -> {}: `{}`, {} beats x {} flits of {} bits = {} cycles per inference (occupancy {:.2})",
                l.from, l.to, l.link.tensor, l.link.beats, l.link.flits, l.link.link_width, l.link.cycles, l.occupancy
            );
        }
        println!(
            "system     ii {} cycles/inference, set by the {}; latency {} cycles (estimate)",
            rep.ii_cycles, rep.bottleneck, rep.design.latency_cycles_estimate
        );
        println!(
            "wrote      {} files to {} (device_<k>/ projects, system/top.sv, report.json, README.md)",
            files,
            out.display()
        );
        return Ok(());
    }
    let counts: Vec<String> = r.instance_counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    println!("design     {} ({}): {}", r.top, r.graph, counts.join(", "));
    println!(
        "figures    ii {} cycles/inference (slowest {}), latency {} cycles, {} multipliers, {} memory bits",
        r.ii_cycles, r.slowest, r.latency_cycles_estimate, r.multipliers, r.memory_bits
    );
    println!(
        "wrote      {} files to {} (top.sv, rtl/, mem/, files.f, {}.core, report.json, README.md)",
        files,
        out.display(),
        r.top
    );
    Ok(())
}

/// Options of `mase flow`.
pub struct FlowArgs {
    /// `--input-shape NAME=DIMS` values.
    pub shapes: Vec<String>,
    /// `--config FLOW.toml`.
    pub config: Option<std::path::PathBuf>,
    /// `--calibrate NAME=FILE.npy` values (replace `[calibration] inputs`).
    pub calibrate: Vec<String>,
    /// `--target-ii` / `--multiplier-budget`.
    pub rate: Rate,
}

/// `mase flow MODEL.onnx --config FLOW.toml [--calibrate NAME=FILE.npy …] -o DIR`.
pub fn flow(model: &Path, a: &FlowArgs, out: &Path) -> anyhow::Result<()> {
    let bytes = std::fs::read(model).with_context(|| format!("reading {}", model.display()))?;
    let mut opts = mase_emit::flow::FlowOptions::new(model.display().to_string(), out);
    if let Some(c) = &a.config {
        opts.config = mase_emit::FlowConfig::from_file(c)?;
    }
    if !a.calibrate.is_empty() {
        opts.config.calibration.inputs = super::args::calibration_files(&a.calibrate)?;
    }
    let rate = a.rate;
    if rate.target_ii.is_some() || rate.multiplier_budget.is_some() {
        let hw = &mut opts.config.hardware;
        hw.target_ii = None;
        hw.target_ii_per_row = rate.target_ii;
        hw.multiplier_budget = rate.multiplier_budget;
    }
    opts.config.hardware = opts.config.hardware.checked("command line")?;
    opts.input_shapes = super::args::input_shapes(&a.shapes)?;
    let f = mase_emit::flow::run_flow(&bytes, &opts)?;
    for w in &f.warnings {
        eprintln!("{w}");
    }
    for (step, ms) in &f.times_ms {
        println!("{step:<10} {ms:.1} ms");
    }
    print_emitted(out, &f.emitted.report, f.emitted.files.len(), f.system.as_ref())?;
    println!("next       mase sim {}", out.display());
    Ok(())
}

/// Options of `mase sim`.
pub struct SimArgs {
    /// `NAME=FILE.npy` inputs (graph input names or port names).
    pub inputs: Vec<String>,
    /// Seeded inferences when no input is given.
    pub inferences: usize,
    /// Stall probability.
    pub stall_prob: f64,
    /// Seed of stalls (and of generated inputs).
    pub seed: u64,
    /// VCD file.
    pub vcd: Option<std::path::PathBuf>,
    /// JSON output.
    pub json: bool,
    /// Run the golden model only (no Verilator).
    pub golden: bool,
    /// Directory to write the golden vectors into (`--write-vectors`).
    pub write_vectors: Option<std::path::PathBuf>,
}

/// Per-inference float inputs by graph input name: from files (several inferences may be
/// stacked), or seeded.
fn sim_inputs(p: &Project, a: &SimArgs) -> anyhow::Result<Vec<HashMap<String, Tensor>>> {
    let ports: Vec<_> = p.design.ports.iter().filter(|x| x.dir == PortDir::Input).collect();
    if a.inputs.is_empty() {
        return (0..a.inferences.max(1))
            .map(|k| Ok(mase_emit::flow::seeded_inputs(&p.graph, a.seed.wrapping_mul(1000) + k as u64)?))
            .collect();
    }
    let given = super::args::npy_inputs(&a.inputs, &p.graph)?;
    let mut per_port: Vec<(String, Vec<Tensor>)> = Vec::new();
    for port in &ports {
        let t = given
            .get(&port.tensor)
            .or_else(|| given.get(&port.name))
            .with_context(|| format!("no --input for graph input `{}` (port {})", port.tensor, port.name))?;
        let split =
            mase_emit::calibration::split_inferences(&format!("--input {}", port.tensor), t, &port.shape)?;
        per_port.push((port.tensor.clone(), split));
    }
    for k in given.keys() {
        if !ports.iter().any(|p| &p.tensor == k || &p.name == k) {
            let names: Vec<&str> = ports.iter().map(|p| p.tensor.as_str()).collect();
            bail!("--input {k}: the design has no such input (inputs: {})", names.join(", "));
        }
    }
    let n = per_port[0].1.len();
    if per_port.iter().any(|(_, t)| t.len() != n) {
        bail!("the --input files hold different numbers of inferences");
    }
    Ok((0..n).map(|i| per_port.iter().map(|(name, t)| (name.clone(), t[i].clone())).collect()).collect())
}

/// Writes output codes (port order) as `DIR/sim/<tensor>.npy` (values) and `.codes.npy`, with a
/// leading inference axis; returns the paths.
fn write_outputs(dir: &Path, p: &Project, outputs: &[Vec<i64>]) -> anyhow::Result<Vec<String>> {
    let out_dir = dir.join("sim");
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let mut written = Vec::new();
    for (k, port) in p.design.ports.iter().filter(|x| x.dir == PortDir::Output).enumerate() {
        let n = outputs[k].len() / port.numel();
        let mut shape = vec![n];
        shape.extend(&port.shape);
        let codes = Tensor::from_i64(&shape, outputs[k].clone()).context("output shape")?;
        let vals: Vec<f32> = outputs[k].iter().map(|c| to_f64(*c, &port.format) as f32).collect();
        let floats = Tensor::from_f32(&shape, vals).context("output shape")?;
        let base = out_dir.join(mase_emit::design::ident(&port.tensor));
        let (fp, cp) = (base.with_extension("npy"), base.with_extension("codes.npy"));
        mase_ir::npy::write_npy(&fp, &floats)?;
        mase_ir::npy::write_npy(&cp, &codes)?;
        written.push(fp.display().to_string());
        written.push(cp.display().to_string());
    }
    Ok(written)
}

/// The saturation lines of `mase sim` (warnings go to stderr before the run).
fn print_saturation(sat: &mase_ir::quant::SaturationReport) {
    for line in sat.lines() {
        println!("saturation {line}");
    }
}

/// `mase sim DIR`. The saturation report counts the casts at node boundaries on the same
/// inputs by quantized execution of the project's graph
/// ([`mase_sim::design_sim::saturation_report`]).
pub fn sim(dir: &Path, a: &SimArgs) -> anyhow::Result<()> {
    let p = load_project(dir)?;
    let samples = sim_inputs(&p, a)?;
    let sat = mase_sim::design_sim::saturation_report(&p, &samples)?;
    for w in &sat.warnings {
        eprintln!("{w}");
    }
    // The golden model's outputs, when this run writes vectors or runs only the golden model.
    let golden_run = if a.golden || a.write_vectors.is_some() {
        let codes = mase_sim::quantize_samples(&p, &samples)?;
        let outputs = mase_emit::golden::run(&p.design, &codes)?;
        Some((codes, outputs))
    } else {
        None
    };
    if let (Some(vdir), Some((codes, outputs))) = (&a.write_vectors, &golden_run) {
        let files = mase_sim::write_vectors(&p, codes, outputs, vdir)?;
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        eprintln!("vectors    {} inferences: {}", samples.len(), names.join(", "));
    }
    if let (true, Some((_, outputs))) = (a.golden, golden_run) {
        let acc = mase_sim::accuracy_against_float(&p, &samples, &outputs)?;
        let written = write_outputs(dir, &p, &outputs)?;
        if a.json {
            let v = serde_json::json!({
                "golden_only": true,
                "inferences": samples.len(),
                "cosine_vs_float": acc.cosine,
                "max_abs_error_vs_float": acc.max_abs_error,
                "outputs": written,
                "saturation": sat.saturation,
                "warnings": sat.warnings,
            });
            println!("{}", serde_json::to_string_pretty(&v)?);
        } else {
            println!(
                "golden     {} inferences through the design's component models (no Verilator)",
                samples.len()
            );
            println!(
                "accuracy   cosine {:.6} against the float model, max abs error {:.3e}",
                acc.cosine, acc.max_abs_error
            );
            print_saturation(&sat);
            println!("wrote      {}", written.join(", "));
        }
        return Ok(());
    }
    let vcd = a.vcd.as_ref().map(|v| (v.clone(), 0, u64::MAX));
    let cfg = RunConfig { seed: a.seed, stall_prob: a.stall_prob, vcd, ..RunConfig::default() };
    let (run, acc) = check_project(&p, &samples, &cfg)?;
    let written = write_outputs(dir, &p, &run.outputs)?;
    let r = &run.report;
    if a.json {
        let mut v = serde_json::to_value(r)?;
        v["cosine_vs_float"] = acc.cosine.into();
        v["max_abs_error_vs_float"] = acc.max_abs_error.into();
        v["outputs"] = written.clone().into();
        v["saturation"] = serde_json::to_value(&sat.saturation)?;
        v["warnings"] = serde_json::to_value(&sat.warnings)?;
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "design     {} ({} inferences, stall probability {}, seed {})",
            r.top, r.inferences, r.stall_prob, r.seed
        );
        println!("bit_exact  {} ({} mismatching elements)", r.bit_exact, r.mismatches);
        for m in &r.first_mismatches {
            println!("           {m}");
        }
        println!(
            "latency    {} cycles (first input beat to first output; latency model {})",
            r.latency_cycles, r.model_latency_cycles
        );
        match r.ii_cycles {
            Some(ii) => {
                println!("ii         {ii:.0} cycles per inference (cost-model bound {})", r.model_ii_cycles)
            }
            None => {
                println!("ii         (needs 2 or more inferences; cost-model bound {})", r.model_ii_cycles)
            }
        }
        if let Some(sys) = &r.system {
            let share = |s: Option<f64>| s.map_or("-".to_string(), |v| format!("{:.0} %", v * 100.0));
            for d in &sys.devices {
                println!(
                    "device     {}: stage ii {} cycles, utilisation {} of the measured ii",
                    d.name,
                    d.model_cycles,
                    share(d.share_of_measured_ii)
                );
            }
            for l in &sys.links {
                println!(
                    "link       {}: {:.0} flit cycles per inference (link model {}), occupancy {} of the measured ii",
                    l.name,
                    l.measured_cycles.unwrap_or(0.0),
                    l.model_cycles,
                    share(l.share_of_measured_ii)
                );
            }
            println!("bottleneck {} (models)", sys.bottleneck);
        }
        println!(
            "accuracy   cosine {:.6} against the float model, max abs error {:.3e}",
            acc.cosine, acc.max_abs_error
        );
        println!(
            "speed      {:.0} simulated cycles/s, build {:.1} s{}",
            r.sim_cycles_per_s,
            r.build_s,
            if r.cache_hit { " (cached)" } else { "" }
        );
        print_saturation(&sat);
        println!("wrote      {}", written.join(", "));
    }
    if !r.bit_exact {
        bail!("the RTL differs from the golden model in {} elements", r.mismatches);
    }
    Ok(())
}
