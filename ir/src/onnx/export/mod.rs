//! ONNX export: a float MaseGraph as an ONNX `ModelProto` that onnxruntime runs and the
//! importer reads back ([`to_onnx`]); used for the host parts of a model cut into host and
//! device.
//!
//! What is written:
//! - **Opset** 17 of the default domain by default ([`ExportOptions::opset`], 17 to 20 accepted):
//!   17 is the first opset with `LayerNormalization` and what PyTorch's exporters write by
//!   default, so every runtime that runs their models runs ours. From opset 18 the ReduceMean
//!   axes are an input; from 20 GELU is the `Gelu` op instead of its formula. The IR version is
//!   the one that opset came with (8 for 17 and 18, 9 for 19 and 20); the producer is `mase-rs`.
//! - **Graph inputs**: the placeholders, in order, named as the nodes, with the element type
//!   (float32, int64, int32, bool) and static shape their `common.results["data_out_0"]`
//!   metadata records.
//! - **Initializers**: the constants (named after their nodes) and the weights ops own
//!   (`linear`'s weight transposed to `[in, out]` and bias, the `embedding` table,
//!   `layer_norm`'s scale and bias), each written once however many nodes read it, plus the
//!   shapes, axes and scalars ops take as inputs. Quantized weights are not written: the
//!   export is the float graph.
//! - **Nodes**: each MaseGraph node as the standard ops that compute what the float
//!   interpreter computes (`ops.rs` for one-to-one ops, `nn.rs` for the rest). Values are
//!   named after the nodes that compute them (made unique), helper values `<node>_<what>`.
//! - **Quantizers** (`quant.rs`): QONNX `Quant`, `BipolarQuant`, `Trunc` in the
//!   `qonnx.custom_op.general` domain (imported at [`super::QONNX_OPSET`] when the graph has
//!   one), their scale, zero point and bit widths as float initializers; `QuantizeLinear` then a
//!   `Cast` to int64, and a `Cast` to the codes' type then `DequantizeLinear` (the interpreter's
//!   codes are int64), the zero points written in the codes' type.
//! - **Graph outputs**: the output node's inputs, named [`ExportOptions::output_names`] or else
//!   [`MaseGraph::output_name`] (the ONNX names the graph was imported with); the node computing
//!   an output writes its value under the output's name, and an `Identity` gives the name to a
//!   graph input, a constant or a value returned twice; each with its type and static shape.
//!
//! Types and shapes come from each node's recorded metadata; a graph with nodes that have none
//! (built by hand, not run through `add_common_metadata`) is run once on zero inputs to get
//! them. The bytes depend only on the graph and the options.

mod builder;
mod nn;
mod ops;
mod quant;

use std::collections::HashMap;

use prost::Message;

use super::proto::{
    DimValue, Dimension, GraphProto, ModelProto, OperatorSetIdProto, TensorShapeProto, TypeProto,
    TypeProtoTensor, ValueInfoProto,
};
use super::tensors::onnx_data_type;
use crate::error::{Error, Result};
use crate::graph::{MaseGraph, NodeId};
use crate::op::Op;
use crate::tensor::{DType, Tensor};
use builder::Builder;

/// The opset written by default (see the module documentation for why 17).
pub const EXPORT_OPSET: i64 = 17;
/// The name written as the model's producer.
pub const PRODUCER: &str = "mase-rs";

/// Options of an export.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// Names of the graph outputs, one per output (e.g. `logits`); empty takes
    /// [`MaseGraph::output_name`] for each.
    pub output_names: Vec<String>,
    /// The default-domain opset, 17 to 20.
    pub opset: i64,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions { output_names: Vec::new(), opset: EXPORT_OPSET }
    }
}

/// The element type and static shape of a value.
pub(super) struct Ty {
    /// Element type.
    pub dtype: DType,
    /// Shape, outermost first.
    pub shape: Vec<usize>,
}

