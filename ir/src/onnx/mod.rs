//! ONNX import, pure Rust: the protobuf messages are hand-written `prost` structs
//! ([`proto`]), so no `protoc` and no schema file are needed.
//!
//! What the importer does, in order:
//! 1. Decodes the model and checks the operator sets: the default domain (`""` / `ai.onnx`) at
//!    opsets 13–20; other domains are rejected by the node that uses them.
//! 2. Makes a placeholder per graph input that is not an initializer. Every dimension must be
//!    known: a dynamic one (`dim_param`) is fixed by [`ImportOptions::input_shapes`] (the CLI's
//!    `--input-shape NAME=1x8x128`); an unfixed one is an error that says so.
//! 3. Walks the nodes in order. A node whose inputs are all constants (initializers, `Constant`
//!    nodes, folded values) is evaluated at once with [`crate::interp::eval_op`] and becomes a
//!    constant itself; `Shape` of an activation folds too, because every activation shape is
//!    known. So PyTorch's shape sub-graphs (Shape → Gather → Unsqueeze → Concat → Reshape) fold
//!    away, and inputs that give shapes or axes (Reshape, Unsqueeze, Squeeze, Slice, ReduceMean)
//!    become typed attributes of the [`Op`]. Other nodes become graph nodes; their output shape
//!    comes from running `eval_op` on zero tensors of the input shapes (shape propagation by the
//!    float interpreter) and is recorded as `common.results["data_out_0"]`.
//! 4. Runs the raising passes (`raise_linear`, `raise_gelu`, `raise_layer_norm`,
//!    `raise_mul_scalar`, in that order) unless [`ImportOptions::raise`] is false, then compacts
//!    and validates the graph.
//!
//! ONNX ops without a MASE op of their own are expressed with MASE ops: `Gemm` becomes
//! (Transpose) → MatMul → Add with alpha and beta folded into the constants (or multiplied in),
//! which `raise_linear` turns into `linear`; `LayerNormalization` and `Gelu` map directly to
//! `layer_norm` and `gelu`.
//!
//! Errors name the file, the ONNX node (name and op type), the attribute or input, and what is
//! supported. Hostile sizes are refused before anything is allocated: tensor data must match
//! its dims exactly, and tensors are limited to [`MAX_TENSOR_ELEMENTS`] elements, activations
//! to [`MAX_ACTIVATION_ELEMENTS`].

pub mod proto;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::rc::Rc;

use prost::Message;

use crate::error::{Error, Result};
use crate::graph::{MaseGraph, NodeId};
use crate::metadata::TensorMeta;
use crate::op::{GeluApprox, Op};
use crate::tensor::{DType, Tensor};
use proto::{attr_type, data_type, AttributeProto, NodeProto, TensorProto, ValueInfoProto};

/// Lowest supported opset of the default domain.
pub const MIN_OPSET: i64 = 13;
/// Highest supported opset of the default domain.
pub const MAX_OPSET: i64 = 20;
/// Largest number of elements of a tensor stored in a model (2^28, 1 GiB of f32).
pub const MAX_TENSOR_ELEMENTS: usize = 1 << 28;
/// Largest number of elements of an activation (2^26): a larger input shape is refused, since
/// shape propagation allocates tensors of that size.
pub const MAX_ACTIVATION_ELEMENTS: usize = 1 << 26;

/// The raising passes run at import, in order.
pub const RAISE_PASSES: [&str; 4] = ["raise_linear", "raise_gelu", "raise_layer_norm", "raise_mul_scalar"];

/// The ONNX op types the importer supports.
pub const SUPPORTED_OPS: &[&str] = &[
    "Add",
    "Cast",
    "Concat",
    "Constant",
    "Div",
    "Dropout",
    "Erf",
    "Flatten",
    "Gather",
    "Gelu",
    "Gemm",
    "Identity",
    "LayerNormalization",
    "MatMul",
    "Mul",
    "Pow",
    "ReduceMean",
    "Relu",
    "Reshape",
    "Shape",
    "Slice",
    "Softmax",
    "Sqrt",
    "Squeeze",
    "Sub",
    "Tanh",
    "Transpose",
    "Unsqueeze",
];

/// Options of an import.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// Full shapes of graph inputs by name; needed for inputs with dynamic dimensions, and
    /// checked against the fixed dimensions of the others.
    pub input_shapes: BTreeMap<String, Vec<usize>>,
    /// Run the raising passes (see [`RAISE_PASSES`]) after import.
    pub raise: bool,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions { input_shapes: BTreeMap::new(), raise: true }
    }
}

/// Imports an ONNX file. Errors name the file.
pub fn import_file(path: &Path, opts: &ImportOptions) -> Result<MaseGraph> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    import_bytes(&bytes, &path.display().to_string(), opts)
}

/// Imports an ONNX model from its bytes; `source` names it in errors (usually the file path).
pub fn import_bytes(bytes: &[u8], source: &str, opts: &ImportOptions) -> Result<MaseGraph> {
    import_inner(bytes, opts).map_err(|e| match e {
        Error::File { .. } | Error::Io { .. } => e,
        other => Error::file(source, other.to_string()),
    })
}

fn import_inner(bytes: &[u8], opts: &ImportOptions) -> Result<MaseGraph> {
    let model = proto::ModelProto::decode(bytes).map_err(|e| {
        Error::Unsupported(format!(
            "not a valid ONNX model (protobuf decoding failed: {e}); is the file truncated?"
        ))
    })?;
    let graph = model
        .graph
        .as_ref()
        .ok_or_else(|| Error::Unsupported("the model has no graph (is this an ONNX model file?)".into()))?;
    let opset = default_opset(&model)?;
    let mut imp = Importer::new(if graph.name.is_empty() { "model" } else { &graph.name }, opset);
    imp.inputs(graph, opts)?;
    for (index, node) in graph.node.iter().enumerate() {
        imp.node(node, index)?;
    }
    imp.outputs(&graph.output)?;
    let mut g = imp.graph;
    g.compact()?;
    g.validate()?;
    if opts.raise {
        let (raised, _) = crate::pass::run_passes(g, &RAISE_PASSES, &toml::Table::new())?;
        g = raised;
    }
    Ok(g)
}

