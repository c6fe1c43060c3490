//! Simulating an emitted project: the whole top under Verilator, inputs streamed with random
//! stalls, every output element compared with the graph-level golden model
//! ([`mase_emit::golden`]).
//!
//! The project directory is what `mase emit` wrote. The design is rebuilt from the quantized
//! graph it keeps (`mase/model.*`) and must regenerate `top.sv` byte for byte, so what is
//! simulated is exactly the emitted text and the golden model belongs to it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mase_emit::config::Device;
use mase_emit::design::{Design, PortDir, TopPort};
use mase_emit::golden;
use mase_emit::system::System;
use mase_emit::system_project::{
    device_design, device_files, device_top_sv, link_flits_port, system_top_file, system_top_sv,
};
use mase_hwlib::{Direction, StreamSpec, StreamValues};
use mase_ir::fixed::to_f64;
use mase_ir::quant::AccuracyReport;
use mase_ir::{MaseGraph, Tensor};
use serde::Serialize;

use crate::cache;
use crate::error::{Result, SimError};
use crate::harness::{run_streams, Mismatch, RunConfig, RunResult};
use crate::model::Model;
use crate::shim::Port;
use crate::verilate::{build, Build, BuildSpec, ParamValue};

/// An emitted project loaded back: its graph and design.
#[derive(Debug, Clone)]
pub struct Project {
    /// The project directory.
    pub dir: PathBuf,
    /// The quantized graph with hardware metadata.
    pub graph: MaseGraph,
    /// The design it stitches to (of a multi-device project: the whole system, links as
    /// instances).
    pub design: Design,
    /// The devices and links of a multi-device project (`[[hardware.devices]]`).
    pub system: Option<System>,
    /// The host parts around the device, for a whole model (`host/`).
    pub host: Option<crate::host_run::Host>,
    /// The clock the project was emitted for (`report.json`'s `clock_mhz`, from `[hardware]
    /// clock_mhz`), in MHz, when one was configured.
    pub clock_mhz: Option<f64>,
}

fn invalid(msg: impl Into<String>) -> SimError {
    SimError::Invalid(msg.into())
}

/// Loads the project in `dir` and checks that its `top.sv` is the one its graph gives.
pub fn load_project(dir: &Path) -> Result<Project> {
    let report_path = dir.join("report.json");
    let text = std::fs::read_to_string(&report_path).map_err(SimError::io("reading", &report_path))?;
    let report: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| invalid(format!("{}: {e}", report_path.display())))?;
    let top = report
        .get("top")
        .and_then(|t| t.as_str())
        .ok_or_else(|| {
            invalid(format!(
                "{}: no \"top\" entry; is {} an emitted project?",
                report_path.display(),
                dir.display()
            ))
        })?
        .to_string();
    let clock_mhz = match report.get("clock_mhz") {
        None => None,
        Some(v) => Some(v.as_f64().filter(|f| *f > 0.0).ok_or_else(|| {
            invalid(format!("{}: clock_mhz = {v} is not a positive number of MHz", report_path.display()))
        })?),
    };
    let graph =
        mase_ir::checkpoint::load(&dir.join("mase").join("model")).map_err(|e| invalid(e.to_string()))?;
    let design = mase_emit::design_in(&graph, &top, Some(dir)).map_err(|e| invalid(e.to_string()))?;
    if let Some(devices) = report.get("devices_configured") {
        let devices: Vec<Device> = serde_json::from_value(devices.clone())
            .map_err(|e| invalid(format!("{}: devices_configured: {e}", report_path.display())))?;
        let sys =
            mase_emit::system::system_of(&graph, &design, &devices).map_err(|e| invalid(e.to_string()))?;
        let mut texts = vec![(dir.join(system_top_file(&top)), system_top_sv(&sys))];
        for k in 0..sys.used_devices() {
            let core = device_design(&sys, k);
            let sub = dir.join(format!("device_{k}"));
            let (top_file, core_file) = device_files(&top, k);
            texts.push((sub.join(core_file), Ok(mase_emit::sv::top_sv(&core))));
            texts.push((sub.join(top_file), device_top_sv(&sys, k, &core)));
        }
        for (path, text) in texts {
            check_unchanged(&path, &text.map_err(|e| invalid(e.to_string()))?)?;
        }
        let host = crate::host_run::load_host(dir)?;
        return Ok(Project {
            dir: dir.to_path_buf(),
            graph,
            design: sys.design.clone(),
            system: Some(sys),
            host,
            clock_mhz,
        });
    }
    check_unchanged(&dir.join("top.sv"), &mase_emit::sv::top_sv(&design))?;
    let host = crate::host_run::load_host(dir)?;
    Ok(Project { dir: dir.to_path_buf(), graph, design, system: None, host, clock_mhz })
}

