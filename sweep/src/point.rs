//! The points of a sweep: the product of the axes in a fixed order (width, weight_width,
//! weight_granularity, rate,
//! then the per-op axes by op name), optionally a seeded subset of it, and the `--shard I/N`
//! slice. A point's index is its position in the whole product, so indices, ids and shards do
//! not depend on how the run was split.

use std::collections::BTreeMap;

use rand::SeedableRng;
use serde::{Deserialize, Serialize};

use crate::config::{Rate, SweepConfig};
use crate::error::{Result, SweepError};

/// One point's settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PointSpec {
    /// Position in the whole product (0-based).
    pub index: usize,
    /// Activation width.
    pub width: u32,
    /// Weight width.
    pub weight_width: u32,
    /// Weight granularity (`per_tensor` or `per_channel`).
    pub weight_granularity: String,
    /// Rate target, when the sweep has a rate axis.
    pub rate: Option<Rate>,
    /// Activation width per mase op (the `[sweep.ops]` axes).
    pub ops: BTreeMap<String, u32>,
}

impl PointSpec {
    /// The point's name in files and tables: `p` and its index, zero-padded to the product's
    /// digits.
    pub fn id(&self, total: usize) -> String {
        let digits = total.saturating_sub(1).to_string().len();
        format!("p{:0digits$}", self.index)
    }
}

/// The configuration spelling of a granularity.
fn granularity_name(g: mase_ir::quant::channel::Granularity) -> &'static str {
    match g {
        mase_ir::quant::channel::Granularity::PerTensor => "per_tensor",
        mase_ir::quant::channel::Granularity::PerChannel => "per_channel",
    }
}

/// Every point of the product, in index order.
pub fn product(cfg: &SweepConfig) -> Vec<PointSpec> {
    let base = &cfg.base.passes.auto_precision;
    let axes = &cfg.axes;
    let widths = axes.width.clone().unwrap_or_else(|| vec![base.width]);
    let wws = axes.weight_width.clone().unwrap_or_else(|| vec![base.weight_width]);
    let grans: Vec<String> = match &axes.weight_granularity {
        Some(g) => g.iter().map(|g| granularity_name(*g).to_string()).collect(),
        None => vec![base.weight_granularity.clone()],
    };
    let rates: Vec<Option<Rate>> = {
        let r = axes.rates();
        if r.is_empty() {
            vec![None]
        } else {
            r.into_iter().map(Some).collect()
        }
    };
    let mut op_combos: Vec<BTreeMap<String, u32>> = vec![BTreeMap::new()];
    for (op, a) in &axes.ops {
        op_combos = op_combos
            .iter()
            .flat_map(|c| {
                a.width.iter().map(move |w| {
                    let mut c = c.clone();
                    c.insert(op.clone(), *w);
                    c
                })
            })
            .collect();
    }
    let mut out = Vec::new();
    for &width in &widths {
        for &weight_width in &wws {
            for weight_granularity in &grans {
                for &rate in &rates {
                    for ops in &op_combos {
                        out.push(PointSpec {
                            index: out.len(),
                            width,
                            weight_width,
                            weight_granularity: weight_granularity.clone(),
                            rate,
                            ops: ops.clone(),
                        });
                    }
                }
            }
        }
    }
    out
}

/// The points the sweep runs: all of the product, or `samples` of them drawn with `seed`
/// (in index order either way).
pub fn selected(cfg: &SweepConfig) -> Vec<PointSpec> {
    let all = product(cfg);
    match cfg.axes.samples {
        Some(n) if n < all.len() => {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(cfg.axes.seed);
            let mut idx = rand::seq::index::sample(&mut rng, all.len(), n).into_vec();
            idx.sort_unstable();
            idx.into_iter().map(|i| all[i].clone()).collect()
        }
        _ => all,
    }
}

/// A `--shard I/N` request: run the selected points whose position among them is `I` modulo
/// `N` (0-based `I`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard (0-based).
    pub index: usize,
    /// Number of shards.
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = SweepError;
    fn from_str(s: &str) -> Result<Shard> {
        let bad = || {
            SweepError::Config(format!(
                "--shard {s}: expected I/N with 0 <= I < N, e.g. 0/4 (I is 0-based, as SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are)"
            ))
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (usize, usize) =
            (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// The points of this shard.
    pub fn slice(&self, points: Vec<PointSpec>) -> Vec<PointSpec> {
        points.into_iter().enumerate().filter(|(k, _)| k % self.count == self.index).map(|(_, p)| p).collect()
    }
}
