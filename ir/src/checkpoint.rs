//! Checkpoints: `PREFIX.json` (graph and metadata) and `PREFIX.safetensors` (weights).
//!
//! [`export`] writes two files and nothing else; [`load`] reads them back into a graph equal
//! (`==`) to the exported one, with bit-identical weights. MASE's `export` / `from_checkpoint`
//! are available as [`MaseGraph::export`] and [`MaseGraph::from_checkpoint`].
//!
//! **Prefix.** `model` names `model.json` and `model.safetensors`. A prefix that already ends in
//! `.json` or `.safetensors` names the same pair (`model.json` → `model.json`,
//! `model.safetensors`), so either file of a checkpoint can be given; any other extension is
//! part of the prefix (`bert.v2` → `bert.v2.json`). Directories are not created.
//!
//! **JSON** (format `mase-rs-checkpoint`, version [`VERSION`]), pretty-printed, deterministic:
//!
//! ```text
//! { "format": "mase-rs-checkpoint", "version": 1, "name": "...",
//!   "output_names"?: [ one per output, when the graph records them ],
//!   "nodes": [ { "name", "kind", "op": { "op": "linear", "weight": "...", ... },
//!                "inputs": [ input node NAMES ], "origin"?, "meta": { "common", "software",
//!                "hardware" } }, ... ],          // in arena (topological) order
//!   "weights":  [ { "key", "dtype": "f32" | "i64", "shape" }, ... ],
//!   "qweights": [ { "key", "format": { "signed", "width", "frac", "rounding", "overflow" },
//!                   "shape", "channel_frac"?: [ per-row fraction widths ],
//!                   "affine"?: { "scale": [ f32 ], "zero_point": [ codes ], "axis" } }, ... ] }
//! ```
//!
//! **safetensors**: each weight under its key in its own type (`F32`, `I64`, `I32`, `BOOL`);
//! each quantized weight's integer codes as `I64` under `q/<key>`. Header metadata
//! `{"format": "mase-rs-checkpoint"}`.
//!
//! Loading checks the format name and version, every node (its fields, its input names: each
//! must name an earlier node), that every listed tensor is present with the listed dtype and
//! shape, that the file holds no unlisted tensor, and finally [`MaseGraph::validate`]. Every
//! error names the file and the node or tensor key. Floats in the JSON (statistics, op
//! attributes) are read back exactly: each literal is re-parsed with Rust's correctly rounded
//! `str::parse`, since serde_json's default float parsing can be off by one ulp.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use ndarray::{ArrayD, IxDyn};
use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fixed::FixedFormat;
use crate::graph::{MaseGraph, Node, NodeKind};
use crate::metadata::NodeMeta;
use crate::op::Op;
use crate::tensor::{Affine, DType, QuantTensor, Tensor};

/// Format name in the JSON and the safetensors header.
pub const FORMAT: &str = "mase-rs-checkpoint";
/// Checkpoint format version this code writes and reads.
pub const VERSION: u64 = 1;
/// Prefix of the safetensors keys that hold quantized codes.
pub const QUANT_PREFIX: &str = "q/";

/// One node in the JSON.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeEntry {
    name: String,
    kind: NodeKind,
    op: Op,
    inputs: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    origin: Option<String>,
    meta: NodeMeta,
}

/// One float or integer weight in the JSON index.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WeightEntry {
    key: String,
    dtype: DType,
    shape: Vec<usize>,
}

/// One quantized weight in the JSON index.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct QWeightEntry {
    key: String,
    format: FixedFormat,
    shape: Vec<usize>,
    /// Per-channel fraction widths along axis 0, when the weight has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    channel_frac: Option<Vec<i32>>,
    /// The real grid of codes whose scale is not a power of two, when the weight has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    affine: Option<Affine>,
}

