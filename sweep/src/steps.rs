//! The expensive steps of a sweep's front (`--verify K`, `--synth K`, `--pnr K`): which front
//! points each step takes, and each finished result kept as a record
//! `DIR/steps/<step>-<id>.json` under the point's content key. A rerun (after a killed worker or
//! a cancelled job) redoes only the records that are missing, and the front points of one sweep
//! can be spread over processes or cluster jobs (`SweepOptions::front_rank`) whose records a last
//! run collects into `verify.json`, `synth.json` and `pnr.json`. A step that fails is reported
//! but not recorded, so a rerun tries it again.
//!
//! Records hold no wall times and name projects relative to the sweep directory, so the files
//! collected from them are the same bytes wherever and however the steps ran.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::cache::{point_key, Key};
use crate::error::{io, Result};
use crate::output::PointResult;

/// How many front points (best accuracy first) each expensive step takes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StepCounts {
    /// Points simulated under Verilator.
    pub verify: usize,
    /// Points synthesized with Yosys.
    pub synth: usize,
    /// Points placed and routed on an ECP5.
    pub pnr: usize,
}

impl StepCounts {
    /// Front ranks with at least one step: ranks `0..ranks()` (fewer if the front is smaller).
    pub fn ranks(&self) -> usize {
        self.verify.max(self.synth).max(self.pnr)
    }
}

/// What the steps of one run did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StepTally {
    /// Steps run in this run (finished or failed).
    pub ran: usize,
    /// Steps whose record an earlier run (or another worker) left.
    pub reused: usize,
    /// Wall seconds of each step run here, by `"<step> <point id>"`.
    pub seconds: BTreeMap<String, f64>,
}

/// One front point's result of an expensive step: its figures `F`, or why it has none. It reads
/// as its figures (`verified.bit_exact`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepResult<F> {
    /// The point.
    pub id: String,
    /// The project the step ran on, relative to the sweep directory (`<step>/<id>`).
    pub project: String,
    /// The step's figures; when it failed, zero apart from what the sweep knew beforehand.
    #[serde(flatten)]
    pub figures: F,
    /// Why the step failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl<F> std::ops::Deref for StepResult<F> {
    type Target = F;
    fn deref(&self) -> &F {
        &self.figures
    }
}

/// The expensive steps' results of a run, front points best accuracy first, and what the steps
/// did.
#[derive(Debug, Clone, Default)]
pub struct Steps {
    /// `--verify`: the simulated points.
    pub verified: Vec<crate::Verified>,
    /// `--synth`: the synthesized points.
    pub synthesized: Vec<crate::Synthesized>,
    /// `--pnr`: the placed and routed points.
    pub routed: Vec<crate::pnr::Routed>,
    /// Steps run here, or reused from their records.
    pub tally: StepTally,
}

/// A finished step's figures under the key they were computed for.
#[derive(Serialize, Deserialize)]
struct Record<T> {
    key: String,
    result: T,
}

/// The steps of one run: where they keep their projects and records, and what they did.
pub(crate) struct StepRun<'a> {
    /// The sweep's output directory.
    pub out_dir: &'a Path,
    /// The sweep's content key ([`crate::output::Meta::key`]).
    pub sweep_key: &'a str,
    /// What the steps did so far.
    pub tally: StepTally,
}

impl StepRun<'_> {
    fn record_path(&self, step: &str, id: &str) -> PathBuf {
        self.out_dir.join("steps").join(format!("{step}-{id}.json"))
    }
}

/// A record's key: the point's content key, the step and the step's fixed settings.
fn record_key(sweep_key: &str, step: &str, settings: &str, p: &PointResult) -> String {
    Key::default().field(point_key(sweep_key, &p.spec)).field(step).field(settings).hex()
}

fn read_record<T: DeserializeOwned>(path: &Path, key: &str) -> Option<T> {
    let text = std::fs::read_to_string(path).ok()?;
    let r: Record<T> = serde_json::from_str(&text).ok()?;
    (r.key == key).then_some(r.result)
}

/// Writes a record whole or not at all (written aside, then renamed over the final name), so a
/// worker killed while writing leaves no half record for a rerun to trust.
fn write_record<T: Serialize>(path: &Path, key: &str, result: &T) -> Result<()> {
    let dir = path.parent().expect("records live in DIR/steps");
    std::fs::create_dir_all(dir).map_err(io("creating", dir))?;
    let text =
        serde_json::to_string_pretty(&Record { key: key.to_string(), result }).expect("records serialize");
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&tmp, text + "\n").map_err(io("writing", &tmp))?;
    std::fs::rename(&tmp, path).map_err(io("renaming", &tmp))
}

/// Runs `step` on each of `points` in its own project directory `DIR/<step>/<id>`, reusing the
/// records of finished ones: a point whose step fails gets the figures `failed(point)` and its
/// error, and the others still run.
pub(crate) fn each_point<F: Serialize + DeserializeOwned>(
    step: &str,
    settings: &str,
    points: &[&PointResult],
    steps: &mut StepRun,
    run: impl Fn(&PointResult, &Path) -> Result<F>,
    failed: impl Fn(&PointResult) -> F,
) -> Vec<StepResult<F>> {
    points
        .iter()
        .map(|p| {
            let project = format!("{step}/{}", p.id);
            let result =
                |figures, error| StepResult { id: p.id.clone(), project: project.clone(), figures, error };
            let record = steps.record_path(step, &p.id);
            let key = record_key(steps.sweep_key, step, settings, p);
            if let Some(r) = read_record(&record, &key) {
                steps.tally.reused += 1;
                return result(r, None);
            }
            steps.tally.ran += 1;
            let t = Instant::now();
            let done = run(p, &steps.out_dir.join(&project))
                .and_then(|r| write_record(&record, &key, &r).map(|()| r));
            steps.tally.seconds.insert(format!("{step} {}", p.id), t.elapsed().as_secs_f64());
            match done {
                Ok(r) => result(r, None),
                Err(e) => result(failed(p), Some(e.to_string())),
            }
        })
        .collect()
}
