//! The ONNX graph being written: unique value names, nodes in order, initializers (each
//! op-owned weight written once), and typed attribute constructors.

use std::collections::{HashMap, HashSet};

use super::super::proto::{attr_type, AttributeProto, NodeProto, TensorProto};
use super::super::tensors::tensor_to_proto;
use crate::tensor::Tensor;

/// Nodes and initializers of the graph being written, and the value names taken so far.
#[derive(Default)]
pub(super) struct Builder {
    /// Nodes in topological order.
    pub nodes: Vec<NodeProto>,
    /// Initializers in the order they were made.
    pub initializers: Vec<TensorProto>,
    /// Every value name in use (graph inputs, graph outputs, node outputs, initializers).
    used: HashSet<String>,
    /// Initializer names by cache key, so a tensor several nodes read is written once.
    cached: HashMap<String, String>,
}

impl Builder {
    /// Takes `name` as it is; false when it is already taken.
    pub fn reserve(&mut self, name: &str) -> bool {
        self.used.insert(name.to_string())
    }

    /// A value name not taken yet, built from `base` (`base`, `base_1`, `base_2`, …), now taken.
    pub fn fresh(&mut self, base: &str) -> String {
        let base = if base.is_empty() { "v" } else { base };
        let name = if self.used.contains(base) {
            (1..).map(|i| format!("{base}_{i}")).find(|n| !self.used.contains(n)).expect("unbounded")
        } else {
            base.to_string()
        };
        self.used.insert(name.clone());
        name
    }

    /// Adds a node computing the value `output` (already taken); the node is named after it,
    /// which makes node names unique too.
    pub fn node_to(
        &mut self,
        op_type: &str,
        inputs: Vec<String>,
        output: String,
        attribute: Vec<AttributeProto>,
    ) {
        self.nodes.push(NodeProto {
            input: inputs,
            name: output.clone(),
            output: vec![output],
            op_type: op_type.to_string(),
            attribute,
            ..Default::default()
        });
    }

    /// Adds a node whose value gets a fresh name built from `base`; returns that name.
    pub fn node(
        &mut self,
        op_type: &str,
        inputs: Vec<String>,
        base: &str,
        attribute: Vec<AttributeProto>,
    ) -> String {
        let out = self.fresh(base);
        self.node_to(op_type, inputs, out.clone(), attribute);
        out
    }

    /// Adds the initializer `t` under the value name `name` (already taken).
    pub fn initializer_to(&mut self, name: String, t: &Tensor) {
        self.initializers.push(tensor_to_proto(&name, t));
    }

    /// Adds the initializer `t` (its name is replaced) under a fresh name built from `base`;
    /// returns that name.
    pub fn proto_initializer(&mut self, base: &str, mut t: TensorProto) -> String {
        let name = self.fresh(base);
        t.name = name.clone();
        self.initializers.push(t);
        name
    }

    /// Adds the initializer `t` under a fresh name built from `base`; returns that name.
    pub fn initializer(&mut self, base: &str, t: &Tensor) -> String {
        let name = self.fresh(base);
        self.initializer_to(name.clone(), t);
        name
    }

    /// The initializer cached under `key`, made from `make()` under a fresh name built from
    /// `base` the first time (a weight shared by several nodes is written once).
    pub fn cached_initializer(&mut self, key: String, base: &str, make: impl FnOnce() -> Tensor) -> String {
        if let Some(name) = self.cached.get(&key) {
            return name.clone();
        }
        let name = self.initializer(base, &make());
        self.cached.insert(key, name.clone());
        name
    }
}

/// An attribute with only its name and type set.
fn attr(name: &str, ty: i32) -> AttributeProto {
    AttributeProto { name: name.to_string(), r#type: ty, ..Default::default() }
}

/// An INT attribute.
pub(super) fn int(name: &str, v: i64) -> AttributeProto {
    AttributeProto { i: Some(v), ..attr(name, attr_type::INT) }
}

/// A FLOAT attribute.
pub(super) fn float(name: &str, v: f32) -> AttributeProto {
    AttributeProto { f: Some(v), ..attr(name, attr_type::FLOAT) }
}

/// An INTS attribute.
pub(super) fn ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto { ints: v.to_vec(), ..attr(name, attr_type::INTS) }
}

/// A STRING attribute.
pub(super) fn string(name: &str, v: &str) -> AttributeProto {
    AttributeProto { s: v.as_bytes().to_vec(), ..attr(name, attr_type::STRING) }
}

/// A TENSOR attribute (the tensor unnamed).
pub(super) fn tensor(name: &str, t: &Tensor) -> AttributeProto {
    AttributeProto { t: Some(tensor_to_proto("", t)), ..attr(name, attr_type::TENSOR) }
}
