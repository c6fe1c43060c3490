//! `--verify K`: the first K points of the front (best accuracy first) are emitted as projects
//! (`DIR/verify/<id>/`) and simulated under Verilator with random valid/ready stalls on the
//! first evaluation inferences; every output element must equal the golden model's, and the
//! measured ii is reported next to the cost model's. A point that cannot be verified (the flow,
//! a Verilator build or run failing) is recorded with its error and the others still run.

use std::path::Path;

use mase_sim::RunConfig;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::eval::Context;
use crate::output::PointResult;
use crate::steps::{StepResult, StepRun};

/// Inferences streamed per verification (the measured ii needs at least 2).
pub const VERIFY_INFERENCES: usize = 4;

/// Stall probability of the drivers and monitors.
pub const VERIFY_STALL_PROB: f64 = 0.25;

/// One verified point (its figures zero and `bit_exact` false when it failed).
pub type Verified = StepResult<Simulated>;

/// What the simulation of a front point measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Simulated {
    /// Every output element equal to the golden model's.
    pub bit_exact: bool,
    /// Differing elements.
    pub mismatches: usize,
    /// Inferences streamed.
    pub inferences: usize,
    /// Measured cycles per inference (with stalls).
    pub measured_ii: Option<f64>,
    /// The cost model's ii.
    pub model_ii: u64,
    /// Measured cycles from the first input beat to the first output.
    pub measured_latency: u64,
}

/// Emits and simulates `points` (as `DIR/verify/<id>`), each point on its own: one that fails
/// is recorded with its error (`Verified::error`) and the others still run; finished points
/// are reused from their records ([`crate::steps`]).
pub(crate) fn verify(ctx: &Context, points: &[&PointResult], steps: &mut StepRun) -> Vec<Verified> {
    let settings = format!("{VERIFY_INFERENCES} inferences, stall probability {VERIFY_STALL_PROB}, seed 1");
    crate::steps::each_point(
        "verify",
        &settings,
        points,
        steps,
        |p, d| verify_point(ctx, p, d),
        |p| Simulated { model_ii: p.metrics.as_ref().map_or(0, |m| m.ii_cycles), ..Simulated::default() },
    )
}

/// Emits and simulates one point into `proj_dir`.
fn verify_point(ctx: &Context, p: &PointResult, proj_dir: &Path) -> Result<Simulated> {
    // Held until the run is done: no other writer replaces the project meanwhile.
    let _lock = ctx.emit(&p.spec, proj_dir)?;
    let proj = mase_sim::load_project(proj_dir)?;
    let n = ctx.eval.len().min(VERIFY_INFERENCES);
    let codes = ctx.input_codes(&proj.design, &ctx.eval[..n])?;
    let cfg = RunConfig { seed: 1, stall_prob: VERIFY_STALL_PROB, ..RunConfig::default() };
    let run = mase_sim::simulate_project(&proj, &codes, &cfg)?;
    let r = &run.report;
    Ok(Simulated {
        bit_exact: r.bit_exact,
        mismatches: r.mismatches,
        inferences: r.inferences,
        measured_ii: r.ii_cycles,
        model_ii: r.model_ii_cycles,
        measured_latency: r.latency_cycles,
    })
}