/// The opset of the default domain; errors on a missing or unsupported one.
fn default_opset(model: &proto::ModelProto) -> Result<i64> {
    let found = model.opset_import.iter().find(|o| o.domain.is_empty() || o.domain == "ai.onnx");
    let Some(o) = found else {
        return Err(Error::Unsupported(format!(
            "the model imports no opset of the default ONNX domain; supported opsets are {MIN_OPSET} to {MAX_OPSET}"
        )));
    };
    if !(MIN_OPSET..=MAX_OPSET).contains(&o.version) {
        return Err(Error::Unsupported(format!(
            "the model uses ONNX opset {}; supported opsets are {MIN_OPSET} to {MAX_OPSET} (re-export with opset_version in that range)",
            o.version
        )));
    }
    Ok(o.version)
}

/// A value during import: a graph node with a known shape, a constant, or an output that may
/// not be used.
#[derive(Clone)]
enum Val {
    /// Computed by a graph node.
    Node { id: NodeId, shape: Vec<usize>, dtype: DType },
    /// Known at import time; `name` is the ONNX value name (used to name its constant node),
    /// `key` identifies the value (its constant node is made once).
    Const { t: Rc<Tensor>, name: String, key: usize },
    /// An output the importer does not produce; using it is an error with this message.
    Unusable(String),
}

impl Val {
    fn shape(&self) -> &[usize] {
        match self {
            Val::Node { shape, .. } => shape,
            Val::Const { t, .. } => t.shape(),
            Val::Unusable(_) => &[],
        }
    }
    fn as_const(&self) -> Option<&Tensor> {
        match self {
            Val::Const { t, .. } => Some(t),
            _ => None,
        }
    }
}

/// Where the importer is: the ONNX node being imported, for errors.
struct Ctx<'a> {
    name: String,
    op_type: &'a str,
    origin: String,
}

impl Ctx<'_> {
    fn err(&self, msg: impl Into<String>) -> Error {
        Error::Node {
            node: self.name.clone(),
            op: self.op_type.to_string(),
            origin: Some(self.origin.clone()),
            msg: msg.into(),
        }
    }
}

struct Importer {
    graph: MaseGraph,
    opset: i64,
    values: HashMap<String, Val>,
    /// Constant nodes already made, by ONNX value name.
    const_nodes: HashMap<usize, NodeId>,
    /// Number of constant values made so far (their keys).
    consts: usize,
}

/// A name usable as an identifier: `[A-Za-z_][A-Za-z0-9_]*`, without leading underscores
/// unless it would otherwise start with a digit or be empty.
pub fn sanitize(name: &str) -> String {
    let mut s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let trimmed = s.trim_start_matches('_').to_string();
    if !trimmed.is_empty() {
        s = trimmed;
    }
    let s = s.trim_end_matches('_').to_string();
    match s.chars().next() {
        None => "v".to_string(),
        Some(c) if c.is_ascii_digit() => format!("v_{s}"),
        Some(_) => s,
    }
}

