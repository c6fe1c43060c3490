//! The EXTERNAL toolchain: a node implemented by the user's own SystemVerilog module, described
//! by a small TOML manifest, selected with `[hardware.nodes.NAME] external = "manifest.toml"`.
//!
//! ```toml
//! module = "my_relu"              # the module; stream ports as the library's: clk, rst,
//!                                 # data_in_k / _valid / _ready per node input, data_out_0 / …
//! sources = ["my_relu.sv"]        # relative to the manifest, dependencies first
//! lanes = 4                       # elements per beat on every stream
//! latency_cycles = 1              # cost model: first output after the first input
//! cycles_per_beat = 1             # cost model: cycles per input beat in steady state
//! multipliers = 0                 # for the report
//! output_format = "input"         # or "declared" (default): the format data_out_0 carries
//! [parameters]                    # SV parameters: integers, or a quantity of the node:
//! DATA_WIDTH = "data_in_0.width"  # data_in_K.width | .frac, data_out_0.width | .frac,
//! LANES = "lanes"                 # lanes, row (last dimension), rows, numel
//! [model]
//! kind = "float_op"               # the node's own float function rounded into data_out_0
//! # kind = "table"                # or: output codes for every input code, lowest first,
//! # file = "table.npy"            #     int64 .npy (element-wise nodes with one input)
//! # kind = "rust"                 # or: a Rust model registered by a program using the
//! # name = "my_model"             #     library (register_model), any number of inputs
//! ```
//!
//! The golden model of the instance is the table (one input, element-wise); the emitter copies
//! the sources into the project, checks the module header declares every parameter and port it
//! connects, and records `toolchain = EXTERNAL` in the node's hardware metadata.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use indexmap::IndexMap;
use mase_hwlib::{Component, Cost, Direction, Info, Params, Stimulus, StreamSpec, StreamValues};
use mase_ir::fixed::{from_f64, to_f64, FixedFormat};
use mase_ir::tensor::Tensor;
use mase_ir::{Error, MaseGraph, Node, Result};
use serde::{Deserialize, Serialize};

use mase_hwlib::binding::fmt_name;
use mase_hwlib::NodeView;

/// Widest input format a table model covers (2^20 entries).
pub const MAX_TABLE_BITS: u32 = 20;

/// How the golden model computes the module's output.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// `float_op`, `table` or `rust`.
    pub kind: String,
    /// For `table`: the `.npy` file of output codes, relative to the manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// For `rust`: the name the model was registered under ([`register_model`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A golden model written in Rust for a user's module: the instance (formats, row, parameters)
/// and its input streams (codes in stream order) → its output streams. Any number of inputs.
pub type RustModel =
    Arc<dyn Fn(&External, &Stimulus) -> std::result::Result<StreamValues, String> + Send + Sync>;

fn models() -> &'static Mutex<BTreeMap<String, RustModel>> {
    static MODELS: OnceLock<Mutex<BTreeMap<String, RustModel>>> = OnceLock::new();
    MODELS.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Registers a Rust golden model under `name`, for manifests with `[model] kind = "rust"`,
/// `name = "…"` (library users: call this before running the flow).
pub fn register_model(name: &str, model: RustModel) {
    models().lock().unwrap_or_else(|e| e.into_inner()).insert(name.to_string(), model);
}

/// How an instance's golden model is computed.
#[derive(Clone)]
pub enum Golden {
    /// Output code per input code (lowest input code first).
    Table(Vec<i64>),
    /// A registered Rust model.
    Rust(RustModel),
}

impl std::fmt::Debug for Golden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Golden::Table(t) => write!(f, "Table({} entries)", t.len()),
            Golden::Rust(_) => write!(f, "Rust model"),
        }
    }
}

/// A parameter value in a manifest.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum ParamValue {
    /// A literal.
    Int(i64),
    /// A quantity of the node (see the module docs).
    From(String),
}

/// The manifest as written.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// SystemVerilog module name.
    pub module: String,
    /// Source files relative to the manifest, dependencies first.
    pub sources: Vec<String>,
    /// Elements per beat on every stream.
    #[serde(default = "one")]
    pub lanes: usize,
    /// Cost model: first-output latency.
    #[serde(default)]
    pub latency_cycles: u64,
    /// Cost model: cycles per input beat.
    #[serde(default = "one_u64")]
    pub cycles_per_beat: u64,
    /// For the report.
    #[serde(default)]
    pub multipliers: u64,
    /// Format of the module's output: `declared` (the node's result format, the default) or
    /// `input` (the format of `data_in_0`; the emitter then casts into the declared format).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_format: Option<String>,
    /// SV parameters.
    #[serde(default)]
    pub parameters: IndexMap<String, ParamValue>,
    /// The golden model.
    pub model: ModelSpec,
}

fn one() -> usize {
    1
}
fn one_u64() -> u64 {
    1
}

