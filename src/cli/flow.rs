//! Whole-design commands: `mase emit` (hardware passes + project), `mase sim` (Verilator run of
//! an emitted project against the golden model) and `mase flow` (ONNX to project in one go).

use std::path::Path;

use anyhow::Context;
use mase_emit::HwConfig;

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
    let emitted = mase_emit::flow::write_emitted(&graph, &design, system.as_ref(), out, cfg.clock_mhz)?;
    eprintln!("{pass}: {}", serde_json::to_string(&info)?);
    print_emitted(out, &emitted.report, emitted.files.len(), system.as_ref(), cfg.clock_mhz)?;
    Ok(())
}

/// The figures of an emitted project (or system); with `clock_mhz` the ii and latency also in
/// real units.
fn print_emitted(
    out: &Path,
    r: &mase_emit::report::Report,
    files: usize,
    system: Option<&mase_emit::system::System>,
    clock_mhz: Option<f64>,
) -> anyhow::Result<()> {
    // Appended to the figures line: empty without a clock, so that line is as it always was.
    let real =
        |t: Option<mase_emit::report::RealTime>| t.map(|t| format!("; {}", t.describe())).unwrap_or_default();
    if let Some(sys) = system {
        let rep = mase_emit::system_project::system_report(sys)?.at_clock(clock_mhz);
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
            "system     ii {} cycles/inference, set by the {}; latency {} cycles (estimate){}",
            rep.ii_cycles,
            rep.bottleneck,
            rep.design.latency_cycles_estimate,
            real(rep.real_time)
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
        "figures    ii {} cycles/inference (slowest {}), latency {} cycles, {} multipliers, {} memory bits{}",
        r.ii_cycles,
        r.slowest,
        r.latency_cycles_estimate,
        r.multipliers,
        r.memory_bits,
        real(r.real_time)
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
    print_emitted(
        out,
        &f.emitted.report,
        f.emitted.files.len(),
        f.system.as_ref(),
        opts.config.hardware.clock_mhz,
    )?;
    if let Some(h) = &f.host {
        print_host(h);
    }
    println!("next       mase sim {}", out.display());
    Ok(())
}

/// The host parts of a whole model: what runs where and what crosses to the device.
fn print_host(h: &mase_emit::host_project::HostParts) {
    let names = |key: &str| -> Vec<String> {
        h.info
            .get(key)
            .and_then(|v| v.as_array())
            .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    };
    let (pre, post) = (names("host_pre"), names("host_post"));
    println!(
        "host       pre: {} nodes -> device inputs {}; post: {} nodes{} (host/pre.onnx, host/post.onnx)",
        pre.len(),
        names("device_inputs").join(", "),
        post.len(),
        if post.is_empty() { String::new() } else { format!(" ({})", post.join(", ")) }
    );
    if let Some(t) = mase_emit::host_project::tables_summary(h) {
        println!("tables     {t}");
    }
}
