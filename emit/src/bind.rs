//! Binding a quantized graph once: every node's role, and for hardware nodes the component (or
//! the user's module) that implements it, read by the parallelism search, the hardware metadata
//! pass and the stitcher alike ([`bind_graph`]).
//!
//! Every node is one of: a graph input or output (a port of the top), an implicit node (reshapes
//! and element-order-preserving transposes: no hardware, the stream passes through), a constant
//! feeding weights, or a hardware node bound to one component. Which op binds to what is the
//! library's table ([`mase_hwlib::op_role`]); anything else is an error naming the node and its
//! op and listing what the hardware flow supports.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use mase_hwlib::binding::supported_ops;
use mase_hwlib::{resolve_params, Binding, NodeView, OpRole, Params};
use mase_ir::{Error, MaseGraph, NodeId, Result};

use crate::external::External;

pub use mase_hwlib::binding::fmt_name;
pub use mase_hwlib::Par;

/// What a node is for the hardware.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A graph input: a stream port of the top.
    Input,
    /// The graph output node: its producers drive output ports of the top.
    Output,
    /// No hardware; the stream of its (single) data input passes through.
    Implicit,
    /// Bound to a component.
    Hardware,
    /// A constant that only feeds weights (not streamed).
    Constant,
}

/// What implements a hardware node.
#[derive(Clone)]
pub enum Implementation {
    /// A library component.
    Library(&'static dyn Binding),
    /// The user's module named by the node's `hardware.external` manifest.
    External(Arc<External>),
}

/// One node's binding.
#[derive(Clone)]
pub struct NodeBinding {
    /// The node's role.
    pub role: Role,
    /// For hardware nodes, what implements it.
    pub implementation: Option<Implementation>,
    /// For hardware and output nodes, the node producing each streamed data input's stream
    /// (followed back through implicit nodes): every input, or for a library component the
    /// first [`Binding::streamed_inputs`] (the rest are constants its binding reads).
    pub sources: Vec<NodeId>,
}

/// Every node of a graph bound once ([`bind_graph`]).
pub struct Bindings<'g> {
    /// The graph.
    pub graph: &'g MaseGraph,
    nodes: BTreeMap<NodeId, NodeBinding>,
}

/// Binds every node of `graph`: roles, components, user modules (manifests loaded once; relative
/// manifest paths resolve against `base`, the emitted project holding the graph) and stream
/// sources.
pub fn bind_graph<'g>(graph: &'g MaseGraph, base: Option<&Path>) -> Result<Bindings<'g>> {
    let mut nodes: BTreeMap<NodeId, NodeBinding> = BTreeMap::new();
    for (id, node) in graph.nodes() {
        let v = NodeView::new(graph, node);
        let (role, implementation) = match &node.meta.hardware.external {
            Some(p) => {
                let path = crate::external::resolve(base, p);
                let ext = External::load(&path, graph, node)?;
                (Role::Hardware, Some(Implementation::External(Arc::new(ext))))
            }
            None => match mase_hwlib::op_role(node.op.kind()) {
                OpRole::Input => (Role::Input, None),
                OpRole::Output => (Role::Output, None),
                OpRole::Constant => (Role::Constant, None),
                OpRole::Implicit => (Role::Implicit, None),
                OpRole::Bound(b, _) => {
                    let b = b.variant(&v).unwrap_or(b);
                    if b.passes_through(&v)? {
                        (Role::Implicit, None)
                    } else {
                        (Role::Hardware, Some(Implementation::Library(b)))
                    }
                }
                OpRole::Unsupported => {
                    return Err(node.error(format!(
                        "no hardware component implements `{}`; the hardware flow supports {}",
                        node.op.mase_op(),
                        supported_ops()
                    )))
                }
            },
        };
        nodes.insert(id, NodeBinding { role, implementation, sources: Vec::new() });
    }
    let mut b = Bindings { graph, nodes };
    let streamed: Vec<NodeId> = b
        .nodes
        .iter()
        .filter(|(_, n)| matches!(n.role, Role::Hardware | Role::Output))
        .map(|(id, _)| *id)
        .collect();
    for id in streamed {
        let node = graph.node(id);
        // A library component may read its trailing inputs as constants (a gather's index).
        let n = match &b.nodes[&id].implementation {
            Some(Implementation::Library(c)) => c.streamed_inputs(&NodeView::new(graph, node))?,
            _ => node.inputs.len(),
        };
        for &i in &node.inputs[n.min(node.inputs.len())..] {
            if b.nodes[&i].role != Role::Constant {
                return Err(node.error(format!(
                    "input '{}' must be a constant: the {} component reads it when binding and does not stream it",
                    graph.node(i).name,
                    b.library(id)?.name()
                )));
            }
        }
        let sources = node.inputs[..n.min(node.inputs.len())]
            .iter()
            .map(|&i| b.stream_source(i))
            .collect::<Result<Vec<_>>>()?;
        b.nodes.get_mut(&id).expect("bound above").sources = sources;
    }
    Ok(b)
}

