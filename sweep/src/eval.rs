//! Evaluating points. [`Context::prepare`] does once what every point shares: import, the
//! analysis passes, calibration statistics, the evaluation inputs and the float model's outputs
//! on them. [`Context::evaluate`] then quantizes the statistics graph at the point's widths
//! (exactly as `mase flow` does: [`mase_emit::per_op::auto_precision_ops`]), runs the hardware passes at its rate, reads
//! the cost-model figures of the stitched design ([`mase_emit::report`]) and runs the golden
//! model (the bit-exact model of the RTL) on the evaluation inputs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mase_emit::calibration::{load_samples, Sample};
use mase_emit::config::AutoPrecision;
use mase_emit::design::{Design, PortDir};
use mase_emit::project::ProjectLock;
use mase_emit::{FlowConfig, HwConfig};
use mase_ir::fixed::to_f64;
use mase_ir::onnx::{import_bytes, ImportOptions};
use mase_ir::passes::add_software_metadata::{software_stats, StatsOptions};
use mase_ir::{MaseGraph, Tensor};
use serde::{Deserialize, Serialize};

use crate::config::Rate;
use crate::error::{Result, SweepError};
use crate::point::PointSpec;

/// Seeded evaluation inferences when no `--eval` data is given.
pub const SEEDED_EVAL_INFERENCES: u64 = 8;

/// A point's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Fraction of rows of the first output whose argmax is the label (with `--labels`).
    pub top1: Option<f64>,
    /// The same for the float model (equal for every point; kept per point so cached points
    /// carry it).
    pub float_top1: Option<f64>,
    /// Cosine similarity of all outputs against the float model.
    pub cosine: f64,
    /// Largest |golden - float| over all output elements.
    pub max_abs_error: f64,
    /// Mean |golden - float|.
    pub mean_abs_error: f64,
    /// Fraction of rows whose argmax agrees with the float model's.
    pub argmax_agreement: f64,
    /// Cost model: cycles per inference of the slowest instance.
    pub ii_cycles: u64,
    /// Latency model: cycles from the first input beat to the first output beat.
    pub latency_cycles: u64,
    /// Cost model: multipliers of the whole design.
    pub multipliers: u64,
    /// Cost model: memory bits (weight ROMs, buffers).
    pub memory_bits: u64,
    /// Resource model: LUTs used as logic, whole design.
    pub lut: u64,
    /// Resource model: flip-flops.
    pub ff: u64,
    /// Resource model: DSP48E1 slices.
    pub dsp: u64,
    /// Resource model: block RAM in 18 kbit equivalents.
    pub bram18: u64,
    /// Resource model: LUTs used as distributed RAM.
    pub lutram: u64,
}

/// The data a sweep reads besides the model and the configuration.
#[derive(Debug, Clone, Default)]
pub struct Data {
    /// Shapes of inputs with dynamic dimensions.
    pub input_shapes: BTreeMap<String, Vec<usize>>,
    /// `--calibrate` files per graph input (replace `[calibration] inputs`).
    pub calibrate: BTreeMap<String, Vec<PathBuf>>,
    /// `--eval` files per graph input (seeded inputs when empty).
    pub eval: BTreeMap<String, Vec<PathBuf>>,
    /// `--labels`: one class index per row of the first output over all evaluation inferences.
    pub labels: Option<PathBuf>,
}

/// What every point shares.
#[derive(Debug)]
pub struct Context {
    /// The float graph after the analysis passes.
    pub float_graph: MaseGraph,
    /// The float graph with calibration statistics (what `auto_precision` reads).
    pub stats_graph: MaseGraph,
    /// The calibration samples.
    pub calibration: Vec<Sample>,
    /// The evaluation inputs, one map per inference.
    pub eval: Vec<Sample>,
    /// The float model's outputs on them, per graph output, inferences concatenated along the
    /// first axis.
    pub float_outs: Vec<Tensor>,
    /// The labels.
    pub labels: Option<Tensor>,
    /// The base `[passes.auto_precision]`.
    pub auto: AutoPrecision,
    /// The base `[hardware]`.
    pub hw: HwConfig,
}