fn checked_elements(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

impl Importer {
    fn new(name: &str, opset: i64) -> Self {
        Importer {
            graph: MaseGraph::new(sanitize(name)),
            opset,
            values: HashMap::new(),
            const_nodes: HashMap::new(),
            consts: 0,
        }
    }

    /// Initializers become constants; the other inputs become placeholders.
    fn inputs(&mut self, g: &proto::GraphProto, opts: &ImportOptions) -> Result<()> {
        for t in &g.initializer {
            if t.name.is_empty() {
                return Err(Error::Unsupported("an initializer has no name".into()));
            }
            let tensor = tensor_from_proto(t)
                .map_err(|m| Error::Unsupported(format!("initializer '{}': {m}", t.name)))?;
            let v = self.constant(tensor, t.name.clone());
            self.values.insert(t.name.clone(), v);
        }
        let real: Vec<&ValueInfoProto> =
            g.input.iter().filter(|i| !self.values.contains_key(&i.name)).collect();
        for name in opts.input_shapes.keys() {
            if !real.iter().any(|i| &i.name == name) {
                let names: Vec<&str> = real.iter().map(|i| i.name.as_str()).collect();
                return Err(Error::Config(format!(
                    "--input-shape names '{name}', which is not an input of the model; its inputs are: {}",
                    names.join(", ")
                )));
            }
        }
        for vi in real {
            let shape = input_shape(vi, opts.input_shapes.get(&vi.name))?;
            if checked_elements(&shape).is_none_or(|n| n > MAX_ACTIVATION_ELEMENTS) {
                return Err(Error::Unsupported(format!(
                    "input '{}' has shape {shape:?}, more than {MAX_ACTIVATION_ELEMENTS} elements",
                    vi.name
                )));
            }
            let name = self.graph.fresh_name(&sanitize(&vi.name));
            let id = self.graph.add_node(name, Op::Placeholder, vec![])?;
            let node = self.graph.node_mut(id);
            node.meta.common.results.insert("data_out_0".into(), TensorMeta::unquantized(&shape, DType::F32));
            node.origin = Some(vi.name.clone());
            self.values.insert(vi.name.clone(), Val::Node { id, shape, dtype: DType::F32 });
        }
        Ok(())
    }

    /// The output node, with one input per graph output.
    fn outputs(&mut self, outs: &[ValueInfoProto]) -> Result<()> {
        if outs.is_empty() {
            return Err(Error::Unsupported("the graph has no outputs".into()));
        }
        let mut ids = Vec::new();
        for o in outs {
            let ctx = Ctx { name: sanitize(&o.name), op_type: "graph output", origin: o.name.clone() };
            let v = self.value(&ctx, &o.name)?;
            ids.push(self.materialize(&ctx, &v)?);
        }
        let name = self.graph.fresh_name("output");
        self.graph.add_node(name, Op::Output, ids)?;
        Ok(())
    }

    /// A new constant value, displayed as `name`.
    fn constant(&mut self, t: Tensor, name: String) -> Val {
        self.consts += 1;
        Val::Const { t: Rc::new(t), name, key: self.consts }
    }

    /// The value named `name`, or an error naming the node that wanted it.
    fn value(&self, ctx: &Ctx, name: &str) -> Result<Val> {
        match self.values.get(name) {
            Some(Val::Unusable(msg)) => Err(ctx.err(format!("uses '{name}': {msg}"))),
            Some(v) => Ok(v.clone()),
            None => Err(ctx.err(format!(
                "input '{name}' is not defined: it is neither a graph input, an initializer nor the output of an earlier node (missing initializer?)"
            ))),
        }
    }

    /// The graph node computing `v` (a constant gets a `Constant` node, made once per value).
    fn materialize(&mut self, ctx: &Ctx, v: &Val) -> Result<NodeId> {
        match v {
            Val::Node { id, .. } => Ok(*id),
            Val::Unusable(msg) => Err(ctx.err(msg.clone())),
            Val::Const { t, name, key } => {
                if let Some(id) = self.const_nodes.get(key) {
                    return Ok(*id);
                }
                let node_name = self.graph.fresh_name(&sanitize(name));
                self.graph.weights.insert(node_name.clone(), (**t).clone());
                let id =
                    self.graph.add_node(node_name.clone(), Op::Constant { tensor: node_name }, vec![])?;
                let node = self.graph.node_mut(id);
                node.meta
                    .common
                    .results
                    .insert("data_out_0".into(), TensorMeta::unquantized(t.shape(), t.dtype()));
                node.origin = Some(ctx.origin.clone());
                self.const_nodes.insert(*key, id);
                Ok(id)
            }
        }
    }

    /// Applies `op` to `inputs`: folds it when every input is constant, otherwise adds a node
    /// named from `base` whose shape comes from evaluating the op on zero tensors.
    fn emit(&mut self, ctx: &Ctx, base: &str, op: Op, inputs: &[Val]) -> Result<Val> {
        if inputs.iter().all(|v| v.as_const().is_some()) {
            let refs: Vec<&Tensor> = inputs.iter().filter_map(|v| v.as_const()).collect();
            let t = crate::interp::eval_op(&op, &refs, &self.graph.weights).map_err(|m| ctx.err(m))?;
            if t.len() > MAX_TENSOR_ELEMENTS {
                return Err(ctx.err(format!("folds to a constant of shape {:?}, too large", t.shape())));
            }
            return Ok(self.constant(t, base.to_string()));
        }
        let probes: Vec<Tensor> = inputs
            .iter()
            .map(|v| match v {
                Val::Node { shape, dtype: DType::F32, .. } => Tensor::zeros_f32(shape),
                Val::Node { shape, dtype: DType::I64, .. } => {
                    Tensor::I64(ndarray::ArrayD::zeros(ndarray::IxDyn(shape)))
                }
                Val::Const { t, .. } => (**t).clone(),
                Val::Unusable(_) => Tensor::zeros_f32(&[]),
            })
            .collect();
        let refs: Vec<&Tensor> = probes.iter().collect();
        let out = crate::interp::eval_op(&op, &refs, &self.graph.weights).map_err(|m| ctx.err(m))?;
        if out.len() > MAX_ACTIVATION_ELEMENTS {
            return Err(ctx.err(format!(
                "its output shape {:?} has more than {MAX_ACTIVATION_ELEMENTS} elements",
                out.shape()
            )));
        }
        let mut ids = Vec::with_capacity(inputs.len());
        for v in inputs {
            ids.push(self.materialize(ctx, v)?);
        }
        let name = self.graph.fresh_name(base);
        let id = self.graph.add_node(name, op, ids)?;
        let node = self.graph.node_mut(id);
        node.meta
            .common
            .results
            .insert("data_out_0".into(), TensorMeta::unquantized(out.shape(), out.dtype()));
        node.origin = Some(ctx.origin.clone());
        Ok(Val::Node { id, shape: out.shape().to_vec(), dtype: out.dtype() })
    }

    /// Imports one ONNX node.
    fn node(&mut self, n: &NodeProto, index: usize) -> Result<()> {
        let origin = if n.name.is_empty() { format!("{}#{index}", n.op_type) } else { n.name.clone() };
        let base = if !n.name.is_empty() {
            sanitize(&n.name)
        } else if let Some(o) = n.output.first().filter(|o| !o.is_empty()) {
            sanitize(o)
        } else {
            sanitize(&n.op_type.to_lowercase())
        };
        let ctx = Ctx { name: base.clone(), op_type: &n.op_type, origin };
        if !(n.domain.is_empty() || n.domain == "ai.onnx") {
            return Err(ctx.err(format!(
                "domain '{}' is not supported; only the default ONNX domain (ai.onnx) is",
                n.domain
            )));
        }
        if n.output.is_empty() {
            return Err(ctx.err("the node has no outputs"));
        }
        let attrs = Attrs { a: &n.attribute, ctx: &ctx };
        let mut ins: Vec<Option<Val>> = Vec::with_capacity(n.input.len());
        for name in &n.input {
            ins.push(if name.is_empty() { None } else { Some(self.value(&ctx, name)?) });
        }
        let outs = self.convert(&ctx, &base, &attrs, &ins)?;
        for (k, name) in n.output.iter().enumerate() {
            if name.is_empty() {
                continue;
            }
            let v = match outs.get(k) {
                // A constant output is named after its ONNX value.
                Some(Val::Const { t, key, .. }) => Val::Const { t: t.clone(), name: name.clone(), key: *key },
                Some(v) => v.clone(),
                None => Val::Unusable(format!(
                    "output {k} of {} node '{}' is not supported (only its first {} output(s) are)",
                    n.op_type,
                    ctx.origin,
                    outs.len()
                )),
            };
            self.values.insert(name.clone(), v);
        }
        Ok(())
    }

    /// The op-specific part of a node: returns its outputs.
    fn convert(&mut self, ctx: &Ctx, base: &str, at: &Attrs, ins: &[Option<Val>]) -> Result<Vec<Val>> {
        let op_type = ctx.op_type;
        let max_inputs = match op_type {
            "Gemm" | "LayerNormalization" | "Dropout" => 3,
            "Slice" => 5,
            "ReduceMean" | "Squeeze" | "Unsqueeze" => 2,
            _ => usize::MAX,
        };
        if ins.len() > max_inputs {
            return Err(ctx.err(format!("expects at most {max_inputs} inputs, got {}", ins.len())));
        }
        let unary = |op: Op| (op, 1usize);
        let simple = match op_type {
            "Relu" => Some(unary(Op::Relu)),
            "Erf" => Some(unary(Op::Erf)),
            "Tanh" => Some(unary(Op::Tanh)),
            "Sqrt" => Some(unary(Op::Sqrt)),
            "Identity" => Some(unary(Op::Identity)),
            "Add" => Some((Op::Add, 2)),
            "Sub" => Some((Op::Sub, 2)),
            "Mul" => Some((Op::Mul, 2)),
            "Div" => Some((Op::Div, 2)),
            "Pow" => Some((Op::Pow, 2)),
            "MatMul" => Some((Op::Matmul, 2)),
            _ => None,
        };
        if let Some((op, n)) = simple {
            at.check(&[])?;
            let v = req_inputs(ctx, ins, n)?;
            return Ok(vec![self.emit(ctx, base, op, &v)?]);
        }
        match op_type {
            "Gemm" => self.gemm(ctx, base, at, ins),
            "Gelu" => {
                if self.opset < 20 {
                    return Err(
                        ctx.err(format!("Gelu is an opset 20 op; this model uses opset {}", self.opset))
                    );
                }
                at.check(&["approximate"])?;
                let approximate = match at.string("approximate")?.as_deref() {
                    None | Some("none") => GeluApprox::None,
                    Some("tanh") => GeluApprox::Tanh,
                    Some(other) => {
                        return Err(ctx
                            .err(format!("attribute 'approximate' is '{other}'; supported: 'none', 'tanh'")))
                    }
                };
                let v = req_inputs(ctx, ins, 1)?;
                Ok(vec![self.emit(ctx, base, Op::Gelu { approximate }, &v)?])
            }
            "Softmax" => {
                at.check(&["axis"])?;
                let v = req_inputs(ctx, ins, 1)?;
                Ok(vec![self.emit(ctx, base, Op::Softmax { axis: at.int("axis")?.unwrap_or(-1) }, &v)?])
            }
            "LayerNormalization" => self.layer_norm(ctx, base, at, ins),
            "ReduceMean" => {
                let keepdims = at.int("keepdims")?.unwrap_or(1) != 0;
                let (axes, noop) = if self.opset < 18 {
                    at.check(&["axes", "keepdims"])?;
                    (at.ints("axes")?.unwrap_or_default(), false)
                } else {
                    at.check(&["keepdims", "noop_with_empty_axes"])?;
                    let axes = match ins.get(1).cloned().flatten() {
                        Some(v) => const_ints(ctx, &v, "axes")?,
                        None => vec![],
                    };
                    (axes, at.int("noop_with_empty_axes")?.unwrap_or(0) != 0)
                };
                let x = req_first(ctx, ins)?;
                if noop && axes.is_empty() {
                    return Ok(vec![self.emit(ctx, base, Op::Identity, &[x])?]);
                }
                Ok(vec![self.emit(ctx, base, Op::ReduceMean { axes, keepdims }, &[x])?])
            }
            "Reshape" => {
                at.check(&["allowzero"])?;
                let v = req_inputs(ctx, ins, 2)?;
                let shape = const_ints(ctx, &v[1], "shape")?;
                if at.int("allowzero")?.unwrap_or(0) != 0 && shape.contains(&0) {
                    return Err(ctx.err(
                        "allowzero = 1 with a 0 in the target shape makes an empty tensor; empty tensors are not supported",
                    ));
                }
                Ok(vec![self.emit(ctx, base, Op::Reshape { shape }, &v[..1])?])
            }
            "Transpose" => {
                at.check(&["perm"])?;
                let x = req_first(ctx, ins)?;
                let rank = x.shape().len();
                let perm = match at.ints("perm")? {
                    Some(p) => p
                        .iter()
                        .map(|&a| {
                            usize::try_from(a)
                                .map_err(|_| ctx.err(format!("attribute 'perm' has a negative entry {a}")))
                        })
                        .collect::<Result<Vec<_>>>()?,
                    None => (0..rank).rev().collect(),
                };
                Ok(vec![self.emit(ctx, base, Op::Transpose { perm }, &[x])?])
            }
            "Flatten" => {
                at.check(&["axis"])?;
                let x = req_first(ctx, ins)?;
                Ok(vec![self.emit(ctx, base, Op::Flatten { axis: at.int("axis")?.unwrap_or(1) }, &[x])?])
            }
            "Dropout" => {
                at.check(&["seed"])?;
                let x = req_first(ctx, ins)?;
                let ratio = match ins.get(1).cloned().flatten() {
                    Some(v) => const_scalar(ctx, &v, "ratio")? as f32,
                    None => 0.5,
                };
                if let Some(t) = ins.get(2).cloned().flatten() {
                    if const_scalar(ctx, &t, "training_mode")? != 0.0 {
                        return Err(ctx.err(
                            "training_mode is true; only inference (training_mode = false) is supported",
                        ));
                    }
                }
                let y = self.emit(ctx, base, Op::Dropout { ratio }, &[x])?;
                Ok(vec![y, Val::Unusable("the Dropout mask output is not supported".into())])
            }
            "Constant" => {
                at.check(&["value", "value_float", "value_floats", "value_int", "value_ints"])?;
                if !ins.is_empty() {
                    return Err(ctx.err("Constant takes no inputs"));
                }
                Ok(vec![self.constant(at.constant_value()?, base.to_string())])
            }
            "Shape" => {
                at.check(&["start", "end"])?;
                let x = req_first(ctx, ins)?;
                let dims = x.shape();
                let rank = dims.len() as i64;
                let clamp = |v: i64| if v < 0 { (v + rank).max(0) } else { v.min(rank) };
                let start = clamp(at.int("start")?.unwrap_or(0));
                let end = clamp(at.int("end")?.unwrap_or(rank));
                let sel: Vec<i64> = if start < end {
                    dims[start as usize..end as usize].iter().map(|&d| d as i64).collect()
                } else {
                    vec![]
                };
                let n = sel.len();
                let t = Tensor::from_i64(&[n], sel).ok_or_else(|| ctx.err("internal: shape tensor"))?;
                Ok(vec![self.constant(t, base.to_string())])
            }
            "Gather" => {
                at.check(&["axis"])?;
                let v = req_inputs(ctx, ins, 2)?;
                let idx = v[1]
                    .as_const()
                    .ok_or_else(|| ctx.err("the indices (input 1) must be constant; gathering at computed indices is not supported"))?;
                if idx.dtype() != DType::I64 {
                    return Err(ctx.err("the indices (input 1) must be integers"));
                }
                let key = format!("{}.indices", self.graph.fresh_name(base));
                let key = (0..)
                    .map(|i| if i == 0 { key.clone() } else { format!("{key}{i}") })
                    .find(|k| !self.graph.weights.contains_key(k))
                    .unwrap_or(key);
                self.graph.weights.insert(key.clone(), idx.clone());
                let op = Op::Gather { axis: at.int("axis")?.unwrap_or(0), indices: key };
                Ok(vec![self.emit(ctx, base, op, &v[..1])?])
            }
            "Unsqueeze" | "Squeeze" => {
                at.check(&[])?;
                let x = req_first(ctx, ins)?;
                let axes = match ins.get(1).cloned().flatten() {
                    Some(v) => const_ints(ctx, &v, "axes")?,
                    None if op_type == "Unsqueeze" => {
                        return Err(ctx.err("the axes input (input 1) is required"))
                    }
                    None => vec![],
                };
                let op = if op_type == "Unsqueeze" { Op::Unsqueeze { axes } } else { Op::Squeeze { axes } };
                Ok(vec![self.emit(ctx, base, op, &[x])?])
            }
            "Concat" => {
                at.check(&["axis"])?;
                let axis = at.int("axis")?.ok_or_else(|| ctx.err("attribute 'axis' is required"))?;
                if ins.is_empty() || ins.iter().any(|i| i.is_none()) {
                    return Err(ctx.err("Concat needs at least one input and no empty input names"));
                }
                let v: Vec<Val> = ins.iter().flatten().cloned().collect();
                Ok(vec![self.emit(ctx, base, Op::Concat { axis }, &v)?])
            }
            "Slice" => {
                at.check(&[])?;
                let x = req_first(ctx, ins)?;
                let get = |i: usize, what: &str| -> Result<Option<Vec<i64>>> {
                    ins.get(i).cloned().flatten().map(|v| const_ints(ctx, &v, what)).transpose()
                };
                let starts =
                    get(1, "starts")?.ok_or_else(|| ctx.err("the starts input (input 1) is required"))?;
                let ends = get(2, "ends")?.ok_or_else(|| ctx.err("the ends input (input 2) is required"))?;
                let axes = get(3, "axes")?.unwrap_or_else(|| (0..starts.len() as i64).collect());
                let steps = get(4, "steps")?.unwrap_or_else(|| vec![1; starts.len()]);
                if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
                    return Err(ctx.err(format!(
                        "starts, ends, axes and steps must have the same length, got {}, {}, {}, {}",
                        starts.len(),
                        ends.len(),
                        axes.len(),
                        steps.len()
                    )));
                }
                if steps.contains(&0) {
                    return Err(ctx.err("a step of 0 is not allowed"));
                }
                Ok(vec![self.emit(ctx, base, Op::Slice { starts, ends, axes, steps }, &[x])?])
            }
            "Cast" => {
                at.check(&["to", "saturate"])?;
                let to = at.int("to")?.ok_or_else(|| ctx.err("attribute 'to' is required"))?;
                let to = match i32::try_from(to).unwrap_or(-1) {
                    data_type::FLOAT | data_type::DOUBLE | data_type::FLOAT16 => DType::F32,
                    data_type::INT64 | data_type::INT32 | data_type::INT16 | data_type::INT8 | data_type::UINT8 => DType::I64,
                    other => {
                        return Err(ctx.err(format!(
                            "attribute 'to' is {} ({to}); supported: FLOAT, DOUBLE, FLOAT16 (as f32) and INT8..INT64, UINT8 (as i64)",
                            data_type::name(other)
                        )))
                    }
                };
                let x = req_first(ctx, ins)?;
                Ok(vec![self.emit(ctx, base, Op::Cast { to }, &[x])?])
            }
            other => Err(ctx.err(format!(
                "op type '{other}' is not supported; supported ops: {}",
                SUPPORTED_OPS.join(", ")
            ))),
        }
    }

    /// Gemm: Y = alpha · A' · B' + beta · C, as Transpose / MatMul / Add with alpha and beta
    /// multiplied into B and C (folded when they are constants).
    fn gemm(&mut self, ctx: &Ctx, base: &str, at: &Attrs, ins: &[Option<Val>]) -> Result<Vec<Val>> {
        at.check(&["alpha", "beta", "transA", "transB"])?;
        let v = req_inputs(ctx, &ins[..ins.len().min(2)], 2)?;
        let (mut a, mut b) = (v[0].clone(), v[1].clone());
        for (what, x) in [("A", &a), ("B", &b)] {
            if x.shape().len() != 2 {
                return Err(ctx.err(format!("input {what} must be 2-D, it has shape {:?}", x.shape())));
            }
        }
        let alpha = at.float("alpha")?.unwrap_or(1.0);
        let beta = at.float("beta")?.unwrap_or(1.0);
        if at.int("transA")?.unwrap_or(0) != 0 {
            a = self.emit(ctx, &format!("{base}_transpose_a"), Op::Transpose { perm: vec![1, 0] }, &[a])?;
        }
        if at.int("transB")?.unwrap_or(0) != 0 {
            b = self.emit(ctx, &format!("{base}_transpose_b"), Op::Transpose { perm: vec![1, 0] }, &[b])?;
        }
        if alpha != 1.0 {
            let s = self.constant(Tensor::F32(ndarray::arr0(alpha).into_dyn()), format!("{base}_alpha"));
            b = self.emit(ctx, &format!("{base}_alpha"), Op::Mul, &[b, s])?;
        }
        let mut y = self.emit(ctx, &format!("{base}_matmul"), Op::Matmul, &[a, b])?;
        if let Some(mut c) = ins.get(2).cloned().flatten() {
            if beta != 1.0 {
                let s = self.constant(Tensor::F32(ndarray::arr0(beta).into_dyn()), format!("{base}_beta"));
                c = self.emit(ctx, &format!("{base}_beta"), Op::Mul, &[c, s])?;
            }
            y = self.emit(ctx, &format!("{base}_add"), Op::Add, &[y, c])?;
        }
        Ok(vec![y])
    }

    /// LayerNormalization (opset 17+): scale and bias must be constants.
    fn layer_norm(&mut self, ctx: &Ctx, base: &str, at: &Attrs, ins: &[Option<Val>]) -> Result<Vec<Val>> {
        if self.opset < 17 {
            return Err(ctx
                .err(format!("LayerNormalization is an opset 17 op; this model uses opset {}", self.opset)));
        }
        at.check(&["axis", "epsilon", "stash_type"])?;
        if at.int("stash_type")?.unwrap_or(1) != 1 {
            return Err(ctx.err("attribute 'stash_type' must be 1 (FLOAT)"));
        }
        let v = req_inputs(ctx, &ins[..ins.len().min(2)], 2)?;
        let name = self.graph.fresh_name(base);
        let key_of = |imp: &mut Importer, v: &Val, role: &str| -> Result<String> {
            let t = v.as_const().ok_or_else(|| {
                ctx.err(format!("the {role} input must be a constant (an initializer); a computed {role} is not supported"))
            })?;
            if t.dtype() != DType::F32 {
                return Err(ctx.err(format!("the {role} input must be float")));
            }
            let key = format!("{name}.{role}");
            imp.graph.weights.insert(key.clone(), t.clone());
            Ok(key)
        };
        let weight = Some(key_of(self, &v[1], "weight")?);
        let bias = match ins.get(2).cloned().flatten() {
            Some(b) => Some(key_of(self, &b, "bias")?),
            None => None,
        };
        let op = Op::LayerNorm {
            axis: at.int("axis")?.unwrap_or(-1),
            epsilon: at.float("epsilon")?.unwrap_or(1e-5),
            weight,
            bias,
        };
        let y = self.emit(ctx, &name, op, &v[..1])?;
        let extra = "the Mean and InvStdDev outputs of LayerNormalization are not supported";
        Ok(vec![y, Val::Unusable(extra.into()), Val::Unusable(extra.into())])
    }
}

