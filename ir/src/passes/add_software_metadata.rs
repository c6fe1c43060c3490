//! `add_software_metadata`: statistics of every tensor over calibration inputs.
//!
//! The float interpreter runs once per calibration sample; every f32 value of every node is
//! recorded, and per node the pass fills `software.results["data_out_0"].stat` with the fields of
//! [`Stats`] (MASE's `stat` dict):
//!
//! - `variance_online`: Welford's streaming mean and variance, updated element by element in
//!   sample order.
//! - `variance_precise`: two passes over all recorded values in f64 (mean, then the corrected
//!   sum of squared deviations).
//! - `range_n_sigma`: `mean ± n_sigma · sqrt(variance_precise)`.
//! - `range_quantile`: the exact `1 - quantile` and `quantile` quantiles of all recorded values,
//!   with linear interpolation between order statistics (numpy's default `linear` method: with
//!   the values sorted ascending as `x[0..n]`, `q(p) = x[⌊h⌋] + (h - ⌊h⌋)(x[⌊h⌋+1] - x[⌊h⌋])`
//!   where `h = (n - 1)·p`).
//! - `range_min_max`: the smallest and largest value seen.
//!
//! Variances are population variances (divided by the count); `count` is the number of scalar
//! elements the statistic covers (samples × elements per tensor). Each `data_in_k` argument gets
//! its producer's result statistics; the tensors a node owns (`weight`, `bias`) get the
//! statistics of their values (a constant node's tensor is its result). Integer tensors (shapes,
//! indices) and empty tensors get no statistics. Additive-mask values (`|x| ≥ 1e30`, e.g. the
//! −3.4e38 exporters add at padded key positions, see [`crate::quant::is_mask_value`]) are left
//! out of every statistic and counted in `mask_values`. A NaN is an error naming the node and the
//! sample, since it would make every range meaningless.
//!
//! Arguments (TOML):
//!
//! ```toml
//! [add_software_metadata]
//! inputs = { x = ["calib/x0.npy", "calib/x1.npy"] }  # one file per sample and graph input
//! quantile = 0.999    # optional, in [0.5, 1]
//! n_sigma = 3.0       # optional, > 0
//! max_samples = 16    # optional: use at most this many samples
//! ```
//!
//! Memory: every f32 value of every node is kept until the end (4 bytes × elements × samples
//! per node) for the exact precise variance and quantiles; cap it with `max_samples`.
//!
//! Every graph input needs a list and all lists need the same length. Relative paths are
//! relative to the current directory. [`software_stats`] does the same from tensors in memory.

use std::collections::HashMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::graph::MaseGraph;
use crate::metadata::{RangeStat, SoftwareMeta, SoftwareTensorMeta, Stats, VarianceStat};
use crate::op::Op;
use crate::pass::{PassArgs, PassInfo};
use crate::tensor::Tensor;

/// Options of [`software_stats`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StatsOptions {
    /// Upper quantile of `range_quantile` (the lower one is `1 - quantile`), in [0.5, 1].
    pub quantile: f64,
    /// Number of standard deviations of `range_n_sigma`, > 0.
    pub n_sigma: f64,
    /// Use at most this many samples (all when `None`).
    pub max_samples: Option<usize>,
}

impl Default for StatsOptions {
    fn default() -> Self {
        StatsOptions { quantile: 0.999, n_sigma: 3.0, max_samples: None }
    }
}

impl StatsOptions {
    /// Checks the ranges of the options.
    pub fn check(&self) -> Result<()> {
        if !(0.5..=1.0).contains(&self.quantile) {
            return Err(Error::Config(format!(
                "add_software_metadata: quantile must be in [0.5, 1] (the range is [q(1-quantile), q(quantile)]), got {}",
                self.quantile
            )));
        }
        if !(self.n_sigma.is_finite() && self.n_sigma > 0.0) {
            return Err(Error::Config(format!(
                "add_software_metadata: n_sigma must be a positive number, got {}",
                self.n_sigma
            )));
        }
        if self.max_samples == Some(0) {
            return Err(Error::Config("add_software_metadata: max_samples must be at least 1".into()));
        }
        Ok(())
    }
}

