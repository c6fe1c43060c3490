//! `remove_dropout`: a transform pass that removes `dropout` and `identity` nodes.
//!
//! Both compute the identity at inference. Every use of such a node becomes a use of its
//! input (as `replace_all_uses_with` does in the MASE tutorial), then the graph is compacted,
//! which drops the now unused nodes. The info map gives `removed` (all nodes removed),
//! `dropout` and `identity` (how many of each were removed).

use crate::error::Result;
use crate::graph::MaseGraph;
use crate::op::Op;
use crate::pass::{no_args, PassArgs, PassInfo};

/// The pass (`remove_dropout` in [`super::REGISTRY`]): removes dropout and identity nodes by
/// rewiring their users to their input.
pub fn run(mut graph: MaseGraph, args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    no_args("remove_dropout", args)?;
    let targets: Vec<_> = graph
        .nodes()
        .filter(|(_, n)| matches!(n.op, Op::Dropout { .. } | Op::Identity))
        .map(|(id, _)| id)
        .collect();
    let (mut dropout, mut identity) = (0usize, 0usize);
    // Arena order is topological, so a chain of removable nodes resolves front to back:
    // each node's input has already been rewired past earlier removed nodes.
    for &id in &targets {
        let node = graph.node(id);
        let [input] = node.inputs.as_slice() else {
            return Err(node.error(format!("expected exactly one input, found {}", node.inputs.len())));
        };
        let input = *input;
        if matches!(node.op, Op::Dropout { .. }) {
            dropout += 1;
        } else {
            identity += 1;
        }
        graph.replace_all_uses(id, input);
    }
    graph.compact()?;
    let mut info = PassInfo::new();
    info.insert("removed".into(), (dropout + identity).into());
    info.insert("dropout".into(), dropout.into());
    info.insert("identity".into(), identity.into());
    Ok((graph, info))
}
