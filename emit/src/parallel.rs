//! Choosing each hardware node's parallelism so that the slowest stage sets the rate and every
//! other stage uses no more multipliers (then lanes) than it needs to keep up.
//!
//! Rates come from the components' own cost models: a node's cycles per inference is its
//! `ii_cycles` (per harness row: a row, a sequence or a tensor) times the number of such rows in
//! one inference of the graph.

use std::collections::BTreeMap;

use mase_hwlib::{param, Component, Params};
use mase_ir::{NodeId, Result};

use crate::bind::{graph_error, Bindings, Implementation, Par};
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

/// The feasible parallelisms of library node `id`, cheapest first (multipliers, then lanes,
/// then the faster fold).
pub fn candidates(b: &Bindings, id: NodeId) -> Result<Vec<Choice>> {
    let c = b.library(id)?;
    let v = b.view(id);
    let numel: usize = v.in_shape(0)?.iter().product();
    let mut out = Vec::new();
    let mut first_err = None;
    for par in c.candidates(&v)? {
        match b.params(id, par) {
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
        return Err(first_err.unwrap_or_else(|| v.error("no parallelism is valid for this node")));
    }
    out.sort_by_key(|c| {
        (c.multipliers, c.par.p_in.max(c.par.p_out), c.par.p_in * c.par.p_out, c.cycles, c.par)
    });
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

/// The choices open to every hardware node under a configuration: nodes fixed by
/// `[hardware.nodes]` (or EXTERNAL) and the feasible candidates of the others.
#[derive(Debug, Clone)]
pub struct Space {
    /// Nodes whose choice is fixed.
    pub fixed: BTreeMap<NodeId, Choice>,
    /// The other nodes with their candidates, cheapest first.
    pub free: Vec<(NodeId, Vec<Choice>)>,
    /// Rows of the first graph input per inference (for `target_ii_per_row`).
    pub rows: u64,
}

impl Space {
    /// The choices of the bound graph under `cfg` (per-node settings checked).
    pub fn new(b: &Bindings, cfg: &HwConfig) -> Result<Space> {
        let graph = b.graph;
        let mut fixed: BTreeMap<NodeId, Choice> = BTreeMap::new();
        let mut free: Vec<(NodeId, Vec<Choice>)> = Vec::new();
        for name in cfg.nodes.keys() {
            if graph.find(name).is_none() {
                return Err(graph_error(format!(
                    "hardware.nodes.{name}: no node of that name in graph '{}'",
                    graph.name
                )));
            }
        }
        for (id, imp) in b.hardware() {
            let node = graph.node(id);
            let lib = match imp {
                Implementation::External(ext) => {
                    let numel: usize = b.view(id).in_shape(0)?.iter().product();
                    let lanes = ext.manifest.lanes;
                    let cycles = cycles_per_inference(&**ext, &ext.params, numel);
                    let choice =
                        Choice { par: Par::lanes(lanes), cycles, multipliers: ext.manifest.multipliers };
                    fixed.insert(id, choice);
                    continue;
                }
                Implementation::Library(lib) => *lib,
            };
            let mut cands = candidates(b, id)?;
            let fold = cfg.nodes.get(&node.name).and_then(|n| n.fold);
            if let Some(f) = fold {
                let mut offered: Vec<usize> = cands.iter().map(|c| c.par.fold).collect();
                offered.sort_unstable();
                offered.dedup();
                cands.retain(|c| c.par.fold == f);
                if cands.is_empty() {
                    return Err(node.error(format!(
                        "hardware.nodes.{}.fold = {f} is not offered for this node; offered: {offered:?}",
                        node.name
                    )));
                }
            }
            match cfg.nodes.get(&node.name).and_then(|n| n.parallelism.clone()) {
                Some(p) => {
                    let mut par = match p.as_slice() {
                        [i, o] => Par::io(*i, *o),
                        [a] => lib.par_of_one(*a),
                        _ => unreachable!("checked by HwConfig"),
                    };
                    par.fold = fold.unwrap_or(1);
                    let c = cands.iter().find(|c| c.par == par).copied().ok_or_else(|| {
                        let ok: Vec<String> = cands
                            .iter()
                            .filter(|c| c.par.fold == par.fold)
                            .map(|c| format!("[{}, {}]", c.par.p_in, c.par.p_out))
                            .collect();
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
        let rows = graph
            .input_ids()
            .first()
            .and_then(|i| graph.node(*i).out_shape())
            .map(|s| s.iter().product::<usize>() / s.last().copied().unwrap_or(1).max(1))
            .unwrap_or(1) as u64;
        Ok(Space { fixed, free, rows })
    }

    /// Every node's choice at `target` cycles per inference: the fixed ones, and for the others
    /// the cheapest candidate meeting it (the fastest when none does).
    pub fn at(&self, target: u64) -> BTreeMap<NodeId, Choice> {
        let mut chosen = self.fixed.clone();
        for (id, c) in &self.free {
            chosen.insert(*id, pick(c, target));
        }
        chosen
    }

    /// Cycles of the slowest design (every free node at its cheapest candidate), the upper end
    /// of any target search.
    pub fn slowest(&self) -> u64 {
        let fixed_max = self.fixed.values().map(|c| c.cycles).max().unwrap_or(0);
        self.free
            .iter()
            .flat_map(|(_, c)| c.iter().map(|c| c.cycles))
            .max()
            .unwrap_or(1)
            .max(fixed_max)
            .max(1)
    }

    /// Cycles of the fastest design (every free node at its fastest candidate): no target below
    /// it can be met.
    pub fn fastest(&self) -> u64 {
        let fixed_max = self.fixed.values().map(|c| c.cycles).max().unwrap_or(0);
        self.free
            .iter()
            .map(|(_, c)| c.iter().map(|c| c.cycles).min().unwrap_or(0))
            .max()
            .unwrap_or(0)
            .max(fixed_max)
            .max(1)
    }
}

/// Chooses the parallelism of every hardware node of the bound graph under `cfg`.
pub fn select(b: &Bindings, cfg: &HwConfig) -> Result<Selection> {
    let space = Space::new(b, cfg)?;
    let Space { fixed, free, rows } = &space;
    let fixed_max = fixed.values().map(|c| c.cycles).max().unwrap_or(0);
    let (target, mode) = if let Some(t) = cfg.target_ii {
        (t, "target_ii")
    } else if let Some(t) = cfg.target_ii_per_row {
        (t * rows, "target_ii_per_row")
    } else if let Some(budget) = cfg.multiplier_budget {
        let fixed_mults: u64 = fixed.values().map(|c| c.multipliers).sum();
        let total = |t: u64| fixed_mults + free.iter().map(|(_, c)| pick(c, t).multipliers).sum::<u64>();
        let mut hi = space.slowest();
        if total(hi) > budget {
            return Err(graph_error(format!(
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
    Ok(Selection { chosen: space.at(target), target_ii: target, mode })
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
