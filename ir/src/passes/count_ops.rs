//! `count_ops`: an analysis pass that counts the nodes of each mase op.
//!
//! The info map has one entry per mase op present (in name order) with its node count, then
//! `total`, the number of nodes. Placeholders and the output node are counted like any other
//! node, so `total` equals the node count. The graph is returned unchanged.

use std::collections::BTreeMap;

use crate::error::Result;
use crate::graph::MaseGraph;
use crate::pass::{no_args, PassArgs, PassInfo};

/// Node counts per mase op, in name order.
pub fn count_ops(graph: &MaseGraph) -> BTreeMap<&'static str, usize> {
    let mut counts = BTreeMap::new();
    for (_, n) in graph.nodes() {
        *counts.entry(n.op.mase_op()).or_insert(0) += 1;
    }
    counts
}

/// The pass (`count_ops` in [`super::REGISTRY`]): counts nodes per mase op.
pub fn run(graph: MaseGraph, args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    no_args("count_ops", args)?;
    let mut info = PassInfo::new();
    for (op, n) in count_ops(&graph) {
        info.insert(op.to_string(), n.into());
    }
    info.insert("total".into(), graph.len().into());
    Ok((graph, info))
}
