//! Choosing each hardware node's parallelism so that the slowest stage sets the rate and every
//! other stage uses no more multipliers (then lanes) than it needs to keep up.
//!
//! Rates come from the components' own cost models: a node's cycles per inference is its
//! `ii_cycles` (per harness row: a row, a sequence or a tensor) times the number of such rows in
//! one inference of the graph.

use std::collections::BTreeMap;

use mase_hwlib::{param, Component, Params};
use mase_ir::{MaseGraph, Node, NodeId, Op, Result};

use crate::bind::{self, in_shape, Par, Role};
use crate::config::{HwConfig, DEFAULT_LANES};

/// One feasible parallelism of a node with its cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// The parallelism.
    pub par: Par,
    /// Cycles the node needs per inference at this parallelism.
    pub cycles: u64,
    /// Multipliers it uses.
    pub multipliers: u64,
}

/// Cycles per inference of a component instance whose `data_in_0` carries `numel` elements per
/// inference.
pub fn cycles_per_inference(c: &dyn Component, p: &Params, numel: usize) -> u64 {
    let s = c.streams(p).into_iter().find(|s| s.name == "data_in_0");
    let unit = s.map(|s| s.beats_per_row * s.lanes).unwrap_or(1).max(1);
    c.cost(p).ii_cycles * numel.div_ceil(unit) as u64
}

fn divisors(n: usize, max: usize) -> Vec<usize> {
    (1..=n.min(max)).filter(|d| n.is_multiple_of(*d)).collect()
}

/// Parallelisms worth considering for `node` (before validation by the component).
fn raw_candidates(graph: &MaseGraph, node: &Node) -> Result<Vec<Par>> {
    let shape = in_shape(graph, node, 0)?;
    let cols = *shape.last().unwrap_or(&1);
    Ok(match &node.op {
        Op::Linear { .. } => {
            let out = *bind::out_shape(node)?.last().unwrap_or(&1);
            let mut v = Vec::new();
            for p_in in divisors(cols, 256) {
                for p_out in divisors(out, 256) {
                    if p_in * p_out <= 4096 {
                        v.push(Par { p_in, p_out });
                    }
                }
            }
            v
        }
        // B streams row-major: along K (p_out = 1) when read as Bᵀ, else along M (p_in = 1).
        Op::Matmul if bind::matmul_transposed_b(graph, node) => {
            divisors(cols, 256).into_iter().map(|p| Par { p_in: p, p_out: 1 }).collect()
        }
        Op::Matmul => {
            let m = *bind::out_shape(node)?.last().unwrap_or(&1);
            divisors(m, 256).into_iter().map(|p| Par { p_in: 1, p_out: p }).collect()
        }
        Op::Transpose { perm } => {
            match crate::perm::classify(&shape, &bind::effective_perm(graph, node, perm)) {
                Some(crate::perm::PermKind::Block(t)) if t.c > 1 => {
                    divisors(t.c, 256).into_iter().map(|p| Par { p_in: p, p_out: p }).collect()
                }
                _ => vec![Par { p_in: 1, p_out: 1 }],
            }
        }
        // Element-wise and row ops stream lanes of the last axis in and out; so does any other
        // op bound to a user's module (`hardware.external`).
        Op::Relu
        | Op::Gelu { .. }
        | Op::Softmax { .. }
        | Op::LayerNorm { .. }
        | Op::Add
        | Op::Sub
        | Op::MulScalar { .. }
        | Op::Placeholder
        | Op::Output
        | Op::Constant { .. }
        | Op::Mul
        | Op::Div
        | Op::Pow
        | Op::Sqrt
        | Op::Erf
        | Op::Tanh
        | Op::ReduceMean { .. }
        | Op::Reshape { .. }
        | Op::Flatten { .. }
        | Op::Dropout { .. }
        | Op::Identity
        | Op::Unsqueeze { .. }
        | Op::Squeeze { .. }
        | Op::Concat { .. }
        | Op::Slice { .. }
        | Op::Gather { .. }
        | Op::Cast { .. }
        | Op::Shape { .. } => divisors(cols, 256).into_iter().map(|p| Par { p_in: p, p_out: p }).collect(),
    })
}

