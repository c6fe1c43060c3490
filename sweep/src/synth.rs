//! `--synth K`: the first K points of the front (best accuracy first) are emitted as projects
//! (`DIR/synth/<id>/`) and synthesized with Yosys (`mase synth DIR`'s library function), so the
//! resource model's estimates that placed them on the front stand next to a measurement. A
//! point whose synthesis fails is recorded with its error and the others still run.

use std::path::Path;

use mase_hwlib::Resources;
use serde::Serialize;

use crate::error::Result;
use crate::eval::Context;
use crate::output::PointResult;

/// One synthesized point.
#[derive(Debug, Clone, Serialize)]
pub struct Synthesized {
    /// The point.
    pub id: String,
    /// The project synthesized.
    pub project: String,
    /// Yosys' counts for the whole design.
    pub measured: Resources,
    /// The resource model's estimate (the figures the sweep ranked the point by).
    pub estimate: Resources,
    /// Seconds Yosys took.
    pub synth_s: f64,
    /// Why the point could not be synthesized (`measured` is then all zero).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Emits and synthesizes `points` under `dir`, each point on its own: one that fails is
/// recorded with its error (`Synthesized::error`) and the others still run.
pub fn synthesize(ctx: &Context, points: &[&PointResult], dir: &Path) -> Vec<Synthesized> {
    crate::output::each_point(
        points,
        dir,
        |p, d| synthesize_point(ctx, p, d),
        |p, project, error| Synthesized {
            id: p.id.clone(),
            project,
            measured: Resources::default(),
            estimate: p
                .metrics
                .as_ref()
                .map(|m| Resources { lut: m.lut, ff: m.ff, dsp: m.dsp, bram18: m.bram18, lutram: m.lutram })
                .unwrap_or_default(),
            synth_s: 0.0,
            error: Some(error),
        },
    )
}

/// Emits and synthesizes one point into `proj_dir`.
fn synthesize_point(ctx: &Context, p: &PointResult, proj_dir: &Path) -> Result<Synthesized> {
    // Held until Yosys is done: no other writer replaces the project meanwhile.
    let _lock = ctx.emit(&p.spec, proj_dir)?;
    let r = mase_sim::synth_project(proj_dir, false)?;
    Ok(Synthesized {
        id: p.id.clone(),
        project: proj_dir.display().to_string(),
        measured: r.measured,
        estimate: r.estimate,
        synth_s: r.synth_s,
        error: None,
    })
}
