//! ONNX import and export, pure Rust: the protobuf messages are hand-written `prost` structs
//! ([`proto`]), so no `protoc` and no schema file are needed. Export ([`to_onnx`]) writes a
//! float MaseGraph back as ONNX; its module documentation says what it writes.
//!
//! What the importer does, in order:
//! 1. Decodes the model and checks the operator sets: the default domain (`""` / `ai.onnx`) at
//!    opsets 13–20; the QONNX domain ([`QONNX_DOMAINS`]) for its quantizers `Quant`,
//!    `BipolarQuant` and `Trunc` (v2, the domain at opset ≥ 2); other domains are rejected by
//!    the node that uses them.
//! 2. Makes a placeholder per graph input that is not an initializer. Every dimension must be
//!    known: a dynamic one (`dim_param`) is fixed by [`ImportOptions::input_shapes`] (the CLI's
//!    `--input-shape NAME=1x8x128`); an unfixed one is an error that says so.
//! 3. Walks the nodes in order, converting each with its entry in the op registry ([`ops`]: one
//!    file per op family). A node whose inputs are all constants (initializers, `Constant`
//!    nodes, folded values) is evaluated at once with [`crate::interp::eval_op`] and becomes a
//!    constant itself; `Shape` of an activation folds too, because every activation shape is
//!    known. So exporters' shape sub-graphs (Shape → Gather → Unsqueeze → Concat → Reshape,
//!    Range, ConstantOfShape, Expand and mask arithmetic on constants) fold away, and inputs that
//!    give shapes or axes (Reshape, Expand, Unsqueeze, Squeeze, Slice, reductions) become typed
//!    attributes of the [`Op`]. Other nodes become graph nodes; their output shape and element
//!    type come from running `eval_op` on zero tensors of the input shapes (shape inference by
//!    the float interpreter, the same code that runs the graph) and are recorded as
//!    `common.results["data_out_0"]`. With [`ImportOptions::fold`] off, nodes on constants stay
//!    graph nodes (their values are still known, so shape and axes operands still become
//!    attributes; sub-graphs that only computed such operands are then unused and dropped).
//! 4. Runs the raising passes ([`RAISE_PASSES`], in that order) unless [`ImportOptions::raise`]
//!    is false, then compacts and validates the graph.
//!
//! ONNX ops without a MASE op of their own are expressed with MASE ops: `Gemm` becomes
//! (Transpose) → MatMul → Add with alpha and beta folded into the constants (or multiplied in),
//! which `raise_linear` turns into `linear`; `LayerNormalization` and `Gelu` map directly to
//! `layer_norm` and `gelu`.
//!
//! Graph inputs may be float (FLOAT; DOUBLE and FLOAT16 inputs are computed as float32), int64,
//! int32 or bool (token ids, attention masks).
//!
//! Errors name the file, the ONNX node (name and op type), the attribute or input, and what is
//! supported. Hostile sizes are refused before anything is allocated: tensor data must match
//! its dims exactly, and tensors are limited to [`MAX_TENSOR_ELEMENTS`] elements, activations
//! to [`MAX_ACTIVATION_ELEMENTS`].
//!
//! Layout: this file holds the options, the walk over the nodes and the value bookkeeping;
//! `io.rs` the graph inputs and outputs, `ops/` the per-op-type conversion (one file per
//! family, one registry), `attributes.rs` typed attribute access, `tensors.rs` `TensorProto`
//! decoding and encoding, `proto.rs` the protobuf messages, `export/` the exporter (`mod.rs`
//! inputs, outputs and naming, `ops.rs` and `nn.rs` each op as ONNX nodes, `builder.rs` the
//! graph being written).

mod attributes;
mod export;
mod io;
mod ops;
pub mod proto;
mod tensors;

pub use export::{to_onnx, ExportOptions, EXPORT_OPSET, PRODUCER};
pub use ops::{supported_ops, supported_qonnx_ops, QONNX_DOMAINS};
pub use tensors::{tensor_from_proto, tensor_to_proto};

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::rc::Rc;

use prost::Message;

