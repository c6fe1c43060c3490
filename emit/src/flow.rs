//! The whole flow in one call: ONNX import → analysis passes → quantization → hardware passes →
//! stitching → project files. `mase flow` and `mase demo` use it.
//!
//! [`run_flow`] takes the model's bytes and one [`FlowOptions`]; the flow configuration is a
//! typed [`FlowConfig`] (see [`crate::config`] for its sections and defaults). Formats come from
//! `[passes.quantize]`, or from `auto_precision` on statistics over calibration data: samples
//! in memory ([`FlowOptions::calibration`]), else the `[calibration] inputs` files, else
//! `[calibration] samples` seeded pseudo-random inputs (sums of uniforms, roughly unit
//! variance), in which case the flow warns ([`Flow::warnings`]) that real activations may not
//! fit and says how to give data. A model that carries QONNX `Quant` nodes is quantized by them
//! instead (the `raise_qonnx` pass: power-of-two scales only, refused otherwise); giving it
//! `[passes.quantize]` or calibration data as well is an error. A model with real-scale
//! quantizers (QDQ, float-scale QONNX: `qlinear` after import) is refused, naming its first
//! quantizer, until the requantising hardware exists.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::Instant;

use mase_ir::onnx::{import_bytes, ImportOptions};
use mase_ir::pass::{run_step, PassInfo};
use mase_ir::passes::add_software_metadata::{software_stats, StatsOptions};
use mase_ir::tensor::DType;
use mase_ir::{Error, MaseGraph, Result, Tensor};
use rand::{Rng, SeedableRng};
use serde_json::json;

use crate::calibration::{load_samples, Sample};
use crate::config::{FlowConfig, HwConfig};
use crate::design::Design;
use crate::project::{write_project_in, Emitted, ProjectLock};
use crate::system::{system_of, System};

/// What the flow produced.
#[derive(Debug)]
pub struct Flow {
    /// The float graph after the analysis passes.
    pub float_graph: MaseGraph,
    /// The quantized graph of the device with hardware metadata (the whole model's when nothing
    /// runs on the host).
    pub graph: MaseGraph,
    /// The stitched design (of all devices together).
    pub design: Design,
    /// The design spread over `[[hardware.devices]]`, when the configuration has devices.
    pub system: Option<crate::system::System>,
    /// The host parts before and after the device, when some node of the model runs on the
    /// host ([`crate::host_project`]).
    pub host: Option<crate::host_project::HostParts>,
    /// What was written.
    pub emitted: Emitted,
    /// Info maps of the passes, by pass name.
    pub info: PassInfo,
    /// Milliseconds per step: import, passes, quantize, hardware, emit.
    pub times_ms: Vec<(&'static str, f64)>,
    /// What the user should know (e.g. calibration on seeded random inputs); the CLI prints
    /// them.
    pub warnings: Vec<String>,
}

/// Seeded inputs for every graph input. Float: sums of four uniforms scaled to about unit
/// variance. Integer: uniform below the smallest table an embedding lookup of the input reads
/// (token ids), else 0 or 1 (a mask). Boolean: true.
pub fn seeded_inputs(graph: &MaseGraph, seed: u64) -> Result<HashMap<String, Tensor>> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut inputs = HashMap::new();
    for id in graph.input_ids() {
        let node = graph.node(id);
        let shape = node.out_shape().ok_or_else(|| node.error("graph input has no shape"))?;
        let n: usize = shape.iter().product();
        let dtype = graph.input_dtype(&node.name).unwrap_or(DType::F32);
        let t = match dtype {
            DType::F32 => {
                let data: Vec<f32> =
                    (0..n).map(|_| (0..4).map(|_| rng.gen::<f32>() - 0.5).sum::<f32>() * 1.7).collect();
                Tensor::from_f32(shape, data)
            }
            DType::I64 | DType::I32 => {
                let bound = index_bound(graph, id);
                let data: Vec<i64> = (0..n).map(|_| rng.gen_range(0..bound)).collect();
                let t = ndarray::ArrayD::from_shape_vec(shape, data).ok();
                match dtype {
                    DType::I32 => t.map(|a| Tensor::I32(a.mapv(|v| v as i32))),
                    _ => t.map(Tensor::I64),
                }
            }
            DType::Bool => ndarray::ArrayD::from_shape_vec(shape, vec![true; n]).ok().map(Tensor::Bool),
        };
        inputs.insert(node.name.clone(), t.ok_or_else(|| node.error("input shape"))?);
    }
    Ok(inputs)
}

