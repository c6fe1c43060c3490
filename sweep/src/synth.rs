//! `--synth K`: the first K points of the front (best accuracy first) are emitted as projects
//! (`DIR/synth/<id>/`) and synthesized with Yosys (`mase synth DIR`'s library function), so the
//! resource model's estimates that placed them on the front stand next to a measurement. A
//! point whose synthesis fails is recorded with its error and the others still run.

use std::path::Path;

use mase_hwlib::Resources;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::eval::Context;
use crate::output::PointResult;
use crate::steps::{StepResult, StepRun};

/// One synthesized point (`measured` all zero when it failed).
pub type Synthesized = StepResult<SynthCounts>;

/// Yosys' counts of a front point next to the estimate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SynthCounts {
    /// Yosys' counts for the whole design.
    pub measured: Resources,
    /// The resource model's estimate (the figures the sweep ranked the point by).
    pub estimate: Resources,
}

/// Emits and synthesizes `points` (as `DIR/synth/<id>`), each point on its own: one that fails
/// is recorded with its error (`Synthesized::error`) and the others still run; finished points
/// are reused from their records ([`crate::steps`]).
pub(crate) fn synthesize(ctx: &Context, points: &[&PointResult], steps: &mut StepRun) -> Vec<Synthesized> {
    crate::steps::each_point(
        "synth",
        "yosys",
        points,
        steps,
        |p, d| synthesize_point(ctx, p, d),
        |p| SynthCounts {
            measured: Resources::default(),
            estimate: p
                .metrics
                .as_ref()
                .map(|m| Resources { lut: m.lut, ff: m.ff, dsp: m.dsp, bram18: m.bram18, lutram: m.lutram })
                .unwrap_or_default(),
        },
    )
}

/// Emits and synthesizes one point into `proj_dir`.
fn synthesize_point(ctx: &Context, p: &PointResult, proj_dir: &Path) -> Result<SynthCounts> {
    // Held until Yosys is done: no other writer replaces the project meanwhile.
    let _lock = ctx.emit(&p.spec, proj_dir)?;
    let r = mase_sim::synth_project(proj_dir, false)?;
    Ok(SynthCounts { measured: r.measured, estimate: r.estimate })
}