/// Running statistics of one tensor: Welford state, extremes and every value seen.
#[derive(Default)]
struct Collector {
    count: u64,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
    record: Vec<f32>,
    /// Additive-mask values seen (left out of the statistics).
    masked: u64,
}

impl Collector {
    /// Adds every element of `data`; `Err(index)` at the first non-finite one.
    fn add(&mut self, data: &ndarray::ArrayD<f32>) -> std::result::Result<(), usize> {
        self.record.reserve(data.len());
        for (i, &x) in data.iter().enumerate() {
            if crate::quant::is_mask_value(x) {
                self.masked += 1;
                continue;
            }
            if !x.is_finite() {
                return Err(i);
            }
            let v = f64::from(x);
            if self.count == 0 {
                self.min = v;
                self.max = v;
            } else {
                self.min = self.min.min(v);
                self.max = self.max.max(v);
            }
            self.count += 1;
            let delta = v - self.mean;
            self.mean += delta / self.count as f64;
            self.m2 += delta * (v - self.mean);
            self.record.push(x);
        }
        Ok(())
    }

    /// The statistics, or `None` when nothing was recorded.
    fn finish(mut self, opts: &StatsOptions) -> Option<Stats> {
        let mask_values = (self.masked > 0).then_some(self.masked);
        if self.count == 0 {
            return mask_values.map(|m| Stats { mask_values: Some(m), ..Default::default() });
        }
        let n = self.count as f64;
        let count = self.count;
        let mean = self.record.iter().map(|&x| f64::from(x)).sum::<f64>() / n;
        let (sq, lin) = self.record.iter().fold((0.0f64, 0.0f64), |(sq, lin), &x| {
            let d = f64::from(x) - mean;
            (sq + d * d, lin + d)
        });
        let variance = ((sq - lin * lin / n) / n).max(0.0);
        let sigma = variance.sqrt();
        Some(Stats {
            variance_online: Some(VarianceStat { variance: self.m2 / n, mean: self.mean, count }),
            variance_precise: Some(VarianceStat { variance, mean, count }),
            range_n_sigma: Some(RangeStat {
                min: mean - opts.n_sigma * sigma,
                max: mean + opts.n_sigma * sigma,
                count,
            }),
            range_quantile: Some(RangeStat {
                min: quantile(&mut self.record, 1.0 - opts.quantile),
                max: quantile(&mut self.record, opts.quantile),
                count,
            }),
            range_min_max: Some(RangeStat { min: self.min, max: self.max, count }),
            mask_values,
        })
    }
}

