//! `mase sim DIR`: the emitted project under Verilator (or its golden model alone) on given or
//! seeded inputs, every output element compared with the golden model. A whole-model project
//! (with `host/`) takes the model's own inputs: the host's pre part computes the device's
//! inputs, the device runs, the host's post part computes the model's outputs, which are
//! written under their own names and compared with the float model.

use std::path::Path;

use anyhow::{bail, Context};
use mase_emit::design::PortDir;
use mase_ir::fixed::to_f64;
use mase_ir::Tensor;
use mase_sim::host_run::{model_outputs, ModelOutputs, Named};
use mase_sim::{check_project, load_project, Project, RunConfig};

/// Options of `mase sim` (its command line, after the project directory).
#[derive(clap::Args)]
pub struct SimArgs {
    /// Inputs by graph input name (several inferences may be stacked); seeded if omitted.
    #[arg(long = "input", value_name = "NAME=FILE")]
    pub inputs: Vec<String>,
    /// Seeded inferences to run when no --input is given.
    #[arg(long, default_value_t = 2)]
    pub inferences: usize,
    /// Probability of a valid gap / ready drop per stream and cycle.
    #[arg(long, default_value_t = 0.2)]
    pub stall_prob: f64,
    /// Seed of stalls and generated inputs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write a VCD of the run.
    #[arg(long)]
    pub vcd: Option<std::path::PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Run only the golden model (the design's component models, no Verilator) and write
    /// its outputs.
    #[arg(long, conflicts_with_all = ["vcd", "stall_prob"])]
    pub golden: bool,
    /// Also write the golden vectors into this directory for an outside testbench (the
    /// project's cocotb `tb/`): `<port>.npy` int64 codes [inferences, *shape] (inputs the
    /// stimulus, outputs the golden model's) and `vectors.json` with each port's format.
    #[arg(long, value_name = "DIR")]
    pub write_vectors: Option<std::path::PathBuf>,
    /// Clock in MHz: also print the measured ii and latency as inferences/s and µs
    /// (overrides the `clock_mhz` the project's report.json carries from `[hardware]`).
    #[arg(long, value_name = "MHZ")]
    pub clock_mhz: Option<f64>,
}

/// The clock the measured figures are converted at and where it comes from: `--clock-mhz`,
/// else the project's `report.json` (`[hardware] clock_mhz` at emit: the clock the user means to
/// run at), else the Fmax that `mase synth DIR --target ecp5` measured (`pnr_ecp5.json`, when
/// newer than `report.json`), else none.
fn clock_of(p: &Project, a: &SimArgs) -> anyhow::Result<Option<(f64, &'static str)>> {
    if let Some(f) = a.clock_mhz {
        if !(f.is_finite() && f > 0.0) {
            bail!("--clock-mhz {f}: give the clock frequency in MHz, a positive number");
        }
        return Ok(Some((f, "--clock-mhz")));
    }
    if let Some(f) = p.clock_mhz {
        return Ok(Some((f, "report.json clock_mhz")));
    }
    let pnr = mase_sim::pnr::project_report_path(&p.dir);
    let modified = |f: &Path| std::fs::metadata(f).and_then(|m| m.modified()).ok();
    // A report older than the project's report.json was made for an earlier emit of the
    // directory: its Fmax is not this design's.
    let stale = match (modified(&pnr), modified(&p.dir.join("report.json"))) {
        (Some(routed), Some(emitted)) => routed < emitted,
        (None, _) => return Ok(None),
        _ => false,
    };
    if stale {
        eprintln!("{}: older than report.json (made for an earlier emit), not used", pnr.display());
        return Ok(None);
    }
    let text = std::fs::read_to_string(&pnr).with_context(|| format!("reading {}", pnr.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a place-and-route report", pnr.display()))?;
    let fmax = v["fmax_mhz"].as_f64().filter(|f| f.is_finite() && *f > 0.0);
    let fmax = fmax.with_context(|| format!("{}: no positive fmax_mhz", pnr.display()))?;
    Ok(Some((fmax, "the Fmax of pnr_ecp5.json (mase synth --target ecp5)")))
}

/// Per-inference inputs by name, for the `wanted` tensors (name, shape of one inference) of
/// `graph` (whose inputs give the element types): from `--input` files (several inferences may
/// be stacked; a tensor may also be named by its `alias`, the top's port name), or seeded.
fn named_inputs(
    graph: &mase_ir::MaseGraph,
    wanted: &[(String, String, Vec<usize>)],
    a: &SimArgs,
) -> anyhow::Result<Vec<Named>> {
    if a.inputs.is_empty() {
        return (0..a.inferences.max(1))
            .map(|k| Ok(mase_emit::flow::seeded_inputs(graph, a.seed.wrapping_mul(1000) + k as u64)?))
            .collect();
    }
    let given = super::args::npy_inputs(&a.inputs, graph)?;
    let mut per_input: Vec<(String, Vec<Tensor>)> = Vec::new();
    for (name, alias, shape) in wanted {
        let t = given
            .get(name)
            .or_else(|| given.get(alias))
            .with_context(|| format!("no --input for `{name}` (port {alias})"))?;
        let split = mase_emit::calibration::split_inferences(&format!("--input {name}"), t, shape)?;
        per_input.push((name.clone(), split));
    }
    for k in given.keys() {
        if !wanted.iter().any(|(n, a, _)| n == k || a == k) {
            let names: Vec<&str> = wanted.iter().map(|w| w.0.as_str()).collect();
            bail!("--input {k}: the design has no such input (inputs: {})", names.join(", "));
        }
    }
    let n = per_input[0].1.len();
    if per_input.iter().any(|(_, t)| t.len() != n) {
        bail!("the --input files hold different numbers of inferences");
    }
    Ok((0..n).map(|i| per_input.iter().map(|(name, t)| (name.clone(), t[i].clone())).collect()).collect())
}

/// The device's per-inference inputs and, for a whole model, the host pre part's values of
/// each inference (the model's inputs and what the pre part computed).
fn sim_inputs(p: &Project, a: &SimArgs) -> anyhow::Result<(Vec<Named>, Option<Vec<Named>>)> {
    let Some(host) = &p.host else {
        let wanted: Vec<_> = p
            .design
            .ports
            .iter()
            .filter(|x| x.dir == PortDir::Input)
            .map(|x| (x.tensor.clone(), x.name.clone(), x.shape.clone()))
            .collect();
        return Ok((named_inputs(&p.graph, &wanted, a)?, None));
    };
    let wanted: Vec<_> = host.inputs().into_iter().map(|(n, _, s)| (n.clone(), n, s)).collect();
    let pre = named_inputs(&host.pre, &wanted, a)?
        .iter()
        .map(|m| host.run_pre(m))
        .collect::<mase_sim::Result<Vec<_>>>()?;
    let device: Vec<Named> = pre
        .iter()
        .map(|v| {
            p.design
                .ports
                .iter()
                .filter(|x| x.dir == PortDir::Input)
                .map(|x| {
                    v.get(&x.tensor).map(|t| (x.tensor.clone(), t.clone())).with_context(|| {
                        format!("host pre gives no `{}` for device port {}", x.tensor, x.name)
                    })
                })
                .collect()
        })
        .collect::<anyhow::Result<_>>()?;
    Ok((device, Some(pre)))
}

/// For a whole model: the host post part on the device's outputs, against the float model; the
/// model's outputs are written ([`write_model_outputs`]) and their paths added to `written`.
fn whole_model(
    dir: &Path,
    p: &Project,
    pre: Option<&[Named]>,
    outputs: &[Vec<i64>],
    written: &mut Vec<String>,
) -> anyhow::Result<Option<ModelOutputs>> {
    let (Some(host), Some(pre)) = (&p.host, pre) else { return Ok(None) };
    let device = mase_sim::device_outputs_named(p, outputs)?;
    let m = model_outputs(host, &p.graph, pre, &device)?;
    written.extend(write_model_outputs(dir, &m)?);
    Ok(Some(m))
}

/// The `model` entry of `mase sim --json`: the model's output names and accuracy (null without
/// host parts).
fn model_json(model: Option<&ModelOutputs>) -> serde_json::Value {
    model.map_or(serde_json::Value::Null, |m| serde_json::json!({"outputs": m.names, "accuracy": m.accuracy}))
}

/// Writes the model's outputs as `DIR/sim/<output name>.npy` (float32, a leading inference
/// axis); returns the paths.
fn write_model_outputs(dir: &Path, m: &ModelOutputs) -> anyhow::Result<Vec<String>> {
    let out_dir = dir.join("sim");
    let mut written = Vec::new();
    for (k, name) in m.names.iter().enumerate() {
        let per: Vec<&Tensor> = m.hardware.iter().map(|o| &o[k]).collect();
        let mut shape = vec![per.len()];
        shape.extend(per.first().map_or(&[][..], |t| t.shape()));
        let vals: Vec<f32> =
            per.iter().flat_map(|t| t.to_f32().iter().copied().collect::<Vec<_>>()).collect();
        let t = Tensor::from_f32(&shape, vals).context("model output shape")?;
        let path = out_dir.join(format!("{}.npy", mase_emit::design::ident(name)));
        mase_ir::npy::write_npy(&path, &t)?;
        written.push(path.display().to_string());
    }
    Ok(written)
}

/// The lines (or JSON fields) of a whole-model run.
fn model_lines(m: &ModelOutputs) -> Vec<String> {
    let r = &m.accuracy;
    let mut lines = vec![format!(
        "model      {}: cosine {:.6} against the float model (host pre, float device, host post), max abs error {:.3e}",
        m.names.join(", "),
        r.cosine,
        r.max_abs_error
    )];
    lines.push(format!(
        "argmax     {:.1} % of {} rows (last axis) agree with the float model",
        r.argmax_agreement * 100.0,
        r.rows
    ));
    lines
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
    let clock = clock_of(&p, a)?;
    let (samples, pre) = sim_inputs(&p, a)?;
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
        let mut written = write_outputs(dir, &p, &outputs)?;
        let model = whole_model(dir, &p, pre.as_deref(), &outputs, &mut written)?;
        if a.json {
            let v = serde_json::json!({
                "golden_only": true,
                "inferences": samples.len(),
                "cosine_vs_float": acc.cosine,
                "max_abs_error_vs_float": acc.max_abs_error,
                "outputs": written,
                "saturation": sat.saturation,
                "warnings": sat.warnings,
                "model": model_json(model.as_ref()),
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
            for line in model.iter().flat_map(model_lines) {
                println!("{line}");
            }
            print_saturation(&sat);
            println!("wrote      {}", written.join(", "));
        }
        return Ok(());
    }
    let vcd = a.vcd.as_ref().map(|v| (v.clone(), 0, u64::MAX));
    let cfg = RunConfig { seed: a.seed, stall_prob: a.stall_prob, vcd, ..RunConfig::default() };
    let (run, acc) = check_project(&p, &samples, &cfg)?;
    let mut written = write_outputs(dir, &p, &run.outputs)?;
    let model = whole_model(dir, &p, pre.as_deref(), &run.outputs, &mut written)?;
    let r = &run.report;
    // The measured cycles in real units, by the one conversion the report uses.
    let real =
        clock.map(|(f, from)| (mase_emit::report::real_time(f, r.ii_cycles, r.latency_cycles as f64), from));
    if a.json {
        let mut v = serde_json::to_value(r)?;
        if let (Some((t, _)), Some(obj)) = (&real, v.as_object_mut()) {
            if let serde_json::Value::Object(fields) = serde_json::to_value(t)? {
                obj.extend(fields);
            }
        }
        v["cosine_vs_float"] = acc.cosine.into();
        v["max_abs_error_vs_float"] = acc.max_abs_error.into();
        v["outputs"] = written.clone().into();
        v["model"] = model_json(model.as_ref());
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
        if let Some((t, from)) = &real {
            println!("time       {} (the measured cycles; clock from {from})", t.describe());
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
        for line in model.iter().flat_map(model_lines) {
            println!("{line}");
        }
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
