//! Shared pattern-matching helpers of the `raise_*` passes: constants, single users, and the
//! rewrite step that replaces a matched sub-graph by one node.

use crate::error::Result;
use crate::graph::{MaseGraph, NodeId};
use crate::op::Op;
use crate::pass::PassInfo;
use crate::tensor::Tensor;

/// Users of every node, indexed by node id (the output node counts as a user).
pub(crate) fn users_map(g: &MaseGraph) -> Vec<Vec<NodeId>> {
    let mut users = vec![Vec::new(); g.len()];
    for (id, n) in g.nodes() {
        for i in &n.inputs {
            if !users[i.0].contains(&id) {
                users[i.0].push(id);
            }
        }
    }
    users
}

/// The only user of `id`, if it has exactly one (and uses it once).
pub(crate) fn single_user(g: &MaseGraph, users: &[Vec<NodeId>], id: NodeId) -> Option<NodeId> {
    match users[id.0].as_slice() {
        [u] if g.node(*u).inputs.iter().filter(|&&i| i == id).count() == 1 => Some(*u),
        _ => None,
    }
}

/// The tensor a `Constant` node reads.
pub(crate) fn const_tensor(g: &MaseGraph, id: NodeId) -> Option<&Tensor> {
    match &g.node(id).op {
        Op::Constant { tensor } => g.weights.get(tensor),
        _ => None,
    }
}

/// The value of a single-element f32 constant, with its rank.
pub(crate) fn scalar_const(g: &MaseGraph, id: NodeId) -> Option<(f32, usize)> {
    match const_tensor(g, id)? {
        Tensor::F32(a) if a.len() == 1 => a.iter().next().map(|&v| (v, a.ndim())),
        _ => None,
    }
}

/// Rank of a node's result, when its shape is recorded.
pub(crate) fn rank(g: &MaseGraph, id: NodeId) -> Option<usize> {
    g.node(id).out_shape().map(|s| s.len())
}

/// True when `v` equals `want` within a relative tolerance.
pub(crate) fn close(v: f32, want: f64, rel: f64) -> bool {
    ((v as f64) - want).abs() <= rel * want.abs().max(1e-30)
}

/// For a binary node of the given kind whose inputs are `other` and a single-element constant
/// (in either order when `commutative`, else only as the second input), returns `other` and the
/// constant's value. The constant must not raise the rank of the result (its rank is at most
/// the rank of `other`), so the node is an element-wise scaling of `other`.
pub(crate) fn with_scalar(
    g: &MaseGraph,
    id: NodeId,
    is_op: fn(&Op) -> bool,
    commutative: bool,
) -> Option<(NodeId, f32)> {
    let n = g.node(id);
    if !is_op(&n.op) || n.inputs.len() != 2 {
        return None;
    }
    let (a, b) = (n.inputs[0], n.inputs[1]);
    let pick = |other: NodeId, c: NodeId| -> Option<(NodeId, f32)> {
        let (v, r) = scalar_const(g, c)?;
        if const_tensor(g, other).is_some() {
            return None;
        }
        let ok = r == 0 || rank(g, other).is_some_and(|ro| ro >= r);
        ok.then_some((other, v))
    };
    pick(a, b).or_else(|| if commutative { pick(b, a) } else { None })
}

/// The input of the binary node `id` that is not `known`, if `known` is one of its two inputs.
pub(crate) fn other_input(g: &MaseGraph, id: NodeId, known: NodeId) -> Option<NodeId> {
    match g.node(id).inputs.as_slice() {
        [a, b] if *a == known && *b != known => Some(*b),
        [a, b] if *b == known && *a != known => Some(*a),
        _ => None,
    }
}

/// Adds a node computing `op` on `inputs` that takes over every use of `root`; it inherits
/// the root's result metadata and ONNX origin. Named `name` (made unique). The replaced nodes
/// become dead and are dropped by [`MaseGraph::compact`].
pub(crate) fn replace(
    g: &mut MaseGraph,
    root: NodeId,
    name: &str,
    op: Op,
    inputs: Vec<NodeId>,
) -> Result<NodeId> {
    let results = g.node(root).meta.common.results.clone();
    let origin = g.node(root).origin.clone();
    let name = g.fresh_name(name);
    let id = g.add_node(name, op, inputs)?;
    let n = g.node_mut(id);
    n.meta.common.results = results;
    n.origin = origin;
    g.replace_all_uses(root, id);
    Ok(id)
}

/// `name` with a trailing `_<suffix>` (any of `suffixes`, case-insensitive) removed, for naming
/// a raised node after the node it replaces.
pub(crate) fn stem<'a>(name: &'a str, suffixes: &[&str]) -> &'a str {
    for s in suffixes {
        let n = name.len();
        if n > s.len() + 1
            && name.get(n - s.len()..).is_some_and(|t| t.eq_ignore_ascii_case(s))
            && name.as_bytes()[n - s.len() - 1] == b'_'
        {
            return &name[..n - s.len() - 1];
        }
    }
    name
}

/// The input of `id` when `id` is a one-input node whose op passes `is_op` and that input has no
/// other user (`None` otherwise).
pub(crate) fn sole_input(
    g: &MaseGraph,
    users: &[Vec<NodeId>],
    id: NodeId,
    is_op: impl Fn(&Op) -> bool,
) -> Option<NodeId> {
    let node = g.node(id);
    let [input] = node.inputs.as_slice() else { return None };
    if !is_op(&node.op) {
        return None;
    }
    single_user(g, users, *input)?;
    Some(*input)
}

/// The loop of every `raise_*` pass: `raise_one` rewrites one match in place (false when none
/// is left), after which the graph is compacted, dropping the replaced nodes so the next search
/// does not see them. The info reports `raised`, the number of rewrites.
pub(crate) fn raise_all(
    mut g: MaseGraph,
    mut raise_one: impl FnMut(&mut MaseGraph) -> Result<bool>,
) -> Result<(MaseGraph, PassInfo)> {
    let mut count = 0usize;
    while raise_one(&mut g)? {
        g.compact()?;
        count += 1;
    }
    Ok((g, PassInfo::from_iter([("raised".to_string(), count.into())])))
}