/// A user's module bound to one node.
#[derive(Debug, Clone)]
pub struct External {
    /// The manifest.
    pub manifest: Manifest,
    /// The manifest's path.
    pub path: PathBuf,
    /// Source files: (file name, text).
    pub sources: Vec<(String, String)>,
    /// Formats of the node's inputs.
    pub inputs: Vec<FixedFormat>,
    /// Format of its result.
    pub output: FixedFormat,
    /// Elements per row (last dimension) of the main input.
    pub row: usize,
    /// The golden model.
    pub golden: Golden,
    /// Resolved SV parameters.
    pub params: Params,
}

fn cfg_err(path: &Path, msg: impl std::fmt::Display) -> Error {
    Error::file(path, msg.to_string())
}

/// Resolves `path` (relative paths against `base`).
pub fn resolve(base: Option<&Path>, path: &str) -> PathBuf {
    let p = PathBuf::from(path);
    match base {
        Some(b) if p.is_relative() => b.join(p),
        _ => p,
    }
}

impl External {
    /// Loads the manifest at `path` and binds it to `node`.
    pub fn load(path: &Path, graph: &MaseGraph, node: &Node) -> Result<External> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let manifest: Manifest = toml::from_str(&text).map_err(|e| {
            cfg_err(path, format!("{e} (keys: module, sources, lanes, latency_cycles, cycles_per_beat, multipliers, [parameters], [model])"))
        })?;
        let ident = |s: &str| {
            s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        if !ident(&manifest.module) {
            return Err(cfg_err(
                path,
                format!("module = {:?} is not a SystemVerilog identifier", manifest.module),
            ));
        }
        if manifest.sources.is_empty() || manifest.lanes == 0 || manifest.cycles_per_beat == 0 {
            return Err(cfg_err(path, "needs at least one source, lanes >= 1 and cycles_per_beat >= 1"));
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut sources = Vec::new();
        for s in &manifest.sources {
            let p = dir.join(s);
            let t = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            sources.push((name, t));
        }
        let view = NodeView::new(graph, node);
        let inputs: Vec<FixedFormat> =
            (0..node.inputs.len()).map(|k| view.in_format(k)).collect::<Result<_>>()?;
        let output = match manifest.output_format.as_deref() {
            None | Some("declared") => view.out_format()?,
            Some("input") => *inputs.first().ok_or_else(|| node.error("has no input"))?,
            Some(other) => {
                return Err(cfg_err(
                    path,
                    format!("output_format = {other:?}: use \"declared\" or \"input\""),
                ))
            }
        };
        let shape = view.in_shape(0)?;
        let row = *shape.last().unwrap_or(&1);
        if row % manifest.lanes != 0 {
            return Err(node.error(format!(
                "external module {}: lanes = {} does not divide the row length {row}",
                manifest.module, manifest.lanes
            )));
        }
        let numel: usize = shape.iter().product();
        let mut params = Params::new();
        for (name, v) in &manifest.parameters {
            let value = match v {
                ParamValue::Int(i) => *i,
                ParamValue::From(q) => quantity(q, &inputs, &output, manifest.lanes, row, numel)
                    .ok_or_else(|| cfg_err(path, format!("[parameters] {name} = {q:?}: unknown quantity; use data_in_K.width, data_in_K.frac, data_out_0.width, data_out_0.frac, lanes, row, rows or numel")))?,
            };
            params.insert(name.clone(), value);
        }
        let golden = if manifest.model.kind == "rust" {
            let name = manifest.model.name.as_deref().ok_or_else(|| {
                cfg_err(path, "[model] kind = \"rust\" needs name = \"…\" (the registered model)")
            })?;
            let reg = models().lock().unwrap_or_else(|e| e.into_inner());
            let m = reg.get(name).cloned().ok_or_else(|| {
                let known: Vec<&String> = reg.keys().collect();
                cfg_err(path, format!("no Rust model registered as {name:?} (registered: {known:?}); register it with mase_emit::external::register_model"))
            })?;
            Golden::Rust(m)
        } else {
            Golden::Table(table_model(&manifest, dir, path, graph, node, &inputs, &output)?)
        };
        Ok(External { manifest, path: path.to_path_buf(), sources, inputs, output, row, golden, params })
    }
}

fn quantity(
    q: &str,
    inputs: &[FixedFormat],
    out: &FixedFormat,
    lanes: usize,
    row: usize,
    numel: usize,
) -> Option<i64> {
    let fmt_q = |f: &FixedFormat, field: &str| match field {
        "width" => Some(f.width as i64),
        "frac" => Some(f.frac as i64),
        _ => None,
    };
    match q {
        "lanes" => Some(lanes as i64),
        "row" => Some(row as i64),
        "rows" => Some((numel / row.max(1)) as i64),
        "numel" => Some(numel as i64),
        _ => {
            let (port, field) = q.split_once('.')?;
            if port == "data_out_0" {
                return fmt_q(out, field);
            }
            let k: usize = port.strip_prefix("data_in_")?.parse().ok()?;
            fmt_q(inputs.get(k)?, field)
        }
    }
}

fn table_model(
    m: &Manifest,
    dir: &Path,
    path: &Path,
    graph: &MaseGraph,
    node: &Node,
    inputs: &[FixedFormat],
    output: &FixedFormat,
) -> Result<Vec<i64>> {
    if inputs.len() != 1 {
        return Err(node.error(format!(
            "external module {}: table and float_op models cover element-wise nodes with one input (use kind = \"rust\" with a registered model); this node has {}",
            m.module,
            inputs.len()
        )));
    }
    let fi = inputs[0];
    if fi.width > MAX_TABLE_BITS {
        return Err(node.error(format!(
            "external module {}: a table model covers inputs of up to {MAX_TABLE_BITS} bits, the input is {}",
            m.module,
            fmt_name(&fi)
        )));
    }
    let n = 1usize << fi.width;
    let table = match (m.model.kind.as_str(), &m.model.file) {
        ("table", Some(file)) => {
            let p = dir.join(file);
            let t = mase_ir::npy::read_npy(&p)?;
            let v: Vec<i64> = match t.int_values() {
                Some(a) => a.iter().copied().collect(),
                None => return Err(cfg_err(&p, "a table model holds int64 output codes")),
            };
            if v.len() != n {
                return Err(cfg_err(&p, format!("holds {} codes; the input format {} needs {n} (one per input code, lowest first)", v.len(), fmt_name(&fi))));
            }
            v
        }
        ("float_op", None) => {
            let xs: Vec<f32> = (0..n as i64).map(|i| to_f64(fi.min_code() + i, &fi) as f32).collect();
            let x = Tensor::from_f32(&[n], xs).ok_or_else(|| node.error("table input"))?;
            let y = mase_ir::interp::eval_op(&node.op, &[&x], &graph.weights).map_err(|e| {
                node.error(format!("external module {}: float_op model: {e} (it needs an element-wise op)", m.module))
            })?;
            let y = y.to_f32();
            if y.len() != n {
                return Err(node.error(format!("external module {}: float_op model needs an element-wise op", m.module)));
            }
            y.iter().map(|v| from_f64(f64::from(*v), output)).collect()
        }
        (kind, _) => {
            return Err(cfg_err(path, format!("[model] kind = {kind:?} (with file only for \"table\"): use kind = \"float_op\", kind = \"table\" with file = \"codes.npy\", or kind = \"rust\" with name = \"…\"")))
        }
    };
    if let Some(bad) = table.iter().find(|c| !output.contains_code(**c)) {
        return Err(node.error(format!(
            "external module {}: table code {bad} does not fit the output format {}",
            m.module,
            fmt_name(output)
        )));
    }
    Ok(table)
}

/// What every external module reports as a component (its parameters are its manifest's).
const EXTERNAL_INFO: Info = Info {
    name: "external",
    description: "a user module described by a manifest (EXTERNAL toolchain)",
    ..Info::DEFAULT
};

impl Component for External {
    fn info(&self) -> &'static Info {
        &EXTERNAL_INFO
    }