use crate::error::{Error, Result};
use crate::graph::{MaseGraph, NodeId};
use crate::metadata::TensorMeta;
use crate::op::Op;
use crate::tensor::{DType, Tensor};
use attributes::Attrs;
use proto::NodeProto;

/// Lowest supported opset of the default domain.
pub const MIN_OPSET: i64 = 13;
/// Highest supported opset of the default domain.
pub const MAX_OPSET: i64 = 20;
/// The QONNX domain, as the exporter writes it (the importer also reads the older names in
/// [`QONNX_DOMAINS`]).
pub const QONNX_DOMAIN: &str = "qonnx.custom_op.general";
/// The opset of [`QONNX_DOMAIN`] the exporter writes (2: `Trunc` version 2).
pub const QONNX_OPSET: i64 = 2;
/// Largest number of elements of a tensor stored in a model (2^28, 1 GiB of f32).
pub const MAX_TENSOR_ELEMENTS: usize = 1 << 28;
/// Largest number of elements of an activation (2^26): a larger input shape is refused, since
/// shape propagation allocates tensors of that size.
pub const MAX_ACTIVATION_ELEMENTS: usize = 1 << 26;

/// The raising passes run at import, in order.
pub const RAISE_PASSES: [&str; 8] = [
    "raise_linear",
    "split_qonnx_quant",
    "raise_qdq",
    "raise_gelu",
    "raise_layer_norm",
    "raise_mul_scalar",
    "raise_embedding",
    "raise_masked_softmax",
];