/// The feasible parallelisms of a hardware node, cheapest first (multipliers, then lanes).
pub fn candidates(graph: &MaseGraph, node: &Node) -> Result<Vec<Choice>> {
    let c = bind::component_of(node)?;
    let numel: usize = in_shape(graph, node, 0)?.iter().product();
    let mut out = Vec::new();
    let mut first_err = None;
    for par in raw_candidates(graph, node)? {
        match bind::params(graph, node, par) {
            Ok(p) => out.push(Choice {
                par,
                cycles: cycles_per_inference(c, &p, numel),
                multipliers: c.cost(&p).multipliers,
            }),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    if out.is_empty() {
        return Err(first_err.unwrap_or_else(|| node.error("no parallelism is valid for this node")));
    }
    out.sort_by_key(|c| (c.multipliers, c.par.p_in.max(c.par.p_out), c.par.p_in * c.par.p_out, c.par));
    Ok(out)
}

/// The cheapest choice meeting `target` cycles, or the fastest one when none does.
fn pick(cands: &[Choice], target: u64) -> Choice {
    cands.iter().find(|c| c.cycles <= target).copied().unwrap_or_else(|| {
        *cands.iter().min_by_key(|c| (c.cycles, c.multipliers, c.par)).expect("candidates are never empty")
    })
}

/// The choice at the default lane count (the largest lanes ≤ `lanes` the node allows;
/// `lanes × lanes` for a linear).
fn default_choice(cands: &[Choice], lanes: usize) -> Choice {
    *cands
        .iter()
        .filter(|c| c.par.p_in <= lanes && c.par.p_out <= lanes)
        .max_by_key(|c| (c.par.p_in * c.par.p_out, std::cmp::Reverse(c.cycles), std::cmp::Reverse(c.par)))
        .unwrap_or(&cands[0])
}

/// Result of the parallelism choice.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// Chosen parallelism per hardware node.
    pub chosen: BTreeMap<NodeId, Choice>,
    /// The target cycles per inference that drove the choice.
    pub target_ii: u64,
    /// How the target was set (`target_ii`, `multiplier_budget`, `lanes`).
    pub mode: &'static str,
}

/// Chooses the parallelism of every hardware node of `graph` under `cfg`.
pub fn select(graph: &MaseGraph, cfg: &HwConfig) -> Result<Selection> {
    let mut fixed: BTreeMap<NodeId, Choice> = BTreeMap::new();
    let mut free: Vec<(NodeId, Vec<Choice>)> = Vec::new();
    for name in cfg.nodes.keys() {
        if graph.find(name).is_none() {
            return Err(bind::graph_error(format!(
                "hardware.nodes.{name}: no node of that name in graph '{}'",
                graph.name
            )));
        }
    }
    for (id, node) in graph.nodes() {
        if bind::role(graph, node)? != Role::Hardware {
            continue;
        }
        if let Some(ext) = bind::external_of(graph, node, None)? {
            let numel: usize = in_shape(graph, node, 0)?.iter().product();
            let lanes = ext.manifest.lanes;
            let cycles = cycles_per_inference(&*ext, &ext.params, numel);
            fixed.insert(
                id,
                Choice {
                    par: Par { p_in: lanes, p_out: lanes },
                    cycles,
                    multipliers: ext.manifest.multipliers,
                },
            );
            continue;
        }
        let cands = candidates(graph, node)?;
        match cfg.nodes.get(&node.name).and_then(|n| n.parallelism.clone()) {
            Some(p) => {
                let par = match (p.as_slice(), &node.op) {
                    ([a, b], _) => Par { p_in: *a, p_out: *b },
                    ([a], Op::Matmul) => Par { p_in: 1, p_out: *a },
                    ([a], Op::Transpose { .. }) if cands.iter().all(|c| c.par.p_in == 1) => {
                        Par { p_in: 1, p_out: 1 }
                    }
                    ([a], _) => Par { p_in: *a, p_out: *a },
                    _ => unreachable!("checked by HwConfig"),
                };
                let c = cands.iter().find(|c| c.par == par).copied().ok_or_else(|| {
                    let ok: Vec<String> =
                        cands.iter().map(|c| format!("[{}, {}]", c.par.p_in, c.par.p_out)).collect();
                    node.error(format!(
                        "hardware.nodes.{}.parallelism = {p:?} is not valid here; valid: {}",
                        node.name,
                        ok.join(", ")
                    ))
                })?;
                fixed.insert(id, c);
            }
            None => free.push((id, cands)),
        }
    }
    let fixed_max = fixed.values().map(|c| c.cycles).max().unwrap_or(0);
    let rows = graph
        .input_ids()
        .first()
        .and_then(|i| graph.node(*i).out_shape())
        .map(|s| s.iter().product::<usize>() / s.last().copied().unwrap_or(1).max(1))
        .unwrap_or(1) as u64;
    let (target, mode) = if let Some(t) = cfg.target_ii {
        (t, "target_ii")
    } else if let Some(t) = cfg.target_ii_per_row {
        (t * rows, "target_ii_per_row")
    } else if let Some(budget) = cfg.multiplier_budget {
        let fixed_mults: u64 = fixed.values().map(|c| c.multipliers).sum();
        let total = |t: u64| fixed_mults + free.iter().map(|(_, c)| pick(c, t).multipliers).sum::<u64>();
        let mut hi = free
            .iter()
            .flat_map(|(_, c)| c.iter().map(|c| c.cycles))
            .max()
            .unwrap_or(1)
            .max(fixed_max)
            .max(1);
        if total(hi) > budget {
            return Err(bind::graph_error(format!(
                "multiplier_budget = {budget} is below the {} multipliers of the slowest possible design",
                total(hi)
            )));
        }
        let mut lo = 1u64;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if total(mid) <= budget {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        (hi, "multiplier_budget")
    } else {
        let lanes = cfg.lanes.unwrap_or(DEFAULT_LANES);
        let t = free.iter().map(|(_, c)| default_choice(c, lanes).cycles).max().unwrap_or(0).max(fixed_max);
        (t, "lanes")
    };
    let mut chosen = fixed;
    for (id, c) in &free {
        chosen.insert(*id, pick(c, target));
    }
    Ok(Selection { chosen, target_ii: target, mode })
}

/// The lanes of `p`'s stream `name` (`PARALLELISM_DIM_0 × DIM_1` of that port).
pub fn stream_lanes(p: &Params, port: &str) -> usize {
    let d0 = p.get(&format!("{port}_PARALLELISM_DIM_0")).copied().unwrap_or(1);
    let d1 = p.get(&format!("{port}_PARALLELISM_DIM_1")).copied().unwrap_or(1);
    (d0 * d1) as usize
}

/// Elements per beat that `p` uses for `data_in_0`.
pub fn main_lanes(p: &Params) -> usize {
    param(p, "DATA_IN_0_PARALLELISM_DIM_0") as usize
}