/// The first `n` inputs, all required.
fn req_inputs(ctx: &Ctx, ins: &[Option<Val>], n: usize) -> Result<Vec<Val>> {
    if ins.len() < n || ins.len() > n {
        return Err(ctx.err(format!("expects {n} input(s), got {}", ins.len())));
    }
    ins.iter()
        .enumerate()
        .map(|(i, v)| v.clone().ok_or_else(|| ctx.err(format!("input {i} is required but empty"))))
        .collect()
}

/// The first input, required (further optional inputs are read by the caller).
fn req_first(ctx: &Ctx, ins: &[Option<Val>]) -> Result<Val> {
    ins.first().cloned().flatten().ok_or_else(|| ctx.err("input 0 is required"))
}

/// A constant integer list (shape, axes, starts…).
fn const_ints(ctx: &Ctx, v: &Val, what: &str) -> Result<Vec<i64>> {
    let t = v.as_const().ok_or_else(|| {
        ctx.err(format!(
            "the '{what}' input must be a constant or fold to one; it is computed from activations at run time, which is not supported"
        ))
    })?;
    match t {
        Tensor::I64(a) if a.ndim() <= 1 => Ok(a.iter().copied().collect()),
        _ => Err(ctx.err(format!(
            "the '{what}' input must be a 1-D integer tensor, got {:?} {:?}",
            t.dtype(),
            t.shape()
        ))),
    }
}

