//! `--verify K`: the first K points of the front (best accuracy first) are emitted as projects
//! (`DIR/verify/<id>/`) and simulated under Verilator with random valid/ready stalls on the
//! first evaluation inferences; every output element must equal the golden model's, and the
//! measured ii is reported next to the cost model's. A point that cannot be verified (the flow,
//! a Verilator build or run failing) is recorded with its error and the others still run.

use std::path::Path;

use mase_sim::RunConfig;
use serde::Serialize;

use crate::error::Result;
use crate::eval::Context;
use crate::output::PointResult;

/// Inferences streamed per verification (the measured ii needs at least 2).
pub const VERIFY_INFERENCES: usize = 4;

/// Stall probability of the drivers and monitors.
pub const VERIFY_STALL_PROB: f64 = 0.25;

/// One verified point.
#[derive(Debug, Clone, Serialize)]
pub struct Verified {
    /// The point.
    pub id: String,
    /// The project simulated.
    pub project: String,
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
    /// Why the point could not be verified (its figures are then zero and `bit_exact` false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Emits and simulates `points` under `dir`, each point on its own: one that fails is recorded
/// with its error (`Verified::error`) and the others still run.
pub fn verify(ctx: &Context, points: &[&PointResult], dir: &Path) -> Vec<Verified> {
    crate::output::each_point(
        points,
        dir,
        |p, d| verify_point(ctx, p, d),
        |p, project, error| Verified {
            id: p.id.clone(),
            project,
            bit_exact: false,
            mismatches: 0,
            inferences: 0,
            measured_ii: None,
            model_ii: p.metrics.as_ref().map_or(0, |m| m.ii_cycles),
            measured_latency: 0,
            error: Some(error),
        },
    )
}

/// Emits and simulates one point into `proj_dir`.
fn verify_point(ctx: &Context, p: &PointResult, proj_dir: &Path) -> Result<Verified> {
    // Held until the run is done: no other writer replaces the project meanwhile.
    let _lock = ctx.emit(&p.spec, proj_dir)?;
    let proj = mase_sim::load_project(proj_dir)?;
    let n = ctx.eval.len().min(VERIFY_INFERENCES);
    let codes = ctx.input_codes(&proj.design, &ctx.eval[..n])?;
    let cfg = RunConfig { seed: 1, stall_prob: VERIFY_STALL_PROB, ..RunConfig::default() };
    let run = mase_sim::simulate_project(&proj, &codes, &cfg)?;
    let r = &run.report;
    Ok(Verified {
        id: p.id.clone(),
        project: proj_dir.display().to_string(),
        bit_exact: r.bit_exact,
        mismatches: r.mismatches,
        inferences: r.inferences,
        measured_ii: r.ii_cycles,
        model_ii: r.model_ii_cycles,
        measured_latency: r.latency_cycles,
        error: None,
    })
}