/// The file at `path` holds `text`: what is simulated is exactly what was emitted.
fn check_unchanged(path: &Path, text: &str) -> Result<()> {
    let on_disk = std::fs::read_to_string(path).map_err(SimError::io("reading", path))?;
    if on_disk != text {
        return Err(invalid(format!(
            "{} differs from what its graph (mase/model.json) gives: it was edited or is stale; emit again",
            path.display()
        )));
    }
    Ok(())
}

/// The harness's view of the top's stream ports: one harness row per inference.
pub fn top_streams(d: &Design) -> Vec<StreamSpec> {
    d.ports
        .iter()
        .map(|p| StreamSpec {
            name: p.name.clone(),
            dir: if p.dir == PortDir::Input { Direction::In } else { Direction::Out },
            lanes: p.lanes,
            width: p.format.width,
            signed: p.format.signed,
            beats_per_row: p.numel() / p.lanes,
        })
        .collect()
}

/// The Verilator build of a project's top, `MEM_DIR` set to a content-addressed copy of the
/// project's `mem/` ([`cache::mem_tree`]); of a multi-device project, the system's simulation
/// top (`system/`, `MEM_DIR` a copy of every device's `mem/` at its path in the project).
pub fn project_build_spec(p: &Project, trace: bool) -> Result<BuildSpec> {
    let dir = std::fs::canonicalize(&p.dir).map_err(SimError::io("resolving", &p.dir))?;
    let (list_dir, mems) = match p.system {
        Some(_) => (
            dir.join("system"),
            cache::mem_tree(&dir, |rel| rel.components().any(|c| c.as_os_str() == "mem"))?,
        ),
        None => (dir.clone(), cache::mem_tree(&dir.join("mem"), |_| true)?),
    };
    let mem_dir = format!("{}/", mems.to_string_lossy());
    let list_path = list_dir.join("files.f");
    let list = std::fs::read_to_string(&list_path).map_err(SimError::io("reading", &list_path))?;
    let sources: Vec<PathBuf> =
        list.lines().filter(|l| !l.trim().is_empty()).map(|l| list_dir.join(l.trim())).collect();
    let mut ports = crate::bench::stream_ports(&top_streams(&p.design));
    for l in p.system.iter().flat_map(|sys| &sys.links) {
        ports.push(Port { name: link_flits_port(l), width: 64, dir: crate::shim::PortDir::Out });
    }
    Ok(BuildSpec {
        top: p.design.top.clone(),
        sources,
        params: vec![("MEM_DIR".into(), ParamValue::Str(mem_dir))],
        ports,
        trace,
    })
}

/// Outcome of [`simulate_project`].
#[derive(Debug, Clone, Serialize)]
pub struct DesignReport {
    /// Top module.
    pub top: String,
    /// Inferences streamed back to back.
    pub inferences: usize,
    /// Every output element equal to the golden model.
    pub bit_exact: bool,
    /// Number of differing elements.
    pub mismatches: usize,
    /// The first differences.
    pub first_mismatches: Vec<Mismatch>,
    /// Cycles from the first input beat to the first output valid.
    pub latency_cycles: u64,
    /// The design's latency model for the same figure (no stalls; see `mase_emit::latency`).
    pub model_latency_cycles: u64,
    /// Measured cycles per inference in steady state (needs ≥ 2 inferences).
    pub ii_cycles: Option<f64>,
    /// The cost models' bound: cycles per inference of the slowest instance.
    pub model_ii_cycles: u64,
    /// Cycles simulated.
    pub cycles: u64,
    /// Simulated cycles per wall-clock second.
    pub sim_cycles_per_s: f64,
    /// Stall probability used.
    pub stall_prob: f64,
    /// Seed used.
    pub seed: u64,
    /// Seconds to build or fetch the model.
    pub build_s: f64,
    /// Whether the build came from the cache.
    pub cache_hit: bool,
    /// Of a multi-device project: each device's and link's share of the measured ii.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemFigures>,
}