/// A constant single-element value.
fn const_scalar(ctx: &Ctx, v: &Val, what: &str) -> Result<f64> {
    let t = v.as_const().ok_or_else(|| ctx.err(format!("the '{what}' input must be a constant")))?;
    if t.len() != 1 {
        return Err(
            ctx.err(format!("the '{what}' input must have one element, it has shape {:?}", t.shape()))
        );
    }
    Ok(match t {
        Tensor::F32(a) => a.iter().next().copied().unwrap_or(0.0) as f64,
        Tensor::I64(a) => a.iter().next().copied().unwrap_or(0) as f64,
    })
}

/// The shape of a graph input, with dynamic dimensions fixed by the user.
fn input_shape(vi: &ValueInfoProto, given: Option<&Vec<usize>>) -> Result<Vec<usize>> {
    let tt = vi.r#type.as_ref().and_then(|t| t.tensor_type.as_ref()).ok_or_else(|| {
        Error::Unsupported(format!("input '{}' is not a tensor; only tensor inputs are supported", vi.name))
    })?;
    if tt.elem_type != data_type::FLOAT {
        return Err(Error::Unsupported(format!(
            "input '{}' has element type {}; only FLOAT inputs are supported",
            vi.name,
            data_type::name(tt.elem_type)
        )));
    }
    let Some(shape) = tt.shape.as_ref() else {
        return given.cloned().ok_or_else(|| {
            Error::Unsupported(format!(
                "input '{}' has no shape in the model; give it with --input-shape {}=1x8x128 (your dimensions)",
                vi.name, vi.name
            ))
        });
    };
    let dims: Vec<Option<i64>> = shape
        .dim
        .iter()
        .map(|d| match &d.value {
            Some(proto::DimValue::DimValue(v)) if *v >= 0 => Some(*v),
            _ => None,
        })
        .collect();
    let hint = || {
        dims.iter()
            .zip(&shape.dim)
            .map(|(v, d)| match (v, &d.value) {
                (Some(v), _) => v.to_string(),
                (None, Some(proto::DimValue::DimParam(p))) if !p.is_empty() => format!("<{p}>"),
                _ => "<N>".to_string(),
            })
            .collect::<Vec<_>>()
            .join("x")
    };
    if let Some(g) = given {
        if g.len() != dims.len() {
            return Err(Error::Config(format!(
                "--input-shape for '{}' has {} dimensions but the model's input has {} ({})",
                vi.name,
                g.len(),
                dims.len(),
                hint()
            )));
        }
        for (k, (want, got)) in dims.iter().zip(g).enumerate() {
            if let Some(w) = want {
                if *w as u64 != *got as u64 {
                    return Err(Error::Config(format!(
                        "--input-shape for '{}' gives dimension {k} = {got} but the model fixes it to {w} ({})",
                        vi.name,
                        hint()
                    )));
                }
            }
        }
        return Ok(g.clone());
    }
    let mut out = Vec::with_capacity(dims.len());
    for (k, (d, pd)) in dims.iter().zip(&shape.dim).enumerate() {
        match d {
            Some(v) => out.push(usize::try_from(*v).map_err(|_| {
                Error::Unsupported(format!("input '{}' dimension {k} = {v} is too large", vi.name))
            })?),
            None => {
                let what = match &pd.value {
                    Some(proto::DimValue::DimParam(p)) if !p.is_empty() => format!(" ('{p}')"),
                    _ => String::new(),
                };
                return Err(Error::Unsupported(format!(
                    "input '{}' dimension {k}{what} is dynamic; fix it with --input-shape {}={} (your sizes in place of <…>, e.g. 1x8x128)",
                    vi.name,
                    vi.name,
                    hint()
                )));
            }
        }
    }
    Ok(out)
}