/// Writes `g` as a serialized ONNX `ModelProto` (see the module documentation). Errors name the
/// node and op that cannot be written, or the output names that do not fit.
pub fn to_onnx(g: &MaseGraph, opts: &ExportOptions) -> Result<Vec<u8>> {
    if !(EXPORT_OPSET..=super::MAX_OPSET).contains(&opts.opset) {
        return Err(Error::Config(format!(
            "ONNX export opset {} is not supported; supported: {EXPORT_OPSET} to {}",
            opts.opset,
            super::MAX_OPSET
        )));
    }
    g.validate()?;
    let types = value_types(g)?;
    let outs = g.output_values();
    if outs.is_empty() {
        return Err(Error::Invalid(format!(
            "graph '{}' returns nothing; an ONNX graph needs an output",
            g.name
        )));
    }
    let out_names = output_names(g, opts, outs.len())?;

    let mut b = Builder::default();
    let mut names: Vec<Option<String>> = vec![None; g.len()];
    let mut input = Vec::new();
    for id in g.input_ids() {
        let name = g.node(id).name.clone();
        b.reserve(&name);
        input.push(value_info(&name, &types[id.0]));
        names[id.0] = Some(name);
    }
    // A node's value takes the name of the first output returning it, so the output needs no
    // node of its own; an input, a constant or a value returned twice gets the name through an
    // Identity.
    let mut direct: HashMap<NodeId, String> = HashMap::new();
    for (&v, name) in outs.iter().zip(&out_names) {
        let node = g.node(v);
        if matches!(node.op, Op::Placeholder) && &node.name == name {
            continue;
        }
        if !b.reserve(name) {
            return Err(Error::Invalid(format!(
                "graph output '{name}' has the name of graph input '{name}' but returns another value; \
                 give the outputs other names (ExportOptions::output_names)"
            )));
        }
        if !matches!(node.op, Op::Constant { .. } | Op::Placeholder) {
            direct.entry(v).or_insert_with(|| name.clone());
        }
    }
    for (id, node) in g.nodes() {
        if matches!(node.op, Op::Placeholder | Op::Output) {
            continue;
        }
        let out = direct.remove(&id).unwrap_or_else(|| b.fresh(&node.name));
        let mut ins = Vec::with_capacity(node.inputs.len());
        for i in &node.inputs {
            ins.push(names[i.0].clone().ok_or_else(|| node.error("internal: an input is not written yet"))?);
        }
        let at = ops::At {
            node,
            ins,
            in_types: node.inputs.iter().map(|i| &types[i.0]).collect(),
            out: out.clone(),
            opset: opts.opset,
            weights: &g.weights,
        };
        ops::lower(&mut b, &at)?;
        names[id.0] = Some(out);
    }
    let mut output = Vec::with_capacity(outs.len());
    for (v, name) in outs.iter().zip(&out_names) {
        let value =
            names[v.0].clone().ok_or_else(|| g.node(*v).error("internal: an output is not written"))?;
        if &value != name {
            b.node_to("Identity", vec![value], name.clone(), vec![]);
        }
        output.push(value_info(name, &types[v.0]));
    }
    let graph = GraphProto {
        node: b.nodes,
        name: if g.name.is_empty() { "model".to_string() } else { g.name.clone() },
        initializer: b.initializers,
        input,
        output,
        value_info: Vec::new(),
    };
    let mut opset_import = vec![OperatorSetIdProto { domain: String::new(), version: opts.opset }];
    if g.nodes().any(|(_, n)| matches!(n.op, Op::Quant { .. } | Op::BipolarQuant { .. } | Op::Trunc { .. })) {
        opset_import
            .push(OperatorSetIdProto { domain: super::QONNX_DOMAIN.into(), version: super::QONNX_OPSET });
    }
    let model = ModelProto {
        ir_version: if opts.opset <= 18 { 8 } else { 9 },
        opset_import,
        producer_name: PRODUCER.to_string(),
        producer_version: env!("CARGO_PKG_VERSION").to_string(),
        graph: Some(graph),
    };
    Ok(model.encode_to_vec())
}