/// The whole JSON file (written form).
#[derive(Serialize)]
struct FileOut<'a> {
    format: &'static str,
    version: u64,
    name: &'a str,
    // Left out when empty, so graphs without output names write what they always wrote.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    output_names: &'a [String],
    nodes: Vec<NodeEntry>,
    weights: Vec<WeightEntry>,
    qweights: Vec<QWeightEntry>,
}

/// The two files of the checkpoint named by `prefix` (see the module documentation).
pub fn checkpoint_paths(prefix: &Path) -> Result<(PathBuf, PathBuf)> {
    let Some(name) = prefix.file_name() else {
        return Err(Error::file(prefix, "a checkpoint prefix needs a file name (e.g. out/model)"));
    };
    let stem: OsString = name
        .to_str()
        .and_then(|s| {
            [".json", ".safetensors"].iter().find_map(|ext| s.strip_suffix(ext).filter(|t| !t.is_empty()))
        })
        .map_or_else(|| name.to_os_string(), OsString::from);
    let with = |ext: &str| {
        let mut f = stem.clone();
        f.push(ext);
        prefix.with_file_name(f)
    };
    Ok((with(".json"), with(".safetensors")))
}

/// Little-endian bytes of a float array, in logical (row-major) order.
fn f32_bytes(a: &ArrayD<f32>) -> Vec<u8> {
    a.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Little-endian bytes of an integer array, in logical (row-major) order.
fn i64_bytes(a: &ArrayD<i64>) -> Vec<u8> {
    a.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A float field of an op that JSON cannot hold (NaN or infinite), if any.
fn non_finite_attr(op: &Op) -> Option<(&'static str, f32)> {
    let (name, v) = match op {
        Op::LayerNorm { epsilon, .. } => ("epsilon", *epsilon),
        Op::MulScalar { scalar } => ("scalar", *scalar),
        Op::Dropout { ratio } => ("ratio", *ratio),
        Op::ConstantOfShape { value, .. } if !value.is_finite() => ("value", *value as f32),
        _ => return None,
    };
    (!v.is_finite()).then_some((name, v))
}

/// Writes `PREFIX.json` and `PREFIX.safetensors` (see the module documentation). Same graph,
/// same bytes.
pub fn export(graph: &MaseGraph, prefix: &Path) -> Result<()> {
    let (json_path, st_path) = checkpoint_paths(prefix)?;
    let mut nodes = Vec::with_capacity(graph.len());
    for (_, n) in graph.nodes() {
        if let Some((attr, v)) = non_finite_attr(&n.op) {
            return Err(n.error(format!("attribute {attr} is {v}, which a JSON checkpoint cannot hold")));
        }
        nodes.push(NodeEntry {
            name: n.name.clone(),
            kind: n.kind,
            op: n.op.clone(),
            inputs: n.inputs.iter().map(|i| graph.node(*i).name.clone()).collect(),
            origin: n.origin.clone(),
            meta: n.meta.clone(),
        });
    }
    let weights: Vec<WeightEntry> = graph
        .weights
        .iter()
        .map(|(k, t)| WeightEntry { key: k.clone(), dtype: t.dtype(), shape: t.shape().to_vec() })
        .collect();
    let qweights: Vec<QWeightEntry> = graph
        .qweights
        .iter()
        .map(|(k, q)| QWeightEntry {
            key: k.clone(),
            format: q.format,
            shape: q.codes.shape().to_vec(),
            channel_frac: q.channel_frac.clone(),
            affine: q.affine.clone(),
        })
        .collect();

    // Tensor payloads, keyed by safetensors name.
    let mut payload: BTreeMap<String, (Dtype, Vec<usize>, Vec<u8>)> = BTreeMap::new();
    for (k, t) in &graph.weights {
        let (dt, bytes) = match t {
            Tensor::F32(a) => (Dtype::F32, f32_bytes(a)),
            Tensor::I64(a) => (Dtype::I64, i64_bytes(a)),
            Tensor::I32(a) => (Dtype::I32, a.iter().flat_map(|x| x.to_le_bytes()).collect()),
            Tensor::Bool(a) => (Dtype::BOOL, a.iter().map(|&x| u8::from(x)).collect()),
        };
        payload.insert(k.clone(), (dt, t.shape().to_vec(), bytes));
    }
    for (k, q) in &graph.qweights {
        let key = format!("{QUANT_PREFIX}{k}");
        if payload.contains_key(&key) {
            return Err(Error::file(
                &st_path,
                format!("weight key '{key}' collides with the key of the quantized codes of '{k}'; rename the weight"),
            ));
        }
        payload.insert(key, (Dtype::I64, q.codes.shape().to_vec(), i64_bytes(&q.codes)));
    }
    let mut views = Vec::with_capacity(payload.len());
    for (k, (dt, shape, bytes)) in &payload {
        let v = TensorView::new(*dt, shape.clone(), bytes)
            .map_err(|e| Error::file(&st_path, format!("tensor '{k}': {e}")))?;
        views.push((k.as_str(), v));
    }
    let header: HashMap<String, String> = HashMap::from([("format".to_string(), FORMAT.to_string())]);
    let st_bytes = safetensors::tensor::serialize(views, &Some(header))
        .map_err(|e| Error::file(&st_path, format!("cannot serialize the weights: {e}")))?;

    let file = FileOut {
        format: FORMAT,
        version: VERSION,
        name: &graph.name,
        output_names: &graph.output_names,
        nodes,
        weights,
        qweights,
    };
    let mut json = serde_json::to_vec_pretty(&file)
        .map_err(|e| Error::file(&json_path, format!("cannot serialize the graph: {e}")))?;
    json.push(b'\n');
    std::fs::write(&json_path, json).map_err(|e| Error::io(&json_path, e))?;
    std::fs::write(&st_path, st_bytes).map_err(|e| Error::io(&st_path, e))?;
    Ok(())
}

/// Reads a field of the top-level JSON object as a typed value.
fn field<T: serde::de::DeserializeOwned>(
    obj: &mut serde_json::Map<String, serde_json::Value>,
    key: &str,
    path: &Path,
) -> Result<T> {
    let v =
        obj.remove(key).ok_or_else(|| Error::file(path, format!("the checkpoint has no '{key}' field")))?;
    serde_json::from_value(v).map_err(|e| Error::file(path, format!("field '{key}': {e}")))
}

/// The tensor `key` of the safetensors file, checked against the dtype and shape the index
/// lists.
fn tensor_bytes<'a>(
    st: &'a SafeTensors<'a>,
    key: &str,
    dtype: Dtype,
    shape: &[usize],
    path: &Path,
) -> Result<&'a [u8]> {
    let v = st.tensor(key).map_err(|_| {
        Error::file(path, format!("tensor '{key}' is listed in the JSON index but missing from this file"))
    })?;
    if v.dtype() != dtype {
        return Err(Error::file(
            path,
            format!("tensor '{key}' is {:?}, the JSON index says {dtype:?}", v.dtype()),
        ));
    }
    if v.shape() != shape {
        return Err(Error::file(
            path,
            format!("tensor '{key}' has shape {:?}, the JSON index says {shape:?}", v.shape()),
        ));
    }
    Ok(v.data())
}

