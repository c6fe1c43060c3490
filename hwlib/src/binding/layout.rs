//! Stream layouts that depend on more than one node: a transpose feeding a matmul's `B` operand
//! may be built as the cheaper reorder of `Bᵀ`, the matmul then reading `B` transposed.

use mase_ir::op::Op;
use mase_ir::{MaseGraph, Node, Result};

use super::perm::{classify, swap_last_two, PermKind};
use super::{result_shape, NodeView};

/// Whether transpose `node` feeds nothing but the `B` operand of one matmul, with a permutation
/// whose last-two-axes swap is a cheaper reorder: then the matmul reads `Bᵀ` instead
/// (`TRANSPOSE_B = 1`), so `Q·Kᵀ` needs no element-by-element 2-D transpose of `K`, only the
/// head split, and the matmul's parallelism runs along the head dimension.
pub fn feeds_transposed_b(graph: &MaseGraph, node: &Node) -> bool {
    let Op::Transpose { perm } = &node.op else { return false };
    let Some(id) = graph.find(&node.name) else { return false };
    let users = graph.users(id);
    let [u] = users.as_slice() else { return false };
    let m = graph.node(*u);
    if !matches!(m.op, Op::Matmul)
        || m.inputs.len() != 2
        || m.inputs[1] != id
        || m.inputs[0] == id
        || perm.len() < 2
    {
        return false;
    }
    // Only when reading Bᵀ makes the transpose cheaper: the identity, a block reorder that moves
    // whole units (several lanes possible) rather than single elements (one lane), or any
    // mappable reorder instead of none.
    let cost = |k: Option<PermKind>| match k {
        Some(PermKind::Identity) => 0,
        Some(PermKind::Block(t)) if t.c > 1 => 1,
        Some(PermKind::Block(_)) => 2,
        None => 3,
    };
    NodeView::new(graph, node)
        .in_shape(0)
        .is_ok_and(|s| cost(classify(&s, &swap_last_two(perm))) < cost(classify(&s, perm)))
}

/// The permutation a transpose node is built with: its own, or the `Bᵀ` one (see
/// [`feeds_transposed_b`]).
pub fn effective_perm(graph: &MaseGraph, node: &Node, perm: &[usize]) -> Vec<usize> {
    if feeds_transposed_b(graph, node) {
        swap_last_two(perm)
    } else {
        perm.to_vec()
    }
}

/// Whether matmul `node` reads its `B` operand transposed (see [`feeds_transposed_b`]).
pub fn matmul_transposed_b(graph: &MaseGraph, node: &Node) -> bool {
    node.inputs.get(1).is_some_and(|b| feeds_transposed_b(graph, graph.node(*b)))
}

/// Shape of the stream a node produces: its result, except for a transpose that feeds a
/// matmul's `Bᵀ`, whose stream is the result with the last two axes swapped back.
pub fn stream_shape(graph: &MaseGraph, node: &Node) -> Result<Vec<usize>> {
    let mut s = result_shape(node)?;
    if feeds_transposed_b(graph, node) {
        let n = s.len();
        s.swap(n - 2, n - 1);
    }
    Ok(s)
}