/// The devices and links of a simulated multi-device system against its measured ii.
#[derive(Debug, Clone, Serialize)]
pub struct SystemFigures {
    /// Per device: name, its stage's ii (cost model) and utilisation (stage ii / measured ii).
    pub devices: Vec<StageFigure>,
    /// Per link (`a -> b`): its transfer cycles per inference (beats × flits) and occupancy (the
    /// share of the measured ii it carries flits).
    pub links: Vec<StageFigure>,
    /// What the models name as the system's bottleneck.
    pub bottleneck: String,
}

/// One device or link of [`SystemFigures`].
#[derive(Debug, Clone, Serialize)]
pub struct StageFigure {
    /// Device name, or `a -> b` for a link (followed by `#i` and the tensor for one of several
    /// sharing a boundary).
    pub name: String,
    /// Cycles per inference by the models.
    pub model_cycles: u64,
    /// Of a link: the cycles per inference it carried flits in the run (the system top counts
    /// them).
    pub measured_cycles: Option<f64>,
    /// Cycles per inference (measured for a link, the model's for a device) over the measured
    /// ii: a device's utilisation, a link's occupancy.
    pub share_of_measured_ii: Option<f64>,
}

fn system_figures(sys: &System, measured_ii: Option<f64>, link_flits: &[f64]) -> Result<SystemFigures> {
    let r = mase_emit::system_project::system_report(sys).map_err(|e| invalid(e.to_string()))?;
    let share = |c: f64| measured_ii.filter(|m| *m > 0.0).map(|m| c / m);
    Ok(SystemFigures {
        devices: r
            .devices
            .iter()
            .map(|d| StageFigure {
                name: d.device.name.clone(),
                model_cycles: d.ii_cycles,
                measured_cycles: None,
                share_of_measured_ii: share(d.ii_cycles as f64),
            })
            .collect(),
        links: r
            .links
            .iter()
            .zip(link_flits)
            .map(|(l, &flits)| StageFigure {
                name: l.name(),
                model_cycles: l.link.cycles,
                measured_cycles: Some(flits),
                share_of_measured_ii: share(flits),
            })
            .collect(),
        bottleneck: r.bottleneck,
    })
}

/// A finished project simulation.
#[derive(Debug)]
pub struct DesignRun {
    /// The figures.
    pub report: DesignReport,
    /// Codes of every output port (port order), as the RTL produced them.
    pub outputs: Vec<Vec<i64>>,
    /// The golden model's codes.
    pub expected: Vec<Vec<i64>>,
    /// The build used.
    pub build: Build,
    /// Raw harness result.
    pub run: RunResult,
}

