//! Graph storage: an arena of nodes in topological order, addressed by [`NodeId`], with unique
//! names, the tensors the ops own, and validation.
//!
//! Invariant (checked by [`MaseGraph::validate`]): every input of a node is an earlier node, so
//! the arena order is a topological order and the graph is acyclic by construction. Transforms
//! that rewire nodes call [`MaseGraph::compact`], which drops dead nodes and restores the order.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::metadata::NodeMeta;
use crate::op::Op;
use crate::tensor::{QuantTensor, Tensor};

/// Index of a node in the arena. Stable until the next [`MaseGraph::compact`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NodeId(pub usize);

/// torch.fx node kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// A graph input.
    Placeholder,
    /// A parameter or constant read.
    GetAttr,
    /// A free function.
    CallFunction,
    /// A module with parameters.
    CallModule,
    /// A tensor method (views, reshapes).
    CallMethod,
    /// The graph output.
    Output,
}

/// One node: a named computation of one tensor from its inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Unique name.
    pub name: String,
    /// torch.fx kind (derived from the op when the node is made).
    pub kind: NodeKind,
    /// The computation.
    pub op: Op,
    /// Input values, in argument order (`data_in_0`, `data_in_1`, …).
    pub inputs: Vec<NodeId>,
    /// Metadata tree.
    pub meta: NodeMeta,
    /// Name of the ONNX node this node was imported from, for error messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

impl Node {
    /// An error located at this node.
    pub fn error(&self, msg: impl Into<String>) -> Error {
        Error::Node {
            node: self.name.clone(),
            op: self.op.mase_op().to_string(),
            origin: self.origin.clone(),
            msg: msg.into(),
        }
    }

    /// The shape of this node's result, when `add_common_metadata` has recorded it.
    pub fn out_shape(&self) -> Option<&[usize]> {
        self.meta.common.results.get("data_out_0").map(|m| m.shape.as_slice())
    }
}

/// A MaseGraph: nodes, the tensors they own, and quantized copies of those tensors.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MaseGraph {
    /// Model name (from the ONNX graph or the user).
    pub name: String,
    nodes: Vec<Node>,
    names: HashMap<String, NodeId>,
    /// Float tensors owned by ops, by key (see [`Op::weight_names`]).
    pub weights: BTreeMap<String, Tensor>,
    /// Quantized versions of weights, by the same key, written by the quantize pass.
    pub qweights: BTreeMap<String, QuantTensor>,
    /// The name of each graph output, by position among the output node's inputs (the ONNX
    /// graph output names, e.g. `logits`, filled by the importer); empty when the graph does
    /// not know them. Read it through [`Self::output_name`].
    pub output_names: Vec<String>,
}

impl MaseGraph {
    /// An empty graph.
    pub fn new(name: impl Into<String>) -> Self {
        MaseGraph { name: name.into(), ..Default::default() }
    }

    /// Appends a node; its kind and MASE type come from the op. Fails on a duplicate name or an
    /// input that does not exist yet.
    pub fn add_node(&mut self, name: impl Into<String>, op: Op, inputs: Vec<NodeId>) -> Result<NodeId> {
        let name = name.into();
        let id = NodeId(self.nodes.len());
        if self.names.contains_key(&name) {
            return Err(Error::node(&name, op.mase_op(), "a node with this name already exists"));
        }
        if let Some(bad) = inputs.iter().find(|i| i.0 >= id.0) {
            return Err(Error::node(
                &name,
                op.mase_op(),
                format!("input {} is not defined before this node", bad.0),
            ));
        }
        let mut meta = NodeMeta::default();
        meta.common.mase_op = op.mase_op().to_string();
        meta.common.mase_type = op.mase_type();
        let kind = op.node_kind();
        self.names.insert(name.clone(), id);
        self.nodes.push(Node { name, kind, op, inputs, meta, origin: None });
        Ok(id)
    }

    /// The name of the graph input that `name` stands for: an input of that name, or else the
    /// input imported from the ONNX tensor `name` (whose name was made an identifier, e.g. an
    /// exporter's `x.461` is `x_461`), or `None` when neither exists.
    pub fn input_name_for(&self, name: &str) -> Option<&str> {
        let ids = self.input_ids();
        let by_name = ids.iter().find(|&&i| self.node(i).name == name);
        let by_origin = || ids.iter().find(|&&i| self.node(i).origin.as_deref() == Some(name));
        by_name.or_else(by_origin).map(|&i| self.node(i).name.as_str())
    }