/// An array from little-endian bytes of elements of `N` bytes.
fn from_le<T, const N: usize>(shape: &[usize], bytes: &[u8], conv: fn([u8; N]) -> T) -> Option<ArrayD<T>> {
    let data: Vec<T> =
        bytes.chunks_exact(N).map(|c| conv(c.try_into().expect("chunks_exact gives N bytes"))).collect();
    ArrayD::from_shape_vec(IxDyn(shape), data).ok()
}

/// Reads the checkpoint named by `prefix` (see the module documentation) into a graph.
pub fn load(prefix: &Path) -> Result<MaseGraph> {
    let (json_path, st_path) = checkpoint_paths(prefix)?;
    let json_bytes = std::fs::read(&json_path).map_err(|e| Error::io(&json_path, e))?;
    let jp = json_path.as_path();
    let value: serde_json::Value =
        serde_json::from_slice(&json_bytes).map_err(|e| Error::file(jp, format!("not valid JSON: {e}")))?;
    let serde_json::Value::Object(mut obj) = value else {
        return Err(Error::file(jp, "a checkpoint is a JSON object"));
    };
    let format: String = field(&mut obj, "format", jp)?;
    if format != FORMAT {
        return Err(Error::file(jp, format!("format is '{format}', expected '{FORMAT}'")));
    }
    let version: u64 = field(&mut obj, "version", jp)?;
    if version != VERSION {
        return Err(Error::file(
            jp,
            format!("checkpoint format version {version}; this tool reads version {VERSION} (re-export it)"),
        ));
    }
    let name: String = field(&mut obj, "name", jp)?;
    let output_names: Vec<String> =
        if obj.contains_key("output_names") { field(&mut obj, "output_names", jp)? } else { Vec::new() };
    let nodes: Vec<serde_json::Value> = field(&mut obj, "nodes", jp)?;
    let weights: Vec<WeightEntry> = field(&mut obj, "weights", jp)?;
    let qweights: Vec<QWeightEntry> = field(&mut obj, "qweights", jp)?;
    if let Some(k) = obj.keys().next() {
        return Err(Error::file(jp, format!("unknown field '{k}'")));
    }

    let mut graph = MaseGraph::new(name);
    graph.output_names = output_names;
    let mut entries = Vec::with_capacity(nodes.len());
    for (i, v) in nodes.into_iter().enumerate() {
        let label = v.get("name").and_then(|n| n.as_str()).map(|n| format!(" ('{n}')")).unwrap_or_default();
        let e: NodeEntry =
            serde_json::from_value(v).map_err(|e| Error::file(jp, format!("node #{i}{label}: {e}")))?;
        entries.push(e);
    }
    let all_names: BTreeSet<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    for e in &entries {
        let mut inputs = Vec::with_capacity(e.inputs.len());
        for (k, inp) in e.inputs.iter().enumerate() {
            let id = graph.find(inp).ok_or_else(|| {
                let why = if all_names.contains(inp.as_str()) {
                    "which comes later in the node list (nodes must be in topological order)"
                } else {
                    "which is not a node of this checkpoint"
                };
                Error::file(jp, format!("node '{}': input {k} names '{inp}', {why}", e.name))
            })?;
            inputs.push(id);
        }
        let node = Node {
            name: e.name.clone(),
            kind: e.kind,
            op: e.op.clone(),
            inputs,
            meta: e.meta.clone(),
            origin: e.origin.clone(),
        };
        graph.push_node(node).map_err(|err| Error::file(jp, err.to_string()))?;
    }

    let st_bytes = std::fs::read(&st_path).map_err(|e| Error::io(&st_path, e))?;
    let sp = st_path.as_path();
    let st = SafeTensors::deserialize(&st_bytes)
        .map_err(|e| Error::file(sp, format!("not a valid safetensors file: {e}")))?;
    let mut listed = BTreeSet::new();
    for w in &weights {
        if !listed.insert(w.key.clone()) {
            return Err(Error::file(jp, format!("weight '{}' is listed twice", w.key)));
        }
        let t = match w.dtype {
            DType::F32 => tensor_bytes(&st, &w.key, Dtype::F32, &w.shape, sp)
                .map(|b| from_le(&w.shape, b, f32::from_le_bytes).map(Tensor::F32))?,
            DType::I64 => tensor_bytes(&st, &w.key, Dtype::I64, &w.shape, sp)
                .map(|b| from_le(&w.shape, b, i64::from_le_bytes).map(Tensor::I64))?,
            DType::I32 => tensor_bytes(&st, &w.key, Dtype::I32, &w.shape, sp)
                .map(|b| from_le(&w.shape, b, i32::from_le_bytes).map(Tensor::I32))?,
            DType::Bool => tensor_bytes(&st, &w.key, Dtype::BOOL, &w.shape, sp)
                .map(|b| from_le(&w.shape, b, |[x]: [u8; 1]| x != 0).map(Tensor::Bool))?,
        };
        let t =
            t.ok_or_else(|| Error::file(sp, format!("tensor '{}' has the wrong number of bytes", w.key)))?;
        graph.weights.insert(w.key.clone(), t);
    }
    let mut qlisted = BTreeSet::new();
    for q in &qweights {
        if !qlisted.insert(q.key.clone()) {
            return Err(Error::file(jp, format!("quantized weight '{}' is listed twice", q.key)));
        }
        if !(1..=64).contains(&q.format.width) {
            return Err(Error::file(
                jp,
                format!(
                    "quantized weight '{}' has width {}; widths 1..=64 are supported",
                    q.key, q.format.width
                ),
            ));
        }
        let key = format!("{QUANT_PREFIX}{}", q.key);
        if !listed.insert(key.clone()) {
            return Err(Error::file(
                jp,
                format!("tensor key '{key}' is used by a weight and by quantized codes"),
            ));
        }
        let codes = from_le(&q.shape, tensor_bytes(&st, &key, Dtype::I64, &q.shape, sp)?, i64::from_le_bytes)
            .ok_or_else(|| Error::file(sp, format!("tensor '{key}' has the wrong number of bytes")))?;
        if let Some(f) = &q.channel_frac {
            if q.shape.first() != Some(&f.len()) {
                return Err(Error::file(
                    jp,
                    format!(
                        "quantized weight '{}' has {} channel fractions for shape {:?}",
                        q.key,
                        f.len(),
                        q.shape
                    ),
                ));
            }
        }
        if let Some(a) = &q.affine {
            check_affine(a, &q.shape)
                .map_err(|m| Error::file(jp, format!("quantized weight '{}': {m}", q.key)))?;
        }
        graph.qweights.insert(
            q.key.clone(),
            QuantTensor {
                format: q.format,
                codes,
                channel_frac: q.channel_frac.clone(),
                affine: q.affine.clone(),
            },
        );
    }
    let mut names = st.names();
    names.sort();
    if let Some(extra) = names.into_iter().find(|n| !listed.contains(n.as_str())) {
        return Err(Error::file(
            sp,
            format!(
                "tensor '{extra}' is not listed in {} (the files do not belong together?)",
                json_path.display()
            ),
        ));
    }
    graph.validate().map_err(|e| Error::file(jp, format!("the restored graph is invalid: {e}")))?;
    Ok(graph)
}

