//! mase-sweep: design-space sweeps. A sweep runs the flow over the product of precision axes
//! (activation and weight widths, per-op activation widths) and a rate axis (multiplier budget
//! or target ii), measures each point's accuracy with the golden model (the bit-exact model of
//! the RTL) against the float model and its hardware figures with the cost model, and writes
//! the points, their Pareto front, a plot and the `mase flow` command of each point.
//!
//! The library is the interface ([`run_sweep`], [`merge`]); `mase sweep` is a thin wrapper.
//! Modules: [`config`] (`SWEEP.toml`), [`point`] (the product, sampling, shards), [`eval`]
//! (shared preparation and per-point evaluation), [`cache`] (finished points by content hash),
//! [`pareto`], [`output`] (CSV, JSON, README, per-point configs), [`svg`] (the plot),
//! [`verify`] (Verilator runs of front points), [`synth`] (Yosys runs of front points), [`pnr`]
//! (ECP5 place and route of front points), [`steps`] (their records, reruns and spreading over
//! workers), [`slurm`] (a sweep as Slurm jobs), [`run`] (the driver and merge).
//!
//! Resources (LUT, FF, DSP, BRAM) are the resource model's estimates
//! (`mase_hwlib::Component::resources`); `--synth K` measures K front points with Yosys, and
//! `--pnr K` places and routes K front points for their Fmax and inferences per second.

pub mod cache;
pub mod config;
pub mod error;
pub mod eval;
pub mod output;
pub mod pareto;
pub mod pnr;
pub mod point;
pub mod run;
pub mod slurm;
pub mod steps;
pub mod svg;
pub mod synth;
pub mod verify;

pub use config::{Axes, Rate, SweepConfig};
pub use error::{Result, SweepError};
pub use eval::{Context, Data, Metrics};
pub use output::{Document, Meta, PointResult};
pub use point::{PointSpec, Shard};
pub use run::{merge, run_sweep, SweepOptions, SweepOutcome};
pub use steps::{StepCounts, StepResult, StepTally, Steps};
pub use synth::Synthesized;
pub use verify::Verified;
