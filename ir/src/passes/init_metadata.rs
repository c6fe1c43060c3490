//! `init_metadata`: resets every node's metadata tree.
//!
//! Each node gets the empty tree of [`NodeMeta::default`] (no args, results or statistics;
//! hardware `device_id` -1, not implicit, no module) with `common.mase_op` and
//! `common.mase_type` taken from its op, as MASE's `init_metadata_analysis_pass` does.
//!
//! One thing survives: the shape (and whether it is an integer tensor) of a placeholder's
//! `common.results["data_out_0"]`. It is the declared shape of a graph input (from the ONNX
//! file or `--input-shape`), not something a pass derived, and `add_common_metadata` needs it
//! to build its dummy input. Its type is reset to float `[32]` (integer inputs stay `NA`
//! `[64]`).

use crate::error::Result;
use crate::graph::MaseGraph;
use crate::metadata::{NodeMeta, TensorMeta};
use crate::op::Op;
use crate::pass::{no_args, node_count, PassArgs, PassInfo};

/// Resets the metadata of every node of `graph` (see the module documentation).
pub fn init_metadata(graph: &mut MaseGraph) {
    let ids: Vec<_> = graph.ids().collect();
    for id in ids {
        let node = graph.node_mut(id);
        let keep = match node.op {
            Op::Placeholder => node
                .meta
                .common
                .results
                .shift_remove("data_out_0")
                .map(|m| TensorMeta::unquantized(&m.shape, m.dtype())),
            _ => None,
        };
        let mut meta = NodeMeta::default();
        meta.common.mase_op = node.op.mase_op().to_string();
        meta.common.mase_type = node.op.mase_type();
        if let Some(k) = keep {
            meta.common.results.insert("data_out_0".into(), k);
        }
        node.meta = meta;
    }
}

/// The pass (`init_metadata` in [`super::REGISTRY`]): resets metadata to the empty tree (keeping
/// graph input shapes).
pub fn run(mut graph: MaseGraph, args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    no_args("init_metadata", args)?;
    init_metadata(&mut graph);
    let info = node_count(&graph);
    Ok((graph, info))
}
