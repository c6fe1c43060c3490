//! Indexing: `Gather` (any axis; constant or computed indices, so embedding lookups of token
//! ids are `Gather(table, input_ids)`, which `raise_embedding` turns into `embedding`) and
//! `GatherND`.

use super::{OnnxNode, OnnxOp};
use crate::error::Result;
use crate::onnx::{Importer, Val};
use crate::op::Op;

/// The family's op types.
pub(super) const OPS: &[OnnxOp] = &[
    OnnxOp { name: "Gather", max_inputs: 2, convert: gather },
    OnnxOp { name: "GatherND", max_inputs: 2, convert: gather_nd },
];

fn gather(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&["axis"])?;
    let v = n.inputs(2)?;
    Ok(vec![imp.emit(n.ctx, n.base, Op::Gather { axis: n.at.int("axis")?.unwrap_or(0) }, &v)?])
}

fn gather_nd(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&["batch_dims"])?;
    let v = n.inputs(2)?;
    let op = Op::GatherNd { batch_dims: n.at.int("batch_dims")?.unwrap_or(0) };
    Ok(vec![imp.emit(n.ctx, n.base, op, &v)?])
}