    /// The element type of the graph input named `name` (from its recorded metadata; float32
    /// when none is recorded), or `None` when there is no such input.
    pub fn input_dtype(&self, name: &str) -> Option<crate::tensor::DType> {
        let id = self.input_ids().into_iter().find(|&i| self.node(i).name == name)?;
        Some(
            self.node(id)
                .meta
                .common
                .results
                .get("data_out_0")
                .map_or(crate::tensor::DType::F32, |m| m.dtype()),
        )
    }

    /// Appends a node as given (used by checkpoint loading); checks only name uniqueness.
    pub fn push_node(&mut self, node: Node) -> Result<NodeId> {
        let id = NodeId(self.nodes.len());
        if self.names.contains_key(&node.name) {
            return Err(Error::node(&node.name, node.op.mase_op(), "a node with this name already exists"));
        }
        self.names.insert(node.name.clone(), id);
        self.nodes.push(node);
        Ok(id)
    }

    /// A name not used by any node, built from `base`.
    pub fn fresh_name(&self, base: &str) -> String {
        if !self.names.contains_key(base) {
            return base.to_string();
        }
        (1..).map(|i| format!("{base}_{i}")).find(|n| !self.names.contains_key(n)).expect("unbounded")
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when the graph has no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node with this id. Panics on an id from another graph (a programming error).
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0]
    }

    /// Mutable access to a node. Renaming through this is not allowed; use [`Self::rename`].
    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id.0]
    }

    /// All nodes in topological order with their ids.
    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, &Node)> {
        self.nodes.iter().enumerate().map(|(i, n)| (NodeId(i), n))
    }

    /// All node ids in topological order.
    pub fn ids(&self) -> impl Iterator<Item = NodeId> {
        (0..self.nodes.len()).map(NodeId)
    }

    /// The node with this name.
    pub fn find(&self, name: &str) -> Option<NodeId> {
        self.names.get(name).copied()
    }

    /// Renames a node; fails if the new name is taken.
    pub fn rename(&mut self, id: NodeId, name: &str) -> Result<()> {
        if self.names.contains_key(name) {
            return Err(Error::node(
                name,
                self.nodes[id.0].op.mase_op(),
                "a node with this name already exists",
            ));
        }
        let old = std::mem::replace(&mut self.nodes[id.0].name, name.to_string());
        self.names.remove(&old);
        self.names.insert(name.to_string(), id);
        Ok(())
    }

    /// Graph inputs (placeholder nodes) in order.
    pub fn input_ids(&self) -> Vec<NodeId> {
        self.nodes().filter(|(_, n)| matches!(n.op, Op::Placeholder)).map(|(i, _)| i).collect()
    }

    /// The output node, if the graph has one.
    pub fn output_id(&self) -> Option<NodeId> {
        self.nodes().find(|(_, n)| matches!(n.op, Op::Output)).map(|(i, _)| i)
    }

    /// The values the graph returns (the output node's inputs).
    pub fn output_values(&self) -> Vec<NodeId> {
        self.output_id().map(|o| self.node(o).inputs.clone()).unwrap_or_default()
    }

    /// The name of output `k`: its entry in [`Self::output_names`] when there is a non-empty
    /// one, else the name of the node producing it (`output_k` when the graph has no output
    /// `k`), so a graph built without names still names its outputs.
    pub fn output_name(&self, k: usize) -> String {
        if let Some(n) = self.output_names.get(k).filter(|n| !n.is_empty()) {
            return n.clone();
        }
        self.output_values().get(k).map_or_else(|| format!("output_{k}"), |&id| self.node(id).name.clone())
    }

    /// Nodes that use `id` as an input, in order.
    pub fn users(&self, id: NodeId) -> Vec<NodeId> {
        self.nodes().filter(|(_, n)| n.inputs.contains(&id)).map(|(i, _)| i).collect()
    }

    /// Makes every use of `old` a use of `new`.
    pub fn replace_all_uses(&mut self, old: NodeId, new: NodeId) {
        for n in &mut self.nodes {
            for i in &mut n.inputs {
                if *i == old {
                    *i = new;
                }
            }
        }
    }

    /// Drops nodes the output does not depend on (placeholders are kept), drops weights no op
    /// uses, and re-sorts the arena topologically (stable: earlier nodes stay earlier). Fails if
    /// the rewiring made a cycle.
    pub fn compact(&mut self) -> Result<()> {
        let n = self.nodes.len();
        let mut live = vec![false; n];
        let mut stack: Vec<usize> = self
            .nodes()
            .filter(|(_, nd)| matches!(nd.op, Op::Output | Op::Placeholder))
            .map(|(i, _)| i.0)
            .collect();
        while let Some(i) = stack.pop() {
            if !live[i] {
                live[i] = true;
                stack.extend(self.nodes[i].inputs.iter().map(|x| x.0));
            }
        }
        // Stable topological sort (Kahn, smallest index first) over the live nodes.
        let mut indeg = vec![0usize; n];
        let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
        for i in (0..n).filter(|&i| live[i]) {
            for inp in &self.nodes[i].inputs {
                indeg[i] += 1;
                users[inp.0].push(i);
            }
        }
        let mut ready: std::collections::BTreeSet<usize> =
            (0..n).filter(|&i| live[i] && indeg[i] == 0).collect();
        let mut order = Vec::with_capacity(n);
        while let Some(&i) = ready.iter().next() {
            ready.remove(&i);
            order.push(i);
            for &u in &users[i] {
                indeg[u] -= 1;
                if indeg[u] == 0 {
                    ready.insert(u);
                }
            }
        }
        let live_count = live.iter().filter(|&&l| l).count();
        if order.len() != live_count {
            let stuck: Vec<&str> = (0..n)
                .filter(|&i| live[i] && indeg[i] > 0)
                .map(|i| self.nodes[i].name.as_str())
                .take(5)
                .collect();
            return Err(Error::Invalid(format!("the graph has a cycle through {}", stuck.join(", "))));
        }
        let mut remap = vec![usize::MAX; n];
        for (new, &old) in order.iter().enumerate() {
            remap[old] = new;
        }
        let mut old_nodes: Vec<Option<Node>> =
            std::mem::take(&mut self.nodes).into_iter().map(Some).collect();
        self.names.clear();
        for &old in &order {
            let mut node = old_nodes[old].take().expect("each node once");
            for i in &mut node.inputs {
                i.0 = remap[i.0];
            }
            self.names.insert(node.name.clone(), NodeId(self.nodes.len()));
            self.nodes.push(node);
        }
        let used: std::collections::BTreeSet<String> = self
            .nodes
            .iter()
            .flat_map(|nd| nd.op.weight_names().into_iter().map(|(_, k)| k.to_string()))
            .collect();
        self.weights.retain(|k, _| used.contains(k));
        self.qweights.retain(|k, _| used.contains(k));
        Ok(())
    }

    /// Checks the invariants: unique names, inputs defined before use (hence acyclic), exactly
    /// one output node, every weight an op names present, output names (when recorded) one per
    /// output, and, where metadata records shapes, each argument shape equal to the shape its
    /// producer records.
    pub fn validate(&self) -> Result<()> {
        let mut seen = HashMap::new();
        let mut outputs = 0;
        for (id, n) in self.nodes() {
            if seen.insert(n.name.as_str(), id).is_some() {
                return Err(Error::Invalid(format!("two nodes are named '{}'", n.name)));
            }
            if self.names.get(&n.name) != Some(&id) {
                return Err(Error::Invalid(format!("name index out of date for '{}'", n.name)));
            }
            for (k, i) in n.inputs.iter().enumerate() {
                if i.0 >= id.0 {
                    let what = if i.0 < self.nodes.len() {
                        "is not defined before it (cycle or bad order)"
                    } else {
                        "does not exist"
                    };
                    return Err(n.error(format!("input {k} {what}")));
                }
            }
            match n.op {
                Op::Output => outputs += 1,
                Op::Placeholder if !n.inputs.is_empty() => return Err(n.error("a placeholder has no inputs")),
                _ => {}
            }
            for (role, key) in n.op.weight_names() {
                if !self.weights.contains_key(key) {
                    return Err(n.error(format!("{role} tensor '{key}' is missing from the weights")));
                }
            }
            let args: Vec<_> = n.meta.common.args.iter().filter(|(k, _)| k.starts_with("data_in_")).collect();
            for (k, inp) in n.inputs.iter().enumerate() {
                let producer = self.node(*inp);
                let (Some(want), Some(got)) = (producer.out_shape(), args.get(k)) else { continue };
                if got.1.shape != want {
                    return Err(n.error(format!(
                        "argument {} has shape {:?} but its producer '{}' gives {:?}",
                        got.0, got.1.shape, producer.name, want
                    )));
                }
            }
        }
        if outputs != 1 {
            return Err(Error::Invalid(format!(
                "the graph must have exactly one output node, it has {outputs}"
            )));
        }
        let returned = self.output_values().len();
        if !self.output_names.is_empty() && self.output_names.len() != returned {
            return Err(Error::Invalid(format!(
                "the graph records {} output names ({}) for {returned} outputs",
                self.output_names.len(),
                self.output_names.join(", ")
            )));
        }
        Ok(())
    }
}