/// Attribute access for one node, with type checks and error messages naming the attribute.
struct Attrs<'a> {
    a: &'a [AttributeProto],
    ctx: &'a Ctx<'a>,
}

impl Attrs<'_> {
    /// Errors on an attribute not in `known`.
    fn check(&self, known: &[&str]) -> Result<()> {
        for a in self.a {
            if !a.ref_attr_name.is_empty() {
                return Err(self
                    .ctx
                    .err(format!("attribute '{}' refers to a function attribute; not supported", a.name)));
            }
            if !known.contains(&a.name.as_str()) {
                let sup = if known.is_empty() { "none".to_string() } else { known.join(", ") };
                return Err(self.ctx.err(format!(
                    "attribute '{}' is not supported for {}; supported attributes: {sup}",
                    a.name, self.ctx.op_type
                )));
            }
        }
        Ok(())
    }

    fn get(&self, name: &str, ty: i32, ty_name: &str) -> Result<Option<&AttributeProto>> {
        match self.a.iter().find(|a| a.name == name) {
            None => Ok(None),
            Some(a) if a.r#type == ty => Ok(Some(a)),
            Some(a) => Err(self.ctx.err(format!(
                "attribute '{name}' must be of type {ty_name}, it has type number {}",
                a.r#type
            ))),
        }
    }

    fn int(&self, name: &str) -> Result<Option<i64>> {
        Ok(self.get(name, attr_type::INT, "INT")?.map(|a| a.i))
    }
    fn float(&self, name: &str) -> Result<Option<f32>> {
        Ok(self.get(name, attr_type::FLOAT, "FLOAT")?.map(|a| a.f))
    }
    fn ints(&self, name: &str) -> Result<Option<Vec<i64>>> {
        Ok(self.get(name, attr_type::INTS, "INTS")?.map(|a| a.ints.clone()))
    }
    fn string(&self, name: &str) -> Result<Option<String>> {
        match self.get(name, attr_type::STRING, "STRING")? {
            None => Ok(None),
            Some(a) => String::from_utf8(a.s.clone())
                .map(Some)
                .map_err(|_| self.ctx.err(format!("attribute '{name}' is not valid UTF-8"))),
        }
    }

    /// The value of a Constant node.
    fn constant_value(&self) -> Result<Tensor> {
        if self.a.len() != 1 {
            return Err(self
                .ctx
                .err(format!("Constant needs exactly one value attribute, it has {}", self.a.len())));
        }
        let a = &self.a[0];
        let bad = |m: String| self.ctx.err(m);
        match (a.name.as_str(), a.r#type) {
            ("value", attr_type::TENSOR) => {
                let t = a.t.as_ref().ok_or_else(|| bad("attribute 'value' has no tensor".into()))?;
                tensor_from_proto(t).map_err(|m| bad(format!("attribute 'value': {m}")))
            }
            ("value_float", attr_type::FLOAT) => Ok(Tensor::F32(ndarray::arr0(a.f).into_dyn())),
            ("value_int", attr_type::INT) => Ok(Tensor::I64(ndarray::arr0(a.i).into_dyn())),
            ("value_floats", attr_type::FLOATS) => {
                Tensor::from_f32(&[a.floats.len()], a.floats.clone()).ok_or_else(|| bad("bad value_floats".into()))
            }
            ("value_ints", attr_type::INTS) => {
                Tensor::from_i64(&[a.ints.len()], a.ints.clone()).ok_or_else(|| bad("bad value_ints".into()))
            }
            (name, ty) => Err(bad(format!(
                "attribute '{name}' of type number {ty} is not supported; supported: value (TENSOR), value_float(s), value_int(s)"
            ))),
        }
    }
}