/// The graph output names: the options' (one per output, distinct) or the graph's
/// ([`MaseGraph::output_name`]; a name given twice gets `_1`, `_2`, … on its repeats, since
/// ONNX output names are distinct).
fn output_names(g: &MaseGraph, opts: &ExportOptions, n: usize) -> Result<Vec<String>> {
    if !opts.output_names.is_empty() {
        if opts.output_names.len() != n {
            return Err(Error::Config(format!(
                "{} output names given ({}) for the {n} outputs of graph '{}'",
                opts.output_names.len(),
                opts.output_names.join(", "),
                g.name
            )));
        }
        for (k, name) in opts.output_names.iter().enumerate() {
            if name.is_empty() || opts.output_names[..k].contains(name) {
                return Err(Error::Config(format!(
                    "output name {k} is {}; output names must be non-empty and distinct",
                    if name.is_empty() { "empty".to_string() } else { format!("'{name}' again") }
                )));
            }
        }
        return Ok(opts.output_names.clone());
    }
    let mut v: Vec<String> = Vec::with_capacity(n);
    for k in 0..n {
        let base = g.output_name(k);
        let name = if v.contains(&base) {
            (1..).map(|i| format!("{base}_{i}")).find(|c| !v.contains(c)).expect("unbounded")
        } else {
            base
        };
        v.push(name);
    }
    Ok(v)
}

/// The element type and shape of every node's value, from the recorded metadata or, when a
/// node has none, from running the graph once on zeros of the inputs' recorded shapes.
fn value_types(g: &MaseGraph) -> Result<Vec<Ty>> {
    let recorded = |id: NodeId| {
        let n = g.node(id);
        match &n.op {
            Op::Constant { tensor } => {
                g.weights.get(tensor).map(|t| Ty { dtype: t.dtype(), shape: t.shape().to_vec() })
            }
            _ => n
                .meta
                .common
                .results
                .get("data_out_0")
                .map(|m| Ty { dtype: m.dtype(), shape: m.shape.clone() }),
        }
    };
    let mut inputs = HashMap::new();
    for id in g.input_ids() {
        let n = g.node(id);
        let ty = recorded(id).ok_or_else(|| {
            n.error(
                "the graph input has no recorded type and shape (common.results.data_out_0); ONNX inputs \
                 are written with static shapes: import with the input shapes or run add_common_metadata",
            )
        })?;
        inputs.insert(n.name.clone(), Tensor::zeros(ty.dtype, &ty.shape));
    }
    let all: Option<Vec<Ty>> = g
        .nodes()
        .map(|(id, n)| {
            if matches!(n.op, Op::Output) {
                Some(Ty { dtype: DType::F32, shape: vec![] })
            } else {
                recorded(id)
            }
        })
        .collect();
    if let Some(all) = all {
        // The output node's entry is never read: it is not a value.
        return Ok(all);
    }
    let values = crate::interp::run_graph(g, &inputs).map_err(|e| {
        Error::Invalid(format!(
            "nodes without recorded types and shapes need a run on zero inputs to get them, which failed: {e}; \
             run add_common_metadata first"
        ))
    })?;
    Ok(values.iter().map(|v| Ty { dtype: v.dtype(), shape: v.shape().to_vec() }).collect())
}

/// A value's name, element type and static shape.
fn value_info(name: &str, ty: &Ty) -> ValueInfoProto {
    let dim = ty.shape.iter().map(|&d| Dimension { value: Some(DimValue::DimValue(d as i64)) }).collect();
    ValueInfoProto {
        name: name.to_string(),
        r#type: Some(TypeProto {
            tensor_type: Some(TypeProtoTensor {
                elem_type: onnx_data_type(ty.dtype),
                shape: Some(TensorShapeProto { dim }),
            }),
        }),
    }
}