/// Simulates the project with input codes (one vector per input port, whole inferences back to
/// back) and compares with the golden model.
pub fn simulate_project(p: &Project, inputs: &[Vec<i64>], cfg: &RunConfig) -> Result<DesignRun> {
    let d = &p.design;
    let ins: Vec<_> = d.ports.iter().filter(|x| x.dir == PortDir::Input).collect();
    if inputs.len() != ins.len() {
        return Err(invalid(format!("the design has {} inputs, {} given", ins.len(), inputs.len())));
    }
    let mut inferences = 0;
    for (port, v) in ins.iter().zip(inputs) {
        if v.is_empty() || v.len() % port.numel() != 0 {
            return Err(invalid(format!(
                "input {} (`{}`): {} codes is not a whole number of inferences of {} elements",
                port.name,
                port.tensor,
                v.len(),
                port.numel()
            )));
        }
        inferences = v.len() / port.numel();
    }
    let expected = golden::run(d, inputs).map_err(|e| invalid(e.to_string()))?;
    let spec = project_build_spec(p, cfg.vcd.is_some())?;
    let b = build(&spec)?;
    let mut model = Model::new(&b)?;
    let streams = top_streams(d);
    let mut in_map = StreamValues::new();
    let mut exp_map = StreamValues::new();
    let mut k_in = 0;
    let mut k_out = 0;
    for port in &d.ports {
        if port.dir == PortDir::Input {
            in_map.insert(port.name.clone(), inputs[k_in].clone());
            k_in += 1;
        } else {
            exp_map.insert(port.name.clone(), expected[k_out].clone());
            k_out += 1;
        }
    }
    let mut cfg = cfg.clone();
    let figures = mase_emit::report::report(d);
    cfg.watchdog_cycles = cfg.watchdog_cycles.max(watchdog_of(&figures));
    let slowest = figures.ii_cycles;
    let run = run_streams(&mut model, &streams, &in_map, &exp_map, &cfg)?;
    let outputs: Vec<Vec<i64>> = d
        .ports
        .iter()
        .filter(|x| x.dir == PortDir::Output)
        .map(|x| run.outputs.get(&x.name).cloned().unwrap_or_default())
        .collect();
    let report = DesignReport {
        top: d.top.clone(),
        inferences,
        bit_exact: run.mismatch_count == 0,
        mismatches: run.mismatch_count,
        first_mismatches: run.mismatches.iter().take(5).cloned().collect(),
        latency_cycles: run.latency_cycles().unwrap_or(0),
        model_latency_cycles: figures.latency_cycles_estimate,
        ii_cycles: run.ii_cycles(),
        model_ii_cycles: slowest,
        cycles: run.cycles,
        sim_cycles_per_s: if run.wall_s > 0.0 { run.cycles as f64 / run.wall_s } else { 0.0 },
        stall_prob: cfg.stall_prob,
        seed: cfg.seed,
        build_s: b.build_s,
        cache_hit: b.cache_hit,
        system: match &p.system {
            Some(sys) => {
                let mut flits = Vec::new();
                for l in &sys.links {
                    let count = model.get(model.port_index(&link_flits_port(l))?);
                    flits.push(count as f64 / inferences.max(1) as f64);
                }
                Some(system_figures(sys, run.ii_cycles(), &flits)?)
            }
            None => None,
        },
    };
    Ok(DesignRun { report, outputs, expected, build: b, run })
}

/// Cycles without a beat on any top port after which a run of `d` is a deadlock: a whole-tensor
/// stage may take four of the slowest instance's inferences before its first output, and a deep
/// model its whole latency (twice the latency model's estimate, which under-counts some
/// buffering) after its inputs have gone in.
pub fn watchdog_cycles(d: &Design) -> u64 {
    watchdog_of(&mase_emit::report::report(d))
}

/// [`watchdog_cycles`] from the design's report, for a caller that has it already.
fn watchdog_of(figures: &mase_emit::report::Report) -> u64 {
    4 * figures.ii_cycles + 2 * figures.latency_cycles_estimate + 10_000
}

/// Input codes of a project for per-inference float inputs (graph input name → tensor, one map
/// per inference, back to back), quantized into the top's input formats.
pub fn quantize_samples(p: &Project, samples: &[HashMap<String, Tensor>]) -> Result<Vec<Vec<i64>>> {
    let ins: Vec<_> = p.design.ports.iter().enumerate().filter(|(_, x)| x.dir == PortDir::Input).collect();
    let mut codes: Vec<Vec<i64>> = vec![Vec::new(); ins.len()];
    for s in samples {
        for (k, (idx, port)) in ins.iter().enumerate() {
            let t = s
                .get(&port.tensor)
                .ok_or_else(|| invalid(format!("no value for input `{}`", port.tensor)))?;
            codes[k].extend(golden::quantize_input(&p.design, *idx, t).map_err(|e| invalid(e.to_string()))?);
        }
    }
    Ok(codes)
}