impl MaseGraph {
    /// Writes this graph as the checkpoint `PREFIX.json` + `PREFIX.safetensors` (see
    /// [`crate::checkpoint`]).
    pub fn export(&self, prefix: impl AsRef<Path>) -> Result<()> {
        export(self, prefix.as_ref())
    }

    /// Loads the checkpoint `PREFIX.json` + `PREFIX.safetensors` (see [`crate::checkpoint`]).
    pub fn from_checkpoint(prefix: impl AsRef<Path>) -> Result<MaseGraph> {
        load(prefix.as_ref())
    }
}

/// An affine grid fits a tensor of `shape`: one scale or one per index of `axis`, as many zero
/// points, positive finite scales.
fn check_affine(a: &Affine, shape: &[usize]) -> std::result::Result<(), String> {
    let n = a.scale.len();
    if a.zero_point.len() != n {
        return Err(format!("{n} scales but {} zero points", a.zero_point.len()));
    }
    if n != 1 && shape.get(a.axis) != Some(&n) {
        return Err(format!("{n} scales along axis {} of shape {shape:?}", a.axis));
    }
    match a.scale.iter().find(|s| !(s.is_finite() && **s > 0.0)) {
        Some(s) => Err(format!("scale {s} is not a positive finite number")),
        None => Ok(()),
    }
}