impl<'g> Bindings<'g> {
    /// The binding of node `id`.
    pub fn get(&self, id: NodeId) -> &NodeBinding {
        &self.nodes[&id]
    }

    /// The role of node `id`.
    pub fn role(&self, id: NodeId) -> Role {
        self.nodes[&id].role
    }

    /// Every node's binding, in graph order.
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, &NodeBinding)> {
        self.nodes.iter().map(|(id, b)| (*id, b))
    }

    /// The hardware nodes with what implements each, in graph order.
    pub fn hardware(&self) -> impl Iterator<Item = (NodeId, &Implementation)> {
        self.nodes.iter().filter_map(|(id, b)| b.implementation.as_ref().map(|i| (*id, i)))
    }

    /// The view of node `id` its binding reads.
    pub fn view(&self, id: NodeId) -> NodeView<'g> {
        NodeView::new(self.graph, self.graph.node(id))
    }

    /// The library component of hardware node `id` (an error for a user's module).
    pub fn library(&self, id: NodeId) -> Result<&'static dyn Binding> {
        match &self.nodes[&id].implementation {
            Some(Implementation::Library(b)) => Ok(*b),
            Some(Implementation::External(_)) => {
                Err(self.graph.node(id).error("is bound to a user's module, not a library component"))
            }
            None => Err(self.graph.node(id).error(format!(
                "`{}` is not a hardware node ({})",
                self.graph.node(id).op.mase_op(),
                supported_ops()
            ))),
        }
    }

    /// Resolved parameters of library node `id` at parallelism `par` (validated by the component).
    pub fn params(&self, id: NodeId, par: Par) -> Result<Params> {
        let b = self.library(id)?;
        let o = b.overrides(&self.view(id), par)?;
        resolve_params(b, &o)
            .map_err(|e| self.graph.node(id).error(format!("at parallelism {}x{}: {e}", par.p_in, par.p_out)))
    }

    /// Logical contents of library node `id`'s memories (as `Component::layout_memory` takes
    /// them): what its data fills, then what the component generates from its parameters.
    pub fn memories(&self, id: NodeId, p: &Params) -> Result<Vec<(String, Vec<i64>)>> {
        let b = self.library(id)?;
        let mut m = b.data_memories(&self.view(id), p)?;
        for spec in b.memories(p) {
            if m.iter().any(|(n, _)| *n == spec.name) {
                continue;
            }
            let v = b.generated_memory(p, &spec.name).ok_or_else(|| {
                self.graph.node(id).error(format!(
                    "no contents for memory `{}` of component {}",
                    spec.name,
                    b.name()
                ))
            })?;
            m.push((spec.name, v));
        }
        Ok(m)
    }

    /// Follows `id` back through implicit nodes to the node producing its stream.
    fn stream_source(&self, mut id: NodeId) -> Result<NodeId> {
        loop {
            let n = self.graph.node(id);
            match self.nodes[&id].role {
                Role::Implicit => {
                    id = *n.inputs.first().ok_or_else(|| n.error("implicit node without an input"))?
                }
                Role::Constant => {
                    return Err(n.error(format!(
                        "a constant tensor used as a streamed operand is not supported in hardware ({})",
                        supported_ops()
                    )))
                }
                Role::Input | Role::Output | Role::Hardware => return Ok(id),
            }
        }
    }
}

/// Node-independent error for a graph that cannot be emitted.
pub fn graph_error(msg: impl Into<String>) -> Error {
    Error::Config(msg.into())
}