/// Converts a TensorProto to a [`Tensor`]: float types become f32, integer and bool types i64.
/// Checks the element count against the data before allocating.
pub fn tensor_from_proto(t: &TensorProto) -> std::result::Result<Tensor, String> {
    if t.data_location == 1 || !t.external_data.is_empty() {
        return Err("its data is stored in an external file, which is not supported; save the model with the tensors inside (onnx.save(model, path, save_as_external_data=False))".into());
    }
    let mut shape = Vec::with_capacity(t.dims.len());
    for &d in &t.dims {
        shape.push(usize::try_from(d).map_err(|_| format!("dimension {d} is negative"))?);
    }
    let n = checked_elements(&shape)
        .filter(|&n| n <= MAX_TENSOR_ELEMENTS)
        .ok_or_else(|| format!("shape {shape:?} has more than {MAX_TENSOR_ELEMENTS} elements"))?;
    let raw = &t.raw_data;
    let check_len = |have: usize, what: &str| {
        if have == n {
            Ok(())
        } else {
            Err(format!("shape {shape:?} needs {n} elements but {what} holds {have}"))
        }
    };
    let from_raw = |size: usize| -> std::result::Result<std::slice::ChunksExact<'_, u8>, String> {
        if raw.len() != n.saturating_mul(size) {
            return Err(format!(
                "shape {shape:?} needs {} bytes of raw_data, it has {}",
                n * size,
                raw.len()
            ));
        }
        Ok(raw.chunks_exact(size))
    };
    let f32s = |v: Vec<f32>| Tensor::from_f32(&shape, v).ok_or_else(|| "internal: size".to_string());
    let i64s = |v: Vec<i64>| Tensor::from_i64(&shape, v).ok_or_else(|| "internal: size".to_string());
    match t.data_type {
        data_type::FLOAT => {
            if !raw.is_empty() || t.float_data.is_empty() {
                f32s(from_raw(4)?.map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
            } else {
                check_len(t.float_data.len(), "float_data")?;
                f32s(t.float_data.clone())
            }
        }
        data_type::DOUBLE => {
            if !raw.is_empty() || t.double_data.is_empty() {
                f32s(from_raw(8)?.map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f32).collect())
            } else {
                check_len(t.double_data.len(), "double_data")?;
                f32s(t.double_data.iter().map(|&v| v as f32).collect())
            }
        }
        data_type::FLOAT16 => {
            if !raw.is_empty() || t.int32_data.is_empty() {
                f32s(from_raw(2)?.map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]]))).collect())
            } else {
                check_len(t.int32_data.len(), "int32_data")?;
                f32s(t.int32_data.iter().map(|&v| f16_to_f32(v as u16)).collect())
            }
        }
        data_type::INT64 => {
            if !raw.is_empty() || t.int64_data.is_empty() {
                i64s(from_raw(8)?.map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect())
            } else {
                check_len(t.int64_data.len(), "int64_data")?;
                i64s(t.int64_data.clone())
            }
        }
        ty @ (data_type::INT32 | data_type::INT16 | data_type::INT8 | data_type::UINT8 | data_type::BOOL) => {
            if !raw.is_empty() || t.int32_data.is_empty() {
                let v: Vec<i64> = match ty {
                    data_type::INT32 => from_raw(4)?.map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64).collect(),
                    data_type::INT16 => from_raw(2)?.map(|c| i16::from_le_bytes([c[0], c[1]]) as i64).collect(),
                    data_type::INT8 => from_raw(1)?.map(|c| c[0] as i8 as i64).collect(),
                    _ => from_raw(1)?.map(|c| c[0] as i64).collect(),
                };
                i64s(v)
            } else {
                check_len(t.int32_data.len(), "int32_data")?;
                i64s(t.int32_data.iter().map(|&v| v as i64).collect())
            }
        }
        other => Err(format!(
            "element type {} ({other}) is not supported; supported: FLOAT, DOUBLE, FLOAT16, INT64, INT32, INT16, INT8, UINT8, BOOL",
            data_type::name(other)
        )),
    }
}

/// IEEE half to single precision.
fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = match exp {
        0 if man == 0 => sign,
        0 => {
            // Subnormal: value = man · 2^-24.
            let v = man as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -v } else { v };
        }
        0x1f => sign | 0x7f80_0000 | (man << 13),
        e => sign | ((e + 112) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}
