//! `--pnr K`: the first K points of the front (best accuracy first) are emitted as projects
//! (`DIR/pnr/<id>/`) and placed and routed on a Lattice ECP5 (`mase synth DIR --target ecp5`'s
//! library function, default part), so that each stands with its Fmax and its throughput in
//! inferences per second next to its cycles (`points.csv`, `pnr.json`). A point whose place and
//! route fails is recorded with its error and the others still run.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::eval::Context;
use crate::output::PointResult;
use crate::steps::{StepResult, StepRun};

/// One placed and routed point (its figures zero when it failed); the project's
/// `pnr_ecp5.json` holds the whole report.
pub type Routed = StepResult<Timing>;

/// A routed front point's clock and what it makes of the cycles.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// Achieved Fmax, MHz.
    pub fmax_mhz: f64,
    /// Inferences per second at that clock (the cost model's ii).
    pub inferences_per_s: f64,
    /// Latency at that clock, µs (the latency model's cycles).
    pub latency_us: f64,
    /// Where the critical path starts and ends (instance and component).
    pub critical_path: String,
}

/// Emits, places and routes `points` (as `DIR/pnr/<id>`), each point on its own: one that fails
/// is recorded with its error (`Routed::error`) and the others still run; finished points are
/// reused from their records ([`crate::steps`]).
pub(crate) fn place_and_route(ctx: &Context, points: &[&PointResult], steps: &mut StepRun) -> Vec<Routed> {
    let opts = mase_sim::PnrOptions::default();
    crate::steps::each_point(
        "pnr",
        &format!("{opts:?}"),
        points,
        steps,
        |p, d| route_point(ctx, p, d, &opts),
        |_| Timing::default(),
    )
}

/// Emits, places and routes one point into `proj_dir`.
fn route_point(
    ctx: &Context,
    p: &PointResult,
    proj_dir: &Path,
    opts: &mase_sim::PnrOptions,
) -> Result<Timing> {
    // Held until nextpnr is done: no other writer replaces the project meanwhile.
    let _lock = ctx.emit(&p.spec, proj_dir)?;
    let r = mase_sim::pnr_project(proj_dir, opts, false)?;
    let m = p.metrics.as_ref();
    let (ii, latency) = (m.map(|m| m.ii_cycles as f64), m.map_or(0.0, |m| m.latency_cycles as f64));
    let t = mase_emit::report::real_time(r.fmax_mhz, ii, latency);
    let at = |pl: &mase_sim::pnr::Place| format!("{} ({})", pl.instance, pl.component);
    Ok(Timing {
        fmax_mhz: r.fmax_mhz,
        inferences_per_s: t.inferences_per_s.unwrap_or(0.0),
        latency_us: t.latency_us,
        critical_path: r
            .critical_path
            .as_ref()
            .map(|c| format!("{} → {}", at(&c.start), at(&c.end)))
            .unwrap_or_default(),
    })
}