/// Inference `i`'s elements of output port `port` (the `k`-th output; its codes, inferences
/// back to back, in `outputs[k]`), dequantized in the port's format; an integer tensor of the
/// codes when the port carries integers (a quantized model's codes, which the host dequantizes).
fn output_tensor(p: &Project, outputs: &[Vec<i64>], k: usize, port: &TopPort, i: usize) -> Result<Tensor> {
    let m = port.numel();
    let got = outputs
        .get(k)
        .and_then(|o| o.get(i * m..(i + 1) * m))
        .ok_or_else(|| invalid(format!("output {}: too few elements", port.name)))?;
    let integer = p.graph.nodes().any(|(_, n)| {
        n.name == port.tensor
            && n.meta
                .common
                .results
                .get("data_out_0")
                .is_some_and(|r| r.ty == mase_ir::metadata::ValueType::Integer)
    });
    if integer {
        return Tensor::from_i64(&port.shape, got.to_vec()).ok_or_else(|| invalid("output shape"));
    }
    let vals: Vec<f32> = got.iter().map(|c| to_f64(*c, &port.format) as f32).collect();
    Tensor::from_f32(&port.shape, vals).ok_or_else(|| invalid("output shape"))
}

/// The device's outputs of every inference as named float tensors (output codes in port order,
/// inferences back to back, dequantized in each port's format).
pub fn device_outputs_named(p: &Project, outputs: &[Vec<i64>]) -> Result<Vec<crate::host_run::Named>> {
    let outs: Vec<_> = p.design.ports.iter().filter(|x| x.dir == PortDir::Output).collect();
    let n = outs.first().map_or(0, |o| outputs.first().map_or(0, |v| v.len() / o.numel().max(1)));
    (0..n)
        .map(|i| {
            outs.iter()
                .enumerate()
                .map(|(k, port)| Ok((port.tensor.clone(), output_tensor(p, outputs, k, port, i)?)))
                .collect()
        })
        .collect()
}

/// Accuracy of output codes (port order, inferences back to back) against the float
/// interpreter on the same inputs.
pub fn accuracy_against_float(
    p: &Project,
    samples: &[HashMap<String, Tensor>],
    outputs: &[Vec<i64>],
) -> Result<AccuracyReport> {
    let outs: Vec<_> = p.design.ports.iter().filter(|x| x.dir == PortDir::Output).collect();
    let mut float_outs = Vec::new();
    let mut hw_outs = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        let f = mase_ir::interp::run_outputs(&p.graph, s).map_err(|e| invalid(e.to_string()))?;
        for (k, port) in outs.iter().enumerate() {
            hw_outs.push(output_tensor(p, outputs, k, port, i)?);
            float_outs
                .push(f.get(k).cloned().ok_or_else(|| invalid(format!("the float run has no output {k}")))?);
        }
    }
    mase_ir::quant::accuracy(&float_outs, &hw_outs, None).map_err(|e| invalid(e.to_string()))
}

/// How many elements the design's casts at node boundaries clip or wrap on these inputs (one
/// map per inference), counted by quantized execution of the project's graph
/// ([`mase_ir::quant::run_quantized_counted`]): exact for the integer-exact ops, through the
/// emulation for the others (see [`mase_ir::quant::exec`]).
pub fn saturation_report(
    p: &Project,
    samples: &[HashMap<String, Tensor>],
) -> Result<mase_ir::quant::SaturationReport> {
    let mut sat = mase_ir::quant::SaturationCounter::new();
    for s in samples {
        mase_ir::quant::run_quantized_counted(&p.graph, s, &mut sat).map_err(|e| invalid(e.to_string()))?;
    }
    Ok(sat.report())
}

/// Runs a project on per-inference float inputs (graph input name → tensor, one map per
/// inference, streamed back to back): the inputs are quantized into the top's input formats,
/// the RTL is checked against the golden model, and its outputs are compared with the float
/// interpreter's.
pub fn check_project(
    p: &Project,
    samples: &[HashMap<String, Tensor>],
    cfg: &RunConfig,
) -> Result<(DesignRun, AccuracyReport)> {
    let codes = quantize_samples(p, samples)?;
    let run = simulate_project(p, &codes, cfg)?;
    let acc = accuracy_against_float(p, samples, &run.outputs)?;
    Ok((run, acc))
}