/// Options of an import.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// Full shapes of graph inputs by name; needed for inputs with dynamic dimensions, and
    /// checked against the fixed dimensions of the others.
    pub input_shapes: BTreeMap<String, Vec<usize>>,
    /// Run the raising passes (see [`RAISE_PASSES`]) after import.
    pub raise: bool,
    /// Fold nodes whose inputs are all constants into constants (the module documentation's
    /// step 3); off keeps them as graph nodes, for inspecting the graph as exported.
    pub fold: bool,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions { input_shapes: BTreeMap::new(), raise: true, fold: true }
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
    let mut imp = Importer::new(if graph.name.is_empty() { "model" } else { &graph.name }, opset, opts.fold);
    imp.domain_opsets = model.opset_import.iter().map(|o| (o.domain.clone(), o.version)).collect();
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
    /// Computed by a graph node; `known` holds its value when it depends on constants only
    /// (a node kept by an import without folding).
    Node { id: NodeId, shape: Vec<usize>, dtype: DType, known: Option<Rc<Tensor>> },
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
    /// The element type of the value (int8 and uint8 are int64 here, see `elem_types`).
    fn dtype(&self) -> Option<DType> {
        match self {
            Val::Node { dtype, .. } => Some(*dtype),
            Val::Const { t, .. } => Some(t.dtype()),
            Val::Unusable(_) => None,
        }
    }
    /// The value when it is known at import time: a constant, or a node on constants only.
    fn known(&self) -> Option<&Tensor> {
        match self {
            Val::Const { t, .. } | Val::Node { known: Some(t), .. } => Some(t),
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
    /// [`ImportOptions::fold`].
    fold: bool,
    values: HashMap<String, Val>,
    /// Constant nodes already made, by ONNX value name.
    const_nodes: HashMap<usize, NodeId>,
    /// Number of constant values made so far (their keys).
    consts: usize,
    /// The opset of each domain the model imports.
    domain_opsets: HashMap<String, i64>,
    /// ONNX element types of values where the MaseGraph's types lose them (int8 and uint8 are
    /// int64 here): initializers, `Constant` and `Cast` outputs and `QuantizeLinear` codes, by
    /// value name.
    elem_types: HashMap<String, i32>,
    /// Constants folded from a QONNX `Quant` with a power-of-two scale and zero point 0 (and
    /// transposes of them), by constant key: their codes and format, which the constant's node
    /// records in [`MaseGraph::qweights`] (so weight quantizers keep their bit widths).
    qconsts: HashMap<usize, crate::tensor::QuantTensor>,
}

/// The tensor key of a `Constant` node (its name otherwise).
fn node_name_of(g: &MaseGraph, id: NodeId) -> String {
    match &g.node(id).op {
        Op::Constant { tensor } => tensor.clone(),
        _ => g.node(id).name.clone(),
    }
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
    fn new(name: &str, opset: i64, fold: bool) -> Self {
        Importer {
            graph: MaseGraph::new(sanitize(name)),
            opset,
            fold,
            values: HashMap::new(),
            const_nodes: HashMap::new(),
            consts: 0,
            domain_opsets: HashMap::new(),
            elem_types: HashMap::new(),
            qconsts: HashMap::new(),
        }
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
                if let Some(q) = self.qconsts.get(key) {
                    self.graph.qweights.insert(node_name_of(&self.graph, id), q.clone());
                }
                Ok(id)
            }
        }
    }

    /// The codes and format of a folded constant `t` = `op(inputs)` when it is the output of a
    /// power-of-two QONNX `Quant` (see [`crate::quant::qonnx`]), of a `DequantizeLinear` of
    /// constant codes (the codes on their affine grid, [`crate::quant::affine`]), of int8 codes
    /// cast to float times a scale (the weight-only pattern) or a transpose of such a constant.
    fn folded_codes(&self, op: &Op, inputs: &[Val], t: &Tensor) -> Option<crate::tensor::QuantTensor> {
        match op {
            Op::Quant { .. } => match crate::quant::qonnx::quant_format(op, &self.graph.weights) {
                Ok(fmt) => {
                    let codes = crate::quant::quantize_f32(t.as_f32()?, &fmt).codes;
                    Some(crate::tensor::QuantTensor::per_tensor(fmt, codes))
                }
                Err(_) => {
                    crate::quant::affine::folded_quant(op, inputs.first()?.known()?, &self.graph.weights)
                }
            },
            Op::DequantizeLinear { codes, scale, zero_point, axis } => {
                let c = inputs.first().and_then(Val::known)?;
                crate::quant::affine::folded_dequantize(
                    *codes,
                    c,
                    scale,
                    zero_point.as_ref(),
                    *axis,
                    &self.graph.weights,
                )
            }
            Op::Mul => {
                // Codes times a scale, either way round (the weight-only pattern).
                let [a, b] = inputs else { return None };
                let codes_of = |v: &Val| match v {
                    Val::Const { key, .. } => self.qconsts.get(key),
                    _ => None,
                };
                match (codes_of(a), codes_of(b)) {
                    (Some(q), None) => crate::quant::affine::scaled_codes(q, b.known()?),
                    (None, Some(q)) => crate::quant::affine::scaled_codes(q, a.known()?),
                    _ => None,
                }
            }
            Op::Transpose { perm } => {
                let Some(Val::Const { key, .. }) = inputs.first() else { return None };
                let q = self.qconsts.get(key)?;
                let codes =
                    q.codes.clone().permuted_axes(ndarray::IxDyn(perm)).as_standard_layout().to_owned();
                if q.channel_frac.is_some() {
                    return None;
                }
                let mut t = crate::tensor::QuantTensor { codes, ..q.clone() };
                if let Some(a) = &mut t.affine {
                    // The scales run along the axis that moved to position perm⁻¹(axis).
                    a.axis = perm.iter().position(|&p| p == a.axis).unwrap_or(a.axis);
                }
                Some(t)
            }
            _ => None,
        }
    }

    /// Applies `op` to `inputs`: folds it when every input is constant (and folding is on),
    /// otherwise adds a node named from `base` whose shape and type come from evaluating the op
    /// on zero tensors of the input shapes (or on the known values, for a node on constants).
    fn emit(&mut self, ctx: &Ctx, base: &str, op: Op, inputs: &[Val]) -> Result<Val> {
        let all_known = inputs.iter().all(|v| v.known().is_some());
        if all_known && self.fold {
            let refs: Vec<&Tensor> = inputs.iter().filter_map(Val::known).collect();
            let t = crate::interp::eval_op(&op, &refs, &self.graph.weights).map_err(|m| ctx.err(m))?;
            if t.len() > MAX_TENSOR_ELEMENTS {
                return Err(ctx.err(format!("folds to a constant of shape {:?}, too large", t.shape())));
            }
            let qt = self.folded_codes(&op, inputs, &t);
            let v = self.constant(t, base.to_string());
            if let (Some(q), Val::Const { key, .. }) = (qt, &v) {
                self.qconsts.insert(*key, q);
            }
            return Ok(v);
        }
        let probes: Vec<Tensor> = inputs
            .iter()
            .map(|v| match v {
                Val::Node { known: Some(t), .. } | Val::Const { t, .. } => (**t).clone(),
                Val::Node { shape, dtype, .. } => Tensor::zeros(*dtype, shape),
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
        let (shape, dtype) = (out.shape().to_vec(), out.dtype());
        let known = all_known.then(|| Rc::new(out));
        Ok(Val::Node { id, shape, dtype, known })
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
        let qonnx = QONNX_DOMAINS.contains(&n.domain.as_str());
        if !(n.domain.is_empty() || n.domain == "ai.onnx" || qonnx) {
            return Err(ctx.err(format!(
                "domain '{}' is not supported; supported: the default ONNX domain (ai.onnx) and, for {}, the \
                 QONNX domain ({})",
                n.domain,
                supported_qonnx_ops().join(", "),
                QONNX_DOMAINS.join(", ")
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
        let entry = if qonnx {
            ops::lookup_qonnx(&n.op_type).ok_or_else(|| {
                ctx.err(format!(
                    "op type '{}' of domain '{}' is not supported; supported QONNX ops: {}",
                    n.op_type,
                    n.domain,
                    supported_qonnx_ops().join(", ")
                ))
            })?
        } else {
            ops::lookup(&n.op_type).ok_or_else(|| {
                ctx.err(format!(
                    "op type '{}' is not supported{}; supported ops: {}",
                    n.op_type,
                    quantized_kernel_hint(&n.op_type),
                    supported_ops().join(", ")
                ))
            })?
        };
        // The ONNX element types int8 / uint8 codes need (see `elem_types`).
        if let (false, Some(out)) = (qonnx, n.output.first()) {
            let declared = match n.op_type.as_str() {
                "Constant" => n
                    .attribute
                    .iter()
                    .find(|a| a.name == "value")
                    .and_then(|a| a.t.as_ref())
                    .map(|t| t.data_type),
                "Cast" => n.attribute.iter().find(|a| a.name == "to").and_then(|a| a.i).map(|t| t as i32),
                _ => None,
            };
            if let Some(t) = declared {
                self.elem_types.insert(out.clone(), t);
            }
        }
        if ins.len() > entry.max_inputs {
            return Err(ctx.err(format!("expects at most {} inputs, got {}", entry.max_inputs, ins.len())));
        }
        let outs = (entry.convert)(
            self,
            &ops::OnnxNode {
                ctx: &ctx,
                base: &base,
                at: &attrs,
                ins: &ins,
                names: &n.input,
                outs: &n.output,
                domain: &n.domain,
            },
        )?;
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
}

/// Why an op of onnxruntime's quantized forms is refused, and what to use instead (empty for
/// every other op). Dynamic quantization computes activation scales from each input at run
/// time, which a datapath with fixed formats cannot follow; the integer-kernel ops are the
/// operator-oriented form of a static quantization, whose QDQ form imports.
fn quantized_kernel_hint(op_type: &str) -> &'static str {
    match op_type {
        "DynamicQuantizeLinear" | "DynamicQuantizeMatMul" => {
            " (dynamic quantization, e.g. onnxruntime's quantize_dynamic, computes each activation's scale from \
             the input at run time; fixed-point hardware has one format per tensor, fixed when it is built: \
             import the float model and let `mase flow` calibrate it, or quantize statically in the QDQ \
             format: quantize_static(..., quant_format=QuantFormat.QDQ))"
        }
        "MatMulInteger" | "ConvInteger" | "QLinearMatMul" | "QLinearConv" | "QLinearAdd" | "QGemm" => {
            " (an integer kernel of an operator-oriented quantized model; export the QDQ format instead, \
             e.g. quantize_static(..., quant_format=QuantFormat.QDQ), whose QuantizeLinear / DequantizeLinear \
             pairs import)"
        }
        _ => "",
    }
}