    fn validate(&self, _p: &Params) -> std::result::Result<(), String> {
        Ok(())
    }

    fn streams(&self, _p: &Params) -> Vec<StreamSpec> {
        let lanes = self.manifest.lanes;
        let beats = self.row / lanes;
        let mut v: Vec<StreamSpec> = self
            .inputs
            .iter()
            .enumerate()
            .map(|(k, f)| StreamSpec {
                name: format!("data_in_{k}"),
                dir: Direction::In,
                lanes,
                width: f.width,
                signed: f.signed,
                beats_per_row: beats,
            })
            .collect();
        v.push(StreamSpec {
            name: "data_out_0".into(),
            dir: Direction::Out,
            lanes,
            width: self.output.width,
            signed: self.output.signed,
            beats_per_row: beats,
        });
        v
    }

    fn model(&self, _p: &Params, stim: &Stimulus) -> std::result::Result<StreamValues, String> {
        let table = match &self.golden {
            Golden::Rust(m) => return m(self, stim),
            Golden::Table(t) => t,
        };
        let x = stim.inputs.get("data_in_0").ok_or("external model: missing input stream data_in_0")?;
        let lo = self.inputs[0].min_code();
        let y = x
            .iter()
            .map(|c| {
                table
                    .get((c - lo) as usize)
                    .copied()
                    .ok_or_else(|| format!("input code {c} outside the table"))
            })
            .collect::<std::result::Result<Vec<i64>, String>>()?;
        Ok([("data_out_0".to_string(), y)].into_iter().collect())
    }

    fn cost(&self, _p: &Params) -> Cost {
        let beats = (self.row / self.manifest.lanes) as u64;
        Cost {
            latency_cycles: self.manifest.latency_cycles,
            ii_cycles: beats * self.manifest.cycles_per_beat,
            multipliers: self.manifest.multipliers,
            memory_bits: 0,
        }
    }

    /// A user's module: mase cannot know its resources, so the estimate counts none (`mase
    /// synth DIR` measures it).
    fn resources(&self, _p: &Params) -> mase_hwlib::Resources {
        mase_hwlib::Resources::default()
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        Vec::new()
    }
}