/// Exclusive bound of seeded integer input `id`: the rows of the smallest table an embedding
/// lookup of it reads, else 2.
fn index_bound(graph: &MaseGraph, id: mase_ir::NodeId) -> i64 {
    graph
        .users(id)
        .iter()
        .filter_map(|&u| match &graph.node(u).op {
            mase_ir::Op::Embedding { table } => graph.weights.get(table).map(|t| t.shape()[0] as i64),
            _ => None,
        })
        .min()
        .unwrap_or(2)
        .max(1)
}

/// The float graph, the quantized graph, the pass info maps and the step times (ms).
pub type Quantized = (MaseGraph, MaseGraph, PassInfo, Vec<(&'static str, f64)>);

/// Everything the flow needs besides the model's bytes.
#[derive(Debug, Clone)]
pub struct FlowOptions {
    /// The model's name in messages (its path).
    pub origin: String,
    /// Shapes of inputs with dynamic dimensions (`--input-shape`).
    pub input_shapes: BTreeMap<String, Vec<usize>>,
    /// The flow configuration (FLOW.toml).
    pub config: FlowConfig,
    /// Calibration samples given in memory; they take the place of `[calibration]`.
    pub calibration: Option<Vec<Sample>>,
    /// The project directory to write.
    pub out_dir: PathBuf,
}

impl FlowOptions {
    /// Default options (default configuration, no calibration data) for a model and a
    /// project directory.
    pub fn new(origin: impl Into<String>, out_dir: impl Into<PathBuf>) -> FlowOptions {
        FlowOptions {
            origin: origin.into(),
            input_shapes: BTreeMap::new(),
            config: FlowConfig::default(),
            calibration: None,
            out_dir: out_dir.into(),
        }
    }
}

/// The warning of a flow calibrated on seeded random inputs.
fn random_calibration_warning(n: u64) -> String {
    format!(
        "warning: auto_precision calibrated on {n} seeded random inputs (no calibration data given); \
         real activations may not fit the chosen formats. Give data with `mase flow --calibrate NAME=FILE.npy` \
         or `[calibration] inputs = {{ NAME = [\"a.npy\"] }}` in the flow config"
    )
}

/// Imports, analyses and quantizes a model as the options say (no hardware yet). The info map
/// has a `calibration` entry (`source` = `data` or `seeded`, `samples`, and a `warning` when
/// the statistics come from seeded random inputs).
pub fn quantized_graph(onnx: &[u8], opts: &FlowOptions) -> Result<Quantized> {
    let origin = opts.origin.as_str();
    let config = &opts.config;
    let mut times = Vec::new();
    let t = Instant::now();
    let import = ImportOptions { input_shapes: opts.input_shapes.clone(), ..Default::default() };
    let graph = import_bytes(onnx, origin, &import)?;
    times.push(("import", t.elapsed().as_secs_f64() * 1e3));
    let t = Instant::now();
    let chain = ["init_metadata", "add_common_metadata", "remove_dropout", "validate"];
    let (graph, mut info) = crate::pass_manager().run(graph, &chain, &toml::Table::new())?;
    times.push(("passes", t.elapsed().as_secs_f64() * 1e3));
    let t = Instant::now();
    let data_given = opts.calibration.is_some() || !config.calibration.inputs.is_empty();
    use mase_ir::Op;
    let own = graph.nodes().find(|(_, n)| matches!(n.op, Op::Quant { .. }));
    let qgraph = if let Some((_, q)) = own {
        if data_given || config.passes.quantize.is_some() {
            return Err(Error::Config(format!(
                "{origin}: the model carries its own QONNX quantizers (e.g. '{}'), which give every format \
                 (raise_qonnx); remove [passes.quantize] and the calibration data",
                q.name
            )));
        }
        let (g, i) = run_step("raise_qonnx", graph.clone(), |g| {
            mase_ir::passes::raise_qonnx::run(g, &mase_ir::pass::PassArgs::new())
        })?;
        info.insert("raise_qonnx".into(), i.into());
        g
    } else if let Some(q) = &config.passes.quantize {
        if data_given {
            return Err(Error::Config(format!(
                "{origin}: calibration data is given but [passes.quantize] fixes every format; \
                 remove one of them (calibration feeds [passes.auto_precision])"
            )));
        }
        let (g, i) = run_step("quantize", graph.clone(), |g| mase_ir::passes::quantize::quantize(g, q))?;
        info.insert("quantize".into(), i.into());
        g
    } else {
        let auto = config.passes.auto_precision.options()?;
        let (samples, calib) = match (&opts.calibration, config.calibration.inputs.is_empty()) {
            (Some(s), _) => (s.clone(), json!({"source": "data", "samples": s.len()})),
            (None, false) => {
                let s = load_samples(&graph, &config.calibration.inputs)?;
                (
                    s.clone(),
                    json!({"source": "data", "samples": s.len(), "inputs": config.calibration.inputs}),
                )
            }
            (None, true) => {
                let n = config.calibration.samples;
                let s = (0..n).map(|k| seeded_inputs(&graph, 10 + k)).collect::<Result<Vec<_>>>()?;
                (s, json!({"source": "seeded", "samples": n, "warning": random_calibration_warning(n)}))
            }
        };
        info.insert("calibration".into(), calib);
        let (g, i) = run_step("auto_precision", graph.clone(), |g| {
            let ops = config.passes.auto_precision.op_widths();
            crate::per_op::auto_precision_ops(
                software_stats(g, &samples, &StatsOptions::default())?,
                &auto,
                &ops,
            )
        })?;
        info.insert("auto_precision".into(), i.into());
        g
    };
    times.push(("quantize", t.elapsed().as_secs_f64() * 1e3));
    Ok((graph, qgraph, info, times))
}

/// Runs the whole flow and writes the project into `opts.out_dir`.
pub fn run_flow(onnx: &[u8], opts: &FlowOptions) -> Result<Flow> {
    let hw = &opts.config.hardware;
    let (float_graph, qgraph, mut info, mut times) = quantized_graph(onnx, opts)?;
    let t = Instant::now();
    let (device, host) = crate::host_project::cut(qgraph, hw)?;
    if let Some(h) = &host {
        info.insert("split_host_device".into(), h.info.clone().into());
    }
    let (pass, graph, hinfo, design, system) = hardware(device, hw)?;
    info.insert(pass.into(), hinfo.into());
    times.push(("hardware", t.elapsed().as_secs_f64() * 1e3));
    let t = Instant::now();
    // The device's project and the host parts are one project: written under one lock, the
    // marker last.
    let lock = ProjectLock::write(&opts.out_dir)?;
    let mut emitted = write_emitted_in(&lock, &graph, &design, system.as_ref(), hw.clock_mhz)?;
    if let Some(h) = &host {
        emitted.files.extend(crate::host_project::write_host(h, &design, &lock)?);
        emitted.files.sort();
    }
    lock.finish(&emitted.files)?;
    drop(lock);
    times.push(("emit", t.elapsed().as_secs_f64() * 1e3));
    let mut warnings: Vec<String> = info
        .get("calibration")
        .and_then(|c| c.get("warning"))
        .and_then(|w| w.as_str())
        .map(str::to_string)
        .into_iter()
        .collect();
    warnings.extend(host.as_ref().map(crate::host_project::warnings).unwrap_or_default());
    Ok(Flow { float_graph, graph, design, system, host, emitted, info, times_ms: times, warnings })
}

/// The hardware steps' results: the pass that ran, the graph with hardware metadata, the pass's
/// info map, the stitched design and, with devices, the system.
pub type Hardware = (&'static str, MaseGraph, PassInfo, Design, Option<System>);

/// Runs the hardware passes on a quantized graph: `add_hardware_metadata`, or
/// `partition_devices` when the configuration has `[[hardware.devices]]`; then stitches.
pub fn hardware(qgraph: MaseGraph, hw: &HwConfig) -> Result<Hardware> {
    let pass = if hw.devices.is_empty() { "add_hardware_metadata" } else { "partition_devices" };
    let (graph, info) = run_step(pass, qgraph, |g| {
        if hw.devices.is_empty() {
            crate::add_hardware_metadata(g, hw)
        } else {
            crate::partition::partition_devices(g, hw)
        }
    })?;
    let design = crate::design_of(&graph, hw.top_name())?;
    let system = if hw.devices.is_empty() { None } else { Some(system_of(&graph, &design, &hw.devices)?) };
    Ok((pass, graph, info, design, system))
}

/// Writes the project: one design, or a multi-device system; `clock_mhz` is
/// [`HwConfig::clock_mhz`]. The directory is taken with [`ProjectLock::write`] (a concurrent
/// writer of the same directory waits) and finished before it is released.
pub fn write_emitted(
    graph: &MaseGraph,
    design: &Design,
    system: Option<&System>,
    dir: &std::path::Path,
    clock_mhz: Option<f64>,
) -> Result<Emitted> {
    let lock = ProjectLock::write(dir)?;
    let e = write_emitted_in(&lock, graph, design, system, clock_mhz)?;
    lock.finish(&e.files)?;
    Ok(e)
}

/// [`write_emitted`] into the directory `lock` holds, without the marker.
fn write_emitted_in(
    lock: &ProjectLock,
    graph: &MaseGraph,
    design: &Design,
    system: Option<&System>,
    clock_mhz: Option<f64>,
) -> Result<Emitted> {
    match system {
        None => write_project_in(lock, graph, design, clock_mhz),
        Some(sys) => crate::system_project::write_system_in(lock, graph, sys, clock_mhz),
    }
}