/// Concatenates per-inference tensors of one shape along the first axis (a scalar shape
/// becomes a vector).
fn concat(ts: &[Tensor]) -> Result<Tensor> {
    let first = ts.first().ok_or_else(|| SweepError::Config("no evaluation inferences".into()))?;
    let mut shape = first.shape().to_vec();
    if shape.is_empty() {
        shape.push(1);
    }
    shape[0] *= ts.len();
    let data: Vec<f32> = ts.iter().flat_map(|t| t.to_f32().iter().copied().collect::<Vec<_>>()).collect();
    Tensor::from_f32(&shape, data).ok_or_else(|| SweepError::Config("outputs of different shapes".into()))
}

impl Context {
    /// Imports the model, runs the analysis passes, gathers calibration statistics (from
    /// `--calibrate`, else `[calibration] inputs`, else seeded inputs, as `mase flow` does),
    /// reads the evaluation data and runs the float model on it. `ops` are the mase ops of the
    /// per-op axes; each must occur in the graph.
    pub fn prepare(
        onnx: &[u8],
        origin: &str,
        flow: &FlowConfig,
        data: &Data,
        ops: &[String],
    ) -> Result<Context> {
        let import = ImportOptions { input_shapes: data.input_shapes.clone(), ..Default::default() };
        let graph = import_bytes(onnx, origin, &import)?;
        let chain = ["init_metadata", "add_common_metadata", "remove_dropout", "validate"];
        let (graph, _) = mase_emit::pass_manager().run(graph, &chain, &toml::Table::new())?;
        let present: std::collections::BTreeSet<&str> = graph.nodes().map(|(_, n)| n.op.mase_op()).collect();
        if let Some(op) = ops.iter().find(|o| !present.contains(o.as_str())) {
            return Err(SweepError::Config(format!(
                "[sweep.ops.{op}]: no node of op `{op}` in {origin} (its ops: {})",
                present.into_iter().collect::<Vec<_>>().join(", ")
            )));
        }
        let calibration = if !data.calibrate.is_empty() {
            load_samples(&graph, &data.calibrate)?
        } else if !flow.calibration.inputs.is_empty() {
            load_samples(&graph, &flow.calibration.inputs)?
        } else {
            (0..flow.calibration.samples)
                .map(|k| mase_emit::flow::seeded_inputs(&graph, 10 + k))
                .collect::<mase_ir::Result<Vec<_>>>()?
        };
        let stats_graph = software_stats(graph.clone(), &calibration, &StatsOptions::default())?;
        let eval = if data.eval.is_empty() {
            (0..SEEDED_EVAL_INFERENCES)
                .map(|k| mase_emit::flow::seeded_inputs(&graph, 1000 + k))
                .collect::<mase_ir::Result<Vec<_>>>()?
        } else {
            load_samples(&graph, &data.eval).map_err(|e| SweepError::Config(format!("--eval: {e}")))?
        };
        // The float model on every evaluation inference, on the sweep's worker threads.
        let runs: Vec<Vec<Tensor>> = {
            use rayon::prelude::*;
            eval.par_iter()
                .map(|s| mase_ir::interp::run_outputs(&graph, s))
                .collect::<mase_ir::Result<_>>()?
        };
        let mut per_out: Vec<Vec<Tensor>> = Vec::new();
        for outs in runs {
            for (k, t) in outs.into_iter().enumerate() {
                if per_out.len() <= k {
                    per_out.push(Vec::new());
                }
                per_out[k].push(t);
            }
        }
        let float_outs = per_out.iter().map(|ts| concat(ts)).collect::<Result<Vec<_>>>()?;
        let labels = match &data.labels {
            Some(p) => Some(mase_ir::npy::read_npy(p)?),
            None => None,
        };
        Ok(Context {
            float_graph: graph,
            stats_graph,
            calibration,
            eval,
            float_outs,
            labels,
            auto: flow.passes.auto_precision.clone(),
            hw: flow.hardware.clone(),
        })
    }

    /// The `[hardware]` configuration of a point.
    pub fn point_hw(&self, spec: &PointSpec) -> Result<HwConfig> {
        point_hw(&self.hw, spec.rate)
    }

