//! `raise_embedding`: a `Gather` on axis 0 of a constant 2-D float table at computed integer
//! indices (token ids, position ids) becomes `embedding`, which owns the table as its weight, so
//! quantization gives the table a weight format and hardware can bind it to a lookup.
//!
//! Not raised: a gather at constant indices (it folds at import), on another axis, or of a
//! table that is not a 2-D float constant. A table that other nodes also read is copied to a
//! key of its own, so the embedding's weight format never constrains them.

use super::raise_common::{const_tensor, raise_all, replace, stem};
use crate::error::Result;
use crate::graph::{MaseGraph, NodeId};
use crate::op::Op;
use crate::pass::{PassArgs, PassInfo};
use crate::tensor::DType;

/// A raisable gather: (gather node, table constant node, indices node).
fn find(g: &MaseGraph) -> Option<(NodeId, NodeId, NodeId)> {
    g.ids().find_map(|id| {
        let n = g.node(id);
        let (Op::Gather { axis: 0 }, [table, idx]) = (&n.op, n.inputs.as_slice()) else { return None };
        let t = const_tensor(g, *table)?;
        if t.dtype() != DType::F32 || t.shape().len() != 2 || const_tensor(g, *idx).is_some() {
            return None;
        }
        Some((id, *table, *idx))
    })
}

/// The pass (`raise_embedding` in [`super::REGISTRY`]): raises Gather of a constant table at
/// computed indices to `embedding`.
pub fn run(g: MaseGraph, _args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    raise_all(g, |g| {
        let Some((id, table, idx)) = find(g) else { return Ok(false) };
        let Op::Constant { tensor } = &g.node(table).op else { return Ok(false) };
        let mut key = tensor.clone();
        if g.users(table).len() > 1 {
            let copy = g.weights[&key].clone();
            key = format!("{}.weight", g.fresh_name(&g.node(id).name));
            g.weights.insert(key.clone(), copy);
        }
        let base = stem(&g.node(id).name, &["gather"]).to_string();
        replace(g, id, &format!("{base}_embedding"), Op::Embedding { table: key }, vec![idx])?;
        Ok(true)
    })
}
