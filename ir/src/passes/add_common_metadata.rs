//! `add_common_metadata`: operator inference and shape/dtype propagation.
//!
//! For every node, `common.mase_op` and `common.mase_type` are set from its op. Shapes and
//! element types come from running the float interpreter ([`crate::interp::run_graph`]) once on
//! a dummy input: zeros of each placeholder's declared shape
//! (`common.results["data_out_0"].shape`, set by the importer or `--input-shape`; an integer
//! placeholder, type `NA`, gets i64 zeros). Then:
//!
//! - `common.args` lists `data_in_0`, `data_in_1`, … (one per input, with the shape its
//!   producer computes), then the tensors the op owns under their MASE role names (`weight`,
//!   `bias`, `indices`; see [`crate::Op::weight_names`]) with shapes from the graph's weights.
//!   A constant node records its tensor as its result, not as an argument.
//! - `common.results["data_out_0"]` is the node's value (for the output node: the value of its
//!   first input, as the interpreter defines it).
//!
//! A float tensor gets type `float`, precision `[32]`; an i64 tensor (shapes, indices) gets
//! type `NA`, precision `[64]`. Where an entry already exists with the same shape, its type,
//! precision and modes are kept, so rerunning the pass after quantization does not clobber
//! fixed-point formats; an entry whose shape changed is replaced. Entries under other names
//! are dropped (the pass rebuilds the lists).
//!
//! The info map gives `nodes`, the number of nodes annotated.

use std::collections::HashMap;

use indexmap::IndexMap;

use crate::error::Result;
use crate::graph::MaseGraph;
use crate::metadata::TensorMeta;
use crate::op::Op;
use crate::pass::{no_args, node_count, PassArgs, PassInfo};
use crate::tensor::{DType, Tensor};

/// The entry to record: the old one when its shape is unchanged (keeps fixed formats), else a
/// fresh one.
fn merge(old: Option<&TensorMeta>, shape: &[usize], dtype: DType) -> TensorMeta {
    match old {
        Some(o) if o.shape == shape => o.clone(),
        _ => TensorMeta::unquantized(shape, dtype),
    }
}

/// The dummy input: zeros of every placeholder's declared shape.
fn dummy_inputs(graph: &MaseGraph) -> Result<HashMap<String, Tensor>> {
    let mut inputs = HashMap::new();
    for id in graph.input_ids() {
        let node = graph.node(id);
        let meta = node.meta.common.results.get("data_out_0").ok_or_else(|| {
            node.error(format!(
                "graph input '{}' has no shape (common.results.data_out_0 is missing); give one \
                 with --input-shape {}=DIMxDIMx…",
                node.name, node.name
            ))
        })?;
        let t = Tensor::zeros(meta.dtype(), &meta.shape);
        inputs.insert(node.name.clone(), t);
    }
    Ok(inputs)
}

/// Annotates `graph` in place (see the module documentation).
pub fn add_common_metadata(graph: &mut MaseGraph) -> Result<()> {
    let inputs = dummy_inputs(graph)?;
    let values = crate::interp::run_graph(graph, &inputs)?;
    let ids: Vec<_> = graph.ids().collect();
    for id in ids {
        let node = graph.node(id);
        let mut args = IndexMap::new();
        let old = &node.meta.common;
        for (k, i) in node.inputs.iter().enumerate() {
            let v = &values[i.0];
            let name = format!("data_in_{k}");
            let m = merge(old.args.get(&name), v.shape(), v.dtype());
            args.insert(name, m);
        }
        if !matches!(node.op, Op::Constant { .. }) {
            for (role, key) in node.op.weight_names() {
                let w = graph.weights.get(key).ok_or_else(|| {
                    node.error(format!("{role} tensor '{key}' is missing from the weights"))
                })?;
                args.insert(role.to_string(), merge(old.args.get(role), w.shape(), w.dtype()));
            }
        }
        let v = &values[id.0];
        let mut results = IndexMap::new();
        results.insert("data_out_0".to_string(), merge(old.results.get("data_out_0"), v.shape(), v.dtype()));
        let (mase_op, mase_type) = (node.op.mase_op().to_string(), node.op.mase_type());
        let common = &mut graph.node_mut(id).meta.common;
        common.mase_op = mase_op;
        common.mase_type = mase_type;
        common.args = args;
        common.results = results;
    }
    Ok(())
}

/// The pass (`add_common_metadata` in [`super::REGISTRY`]): sets mase_op/mase_type and propagates
/// shapes and types by running the interpreter.
pub fn run(mut graph: MaseGraph, args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    no_args("add_common_metadata", args)?;
    add_common_metadata(&mut graph)?;
    let info = node_count(&graph);
    Ok((graph, info))
}