    /// The quantized graph with hardware metadata and the stitched design of a point.
    pub fn build(&self, spec: &PointSpec) -> Result<(MaseGraph, Design)> {
        let mut auto = self.auto.clone();
        auto.width = spec.width;
        auto.weight_width = spec.weight_width;
        auto.weight_granularity = spec.weight_granularity.clone();
        let opts = auto.options()?;
        let mut ops = self.auto.op_widths();
        ops.extend(spec.ops.iter().map(|(k, v)| (k.clone(), *v)));
        let (qgraph, _) = mase_emit::per_op::auto_precision_ops(self.stats_graph.clone(), &opts, &ops)?;
        let hw = self.point_hw(spec)?;
        let (graph, _) = mase_emit::add_hardware_metadata(qgraph, &hw)?;
        let design = mase_emit::design_of(&graph, hw.top_name())?;
        Ok((graph, design))
    }

    /// Emits a point's project into `dir` and returns the directory's write lock, still held, so
    /// the caller simulates or synthesizes the project before another writer may replace it.
    pub fn emit(&self, spec: &PointSpec, dir: &Path) -> Result<ProjectLock> {
        let (graph, design) = self.build(spec)?;
        let lock = ProjectLock::write(dir)?;
        let e = mase_emit::project::write_project_in(&lock, &graph, &design, self.hw.clock_mhz)?;
        lock.finish(&e.files)?;
        Ok(lock)
    }

    /// Evaluates a point: cost-model figures and golden-model accuracy.
    pub fn evaluate(&self, spec: &PointSpec) -> Result<Metrics> {
        let (_, design) = self.build(spec)?;
        let r = mase_emit::report::report(&design);
        let outs = self.golden_outputs(&design)?;
        let acc = mase_ir::quant::accuracy(&self.float_outs, &outs, self.labels.as_ref())?;
        Ok(Metrics {
            top1: acc.quantized_accuracy,
            float_top1: acc.float_accuracy,
            cosine: acc.cosine,
            max_abs_error: acc.max_abs_error,
            mean_abs_error: acc.mean_abs_error,
            argmax_agreement: acc.argmax_agreement,
            ii_cycles: r.ii_cycles,
            latency_cycles: r.latency_cycles_estimate,
            multipliers: r.multipliers,
            memory_bits: r.memory_bits,
            lut: r.resources.lut,
            ff: r.resources.ff,
            dsp: r.resources.dsp,
            bram18: r.resources.bram18,
            lutram: r.resources.lutram,
        })
    }

    /// Input codes of the evaluation inferences, one vector per input port.
    pub fn input_codes(&self, design: &Design, samples: &[Sample]) -> Result<Vec<Vec<i64>>> {
        let mut codes = Vec::new();
        for (idx, port) in design.ports.iter().enumerate().filter(|(_, p)| p.dir == PortDir::Input) {
            let mut c = Vec::new();
            for s in samples {
                let t = s.get(&port.tensor).ok_or_else(|| {
                    SweepError::Config(format!("evaluation data has no input `{}`", port.tensor))
                })?;
                c.extend(mase_emit::golden::quantize_input(design, idx, t)?);
            }
            codes.push(c);
        }
        Ok(codes)
    }

    /// The golden model's outputs on the evaluation inputs, as values, per output port with
    /// the inferences concatenated (the layout of [`Context::float_outs`]).
    fn golden_outputs(&self, design: &Design) -> Result<Vec<Tensor>> {
        let codes = self.input_codes(design, &self.eval)?;
        let outs = mase_emit::golden::run(design, &codes)?;
        let n = self.eval.len();
        design
            .ports
            .iter()
            .filter(|p| p.dir == PortDir::Output)
            .zip(outs)
            .map(|(p, c)| {
                let mut shape = p.shape.clone();
                if shape.is_empty() {
                    shape.push(1);
                }
                shape[0] *= n;
                let vals: Vec<f32> = c.iter().map(|v| to_f64(*v, &p.format) as f32).collect();
                Tensor::from_f32(&shape, vals).ok_or_else(|| {
                    SweepError::Config(format!("golden model: output {} has {} elements", p.name, c.len()))
                })
            })
            .collect()
    }
}

/// A `[hardware]` configuration with a point's rate in place of the base's.
pub fn point_hw(base: &HwConfig, rate: Option<Rate>) -> Result<HwConfig> {
    let mut hw = base.clone();
    if let Some(rate) = rate {
        hw.target_ii = None;
        hw.target_ii_per_row = None;
        hw.multiplier_budget = None;
        match rate {
            Rate::MultiplierBudget(b) => hw.multiplier_budget = Some(b),
            Rate::TargetIi(t) => hw.target_ii = Some(t),
        }
    }
    Ok(hw.checked("sweep point")?)
}
