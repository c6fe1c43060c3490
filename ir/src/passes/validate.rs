//! `validate`: checks the graph invariants (see [`crate::MaseGraph::validate`]).

use crate::error::Result;
use crate::graph::MaseGraph;
use crate::pass::{node_count, PassArgs, PassInfo};

/// The pass (`validate` in [`super::REGISTRY`]): checks the graph invariants and reports the node
/// count.
pub fn run(graph: MaseGraph, _args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    graph.validate()?;
    let info = node_count(&graph);
    Ok((graph, info))
}