/// The `p` quantile of non-empty `values` with linear interpolation between order statistics
/// (position `h = (n-1)·p` in ascending order), found by selection in O(n); reorders `values`.
pub fn quantile(values: &mut [f32], p: f64) -> f64 {
    let n = values.len();
    let h = (n - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = (h.floor() as usize).min(n - 1);
    let (_, a, above) = values.select_nth_unstable_by(lo, f32::total_cmp);
    let a = f64::from(*a);
    // The next order statistic is the smallest value above position `lo`.
    let b = above.iter().copied().min_by(f32::total_cmp).map_or(a, f64::from);
    a + (h - lo as f64) * (b - a)
}

/// Statistics of one fixed tensor (a weight), or `None` for an integer or empty tensor.
fn tensor_stats(
    node: &crate::graph::Node,
    key: &str,
    t: &Tensor,
    opts: &StatsOptions,
) -> Result<Option<Stats>> {
    let Tensor::F32(a) = t else { return Ok(None) };
    let mut c = Collector::default();
    c.add(a).map_err(|i| node.error(format!("tensor '{key}' has a non-finite value at flat index {i}")))?;
    Ok(c.finish(opts))
}

/// Runs the interpreter on each sample (a map from graph input name to tensor) and records the
/// statistics described in the module documentation into every node's `software` metadata,
/// which is replaced. Errors on no samples, a sample missing a graph input (or naming one the
/// graph does not have), a shape the graph does not accept, or a non-finite value.
pub fn software_stats(
    mut graph: MaseGraph,
    samples: &[HashMap<String, Tensor>],
    opts: &StatsOptions,
) -> Result<MaseGraph> {
    opts.check()?;
    let samples = &samples[..samples.len().min(opts.max_samples.unwrap_or(usize::MAX))];
    if samples.is_empty() {
        return Err(Error::Config("add_software_metadata: no calibration samples given".into()));
    }
    let mut collectors: Vec<Collector> = graph.ids().map(|_| Collector::default()).collect();
    for (s, sample) in samples.iter().enumerate() {
        let values = crate::interp::run_graph(&graph, sample).map_err(|e| match e {
            Error::Node { node, op, origin, msg } => {
                Error::Node { node, op, origin, msg: format!("calibration sample {s}: {msg}") }
            }
            Error::Invalid(msg) => Error::Invalid(format!("calibration sample {s}: {msg}")),
            other => other,
        })?;
        for ((id, node), v) in graph.nodes().zip(&values) {
            if matches!(node.op, Op::Output) {
                continue;
            }
            if let Tensor::F32(a) = v {
                collectors[id.0].add(a).map_err(|i| {
                    node.error(format!(
                        "calibration sample {s}: non-finite value at flat index {i} of the result"
                    ))
                })?;
            }
        }
    }
    let results: Vec<Option<Stats>> = collectors.into_iter().map(|c| c.finish(opts)).collect();
    let mut metas = Vec::with_capacity(graph.len());
    for (id, node) in graph.nodes() {
        let mut sw = SoftwareMeta::default();
        for (k, i) in node.inputs.iter().enumerate() {
            if let Some(st) = &results[i.0] {
                sw.args.insert(format!("data_in_{k}"), SoftwareTensorMeta { stat: st.clone() });
            }
        }
        if !matches!(node.op, Op::Constant { .. }) {
            for (role, key) in node.op.weight_names() {
                let t = graph.weights.get(key).ok_or_else(|| {
                    node.error(format!("{role} tensor '{key}' is missing from the weights"))
                })?;
                if let Some(st) = tensor_stats(node, key, t, opts)? {
                    sw.args.insert(role.to_string(), SoftwareTensorMeta { stat: st });
                }
            }
        }
        if let Some(st) = &results[id.0] {
            sw.results.insert("data_out_0".into(), SoftwareTensorMeta { stat: st.clone() });
        }
        metas.push(sw);
    }
    let ids: Vec<_> = graph.ids().collect();
    for (id, sw) in ids.into_iter().zip(metas) {
        graph.node_mut(id).meta.software = sw;
    }
    Ok(graph)
}

/// A number argument (TOML integer or float).
fn number(args: &PassArgs, key: &str) -> Result<Option<f64>> {
    match args.get(key) {
        None => Ok(None),
        Some(toml::Value::Float(f)) => Ok(Some(*f)),
        Some(toml::Value::Integer(i)) => Ok(Some(*i as f64)),
        Some(v) => {
            Err(Error::Config(format!("add_software_metadata: {key} must be a number, got {}", v.type_str())))
        }
    }
}

/// Calibration files per graph input, in graph input order.
type FileLists = Vec<(String, Vec<String>)>;

/// Parses the pass arguments into options and, per graph input, its list of files.
fn parse_args(graph: &MaseGraph, args: &PassArgs) -> Result<(StatsOptions, FileLists)> {
    const KNOWN: [&str; 4] = ["inputs", "quantile", "n_sigma", "max_samples"];
    if let Some(k) = args.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(Error::Config(format!(
            "add_software_metadata: unknown argument '{k}'; arguments are: {}",
            KNOWN.join(", ")
        )));
    }
    let mut opts = StatsOptions::default();
    if let Some(q) = number(args, "quantile")? {
        opts.quantile = q;
    }
    if let Some(n) = number(args, "n_sigma")? {
        opts.n_sigma = n;
    }
    match args.get("max_samples") {
        None => {}
        Some(toml::Value::Integer(i)) if *i >= 1 => opts.max_samples = Some(*i as usize),
        Some(v) => {
            return Err(Error::Config(format!(
                "add_software_metadata: max_samples must be an integer >= 1, got {v}"
            )))
        }
    }
    opts.check()?;
    let placeholders: Vec<String> =
        graph.input_ids().into_iter().map(|i| graph.node(i).name.clone()).collect();
    let usage = format!(
        "give one list of .npy files per graph input, e.g. inputs = {{ {} = [\"a.npy\", \"b.npy\"] }}; the graph's inputs are: {}",
        placeholders.first().map(String::as_str).unwrap_or("x"),
        placeholders.join(", ")
    );
    let Some(inputs) = args.get("inputs") else {
        return Err(Error::Config(format!("add_software_metadata needs calibration inputs: {usage}")));
    };
    let Some(table) = inputs.as_table() else {
        return Err(Error::Config(format!("add_software_metadata: inputs must be a table; {usage}")));
    };
    if let Some(k) = table.keys().find(|k| !placeholders.contains(k)) {
        return Err(Error::Config(format!(
            "add_software_metadata: inputs names '{k}', which is not a graph input; {usage}"
        )));
    }
    let mut lists = Vec::new();
    for p in &placeholders {
        let Some(v) = table.get(p) else {
            return Err(Error::Config(format!(
                "add_software_metadata: no calibration files for graph input '{p}'; {usage}"
            )));
        };
        let files = v
            .as_array()
            .and_then(|a| a.iter().map(|f| f.as_str().map(str::to_string)).collect::<Option<Vec<_>>>())
            .ok_or_else(|| {
                Error::Config(format!(
                    "add_software_metadata: inputs.{p} must be a list of file names; {usage}"
                ))
            })?;
        lists.push((p.clone(), files));
    }
    if let Some(((a, fa), (b, fb))) =
        lists.first().and_then(|first| lists.iter().find(|l| l.1.len() != first.1.len()).map(|l| (first, l)))
    {
        return Err(Error::Config(format!(
            "add_software_metadata: every graph input needs the same number of samples, but '{a}' has {} files and '{b}' has {}",
            fa.len(),
            fb.len()
        )));
    }
    Ok((opts, lists))
}

/// The pass (`add_software_metadata` in [`super::REGISTRY`]): computes software statistics over
/// calibration inputs.
pub fn run(graph: MaseGraph, args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    let (opts, lists) = parse_args(&graph, args)?;
    let n = lists.first().map_or(0, |l| l.1.len()).min(opts.max_samples.unwrap_or(usize::MAX));
    let mut samples = Vec::with_capacity(n);
    for s in 0..n {
        let mut sample = HashMap::new();
        for (name, files) in &lists {
            let dtype = graph.input_dtype(name).unwrap_or(crate::tensor::DType::F32);
            sample.insert(name.clone(), crate::npy::read_npy_as(Path::new(&files[s]), dtype)?);
        }
        samples.push(sample);
    }
    let graph = software_stats(graph, &samples, &opts)?;
    let mut info = PassInfo::new();
    info.insert("samples".into(), n.into());
    info.insert("quantile".into(), opts.quantile.into());
    info.insert("n_sigma".into(), opts.n_sigma.into());
    let with_stats = graph.nodes().filter(|(_, nd)| !nd.meta.software.results.is_empty()).count();
    info.insert("nodes_with_stats".into(), with_stats.into());
    Ok((graph, info))
}
