//! Float reference interpreter (f32, ndarray): the accuracy reference and the engine of shape
//! propagation and constant folding.

use std::collections::{BTreeMap, HashMap};

use crate::error::Result;
use crate::graph::MaseGraph;
use crate::op::Op;
use crate::tensor::Tensor;

/// Evaluates one op on its input values. `weights` holds the tensors the op names. The error
/// is a message; callers locate it at the node.
pub fn eval_op(
    op: &Op,
    inputs: &[&Tensor],
    weights: &BTreeMap<String, Tensor>,
) -> std::result::Result<Tensor, String> {
    let _ = (op, inputs, weights);
    Err("the interpreter is not written yet".into())
}

/// Runs the graph on named inputs and returns the value of every node, indexed by node id
/// (the output node's value is its first input's value).
pub fn run_graph(graph: &MaseGraph, inputs: &HashMap<String, Tensor>) -> Result<Vec<Tensor>> {
    let _ = (graph, inputs);
    Err(crate::Error::Unsupported("the interpreter is not written yet".into()))
}
