//! `--synth K`: the first K points of the front (best accuracy first) are emitted as projects
//! (`DIR/synth/<id>/`) and synthesized with Yosys (`mase synth DIR`'s library function), so the
//! resource model's estimates that placed them on the front stand next to a measurement.

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
}

/// Emits and synthesizes `points` under `dir`.
pub fn synthesize(ctx: &Context, points: &[&PointResult], dir: &Path) -> Result<Vec<Synthesized>> {
    let mut out = Vec::new();
    for p in points {
        let proj_dir = dir.join(&p.id);
        // Held until the point's run is done: no other writer replaces the project meanwhile.
        let _lock = ctx.emit(&p.spec, &proj_dir)?;
        let r = mase_sim::synth_project(&proj_dir, false)?;
        out.push(Synthesized {
            id: p.id.clone(),
            project: proj_dir.display().to_string(),
            measured: r.measured,
            estimate: r.estimate,
            synth_s: r.synth_s,
        });
    }
    Ok(out)
}
