//! `mase sweep MODEL --config SWEEP.toml -o DIR …` and `mase sweep merge DIR… -o DIR`: thin
//! wrappers of [`mase_sweep::run_sweep`] and [`mase_sweep::merge`] that print a summary.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use mase_sweep::output::{front_sorted, PointResult};
use mase_sweep::{Data, Shard, SweepConfig, SweepOptions};

/// Options of `mase sweep` (flattened into its command line).
#[derive(clap::Args)]
pub struct SweepArgs {
    /// Sweep configuration: a flow configuration plus [sweep] axes (width, weight_width,
    /// multiplier_budget or target_ii, samples, seed, [sweep.ops.<op>] width).
    #[arg(long, required = true)]
    pub config: Option<PathBuf>,
    /// Full shape of an input with dynamic dimensions, e.g. input=1x8x128.
    #[arg(long = "input-shape", value_name = "NAME=DIMS")]
    pub shapes: Vec<String>,
    /// Calibration data of a graph input, NAME=FILE.npy (repeatable); replaces
    /// [calibration] inputs.
    #[arg(long, value_name = "NAME=FILE")]
    pub calibrate: Vec<String>,
    /// Evaluation data of a graph input, NAME=FILE.npy (repeatable; inferences stacked);
    /// seeded inputs when omitted.
    #[arg(long, value_name = "NAME=FILE")]
    pub eval: Vec<String>,
    /// Class labels of the evaluation rows (.npy of integers, one per row of the first
    /// output): the front then uses top-1 accuracy.
    #[arg(long)]
    pub labels: Option<PathBuf>,
    /// Points evaluated in parallel.
    #[arg(short = 'j', long, default_value_t = 1)]
    pub jobs: usize,
    /// Run only the I-th of N disjoint slices of the points (0-based), e.g. 0/4.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Simulate the K most accurate Pareto points under Verilator (bit-exact, measured ii).
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub verify: usize,
    /// Synthesize the K most accurate Pareto points with Yosys (measured against the
    /// resource model's estimate; a MiniLM-sized layer takes minutes per point).
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub synth: usize,
    /// Place and route the K most accurate Pareto points on an ECP5 (LFE5U-85F-6, as
    /// `mase synth DIR --target ecp5`): Fmax and inferences/s in points.csv.
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub pnr: usize,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// The point cache (default DIR/cache); the shards of one sweep may share one.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Run only front point R's --verify/--synth/--pnr share (0-based, best accuracy first),
    /// keeping the results as records in DIR/steps for a later run to collect; every point must
    /// be in the cache already (how --slurm spreads the steps).
    #[arg(long, value_name = "R", conflicts_with = "shard")]
    pub front_rank: Option<usize>,
    /// Submit the sweep to Slurm instead of running it: an array of N tasks for the points
    /// (shards), one over the front for --verify/--synth/--pnr, then a job collecting the
    /// results into DIR; the scripts are kept in DIR/slurm/ (submit.sh resubmits).
    #[arg(long, value_name = "N", conflicts_with_all = ["shard", "front_rank"])]
    pub slurm: Option<usize>,
    /// Extra sbatch options for every job of --slurm, as one shell-quoted string, e.g.
    /// "--partition=short --time=2:00:00".
    #[arg(long, value_name = "OPTIONS", requires = "slurm")]
    pub sbatch: Option<String>,
}

/// `mase sweep MODEL --config SWEEP.toml -o DIR`.
pub fn sweep(model: &Path, a: &SweepArgs, out: &Path) -> anyhow::Result<()> {
    if let Some(tasks) = a.slurm {
        return super::sweep_slurm::submit(model, a, out, tasks);
    }
    let t = Instant::now();
    let config = SweepConfig::from_file(
        a.config.as_deref().ok_or_else(|| anyhow::anyhow!("mase sweep needs --config SWEEP.toml"))?,
    )?;
    let data = Data {
        input_shapes: super::args::input_shapes(&a.shapes)?,
        calibrate: super::args::calibration_files(&a.calibrate)?,
        eval: super::args::named_files("--eval", &a.eval)?,
        labels: a.labels.clone(),
    };
    let shard = a.shard.as_deref().map(str::parse::<Shard>).transpose()?;
    let opts = SweepOptions {
        model: model.to_path_buf(),
        config,
        data,
        jobs: a.jobs,
        shard,
        verify: a.verify,
        synth: a.synth,
        pnr: a.pnr,
        out_dir: out.to_path_buf(),
        progress: std::io::stderr().is_terminal() && !a.json,
        cache_dir: a.cache.clone(),
        front_rank: a.front_rank,
    };
    let o = mase_sweep::run_sweep(&opts)?;
    let secs = t.elapsed().as_secs_f64();
    if a.json {
        let v = serde_json::json!({
            "points": o.points.len(),
            "evaluated": o.evaluated,
            "cached": o.cached,
            "failed": o.points.iter().filter(|p| p.error.is_some()).count(),
            "pareto": front_sorted(&o.points).iter().map(|p| &p.id).collect::<Vec<_>>(),
            "verified": o.steps.verified,
            "synthesized": o.steps.synthesized,
            "routed": o.steps.routed,
            "steps": o.steps.tally,
            "seconds": secs,
            "out": out.display().to_string(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "sweep      {} points ({} evaluated, {} cached) in {secs:.2} s with -j {}",
            o.points.len(),
            o.evaluated,
            o.cached,
            a.jobs
        );
        print_front(&o.points);
        for v in &o.steps.verified {
            step_line(&o.steps.tally, "verify", &v.id, &v.error, || {
                format!(
                    "bit_exact {} ({} mismatches, {} inferences), ii measured {} vs model {}",
                    v.bit_exact,
                    v.mismatches,
                    v.inferences,
                    v.measured_ii.map(|x| format!("{x:.0}")).unwrap_or_else(|| "n/a".into()),
                    v.model_ii
                )
            });
        }
        for s in &o.steps.synthesized {
            let (m, e) = (&s.measured, &s.estimate);
            step_line(&o.steps.tally, "synth", &s.id, &s.error, || {
                format!(
                    "LUT {} (estimate {}), FF {} ({}), DSP {} ({}), BRAM18 {} ({})",
                    m.lut, e.lut, m.ff, e.ff, m.dsp, e.dsp, m.bram18, e.bram18
                )
            });
        }
        for r in &o.steps.routed {
            step_line(&o.steps.tally, "pnr", &r.id, &r.error, || {
                format!(
                    "{:.1} MHz on LFE5U-85F-6, {:.1} inferences/s, latency {:.2} µs; critical path {}",
                    r.fmax_mhz, r.inferences_per_s, r.latency_us, r.critical_path
                )
            });
        }
        match a.front_rank {
            Some(r) => println!(
                "steps      front point {r}: {} run, {} reused (records in {}/steps)",
                o.steps.tally.ran,
                o.steps.tally.reused,
                out.display()
            ),
            None => println!(
                "wrote      {}/{{points.csv,points.json,pareto.csv,pareto.svg,README.md,configs/}}",
                out.display()
            ),
        }
    }
    // Every point ran and every file is written; the exit status still says what failed.
    let failed: Vec<String> = o
        .steps
        .verified
        .iter()
        .filter_map(|v| v.error.as_ref().map(|_| format!("verify {}", v.id)))
        .chain(o.steps.synthesized.iter().filter_map(|s| s.error.as_ref().map(|_| format!("synth {}", s.id))))
        .chain(o.steps.routed.iter().filter_map(|r| r.error.as_ref().map(|_| format!("pnr {}", r.id))))
        .collect();
    if !failed.is_empty() {
        anyhow::bail!(
            "{} failed ({}); the errors are in {}/{{verify,synth,pnr}}.json and the other points' results are written",
            failed.len(),
            failed.join(", "),
            out.display()
        );
    }
    if let Some(v) = o.steps.verified.iter().find(|v| !v.bit_exact) {
        anyhow::bail!("{}: the RTL differs from the golden model in {} elements", v.id, v.mismatches);
    }
    Ok(())
}

fn print_front(points: &[PointResult]) {
    let failed = points.iter().filter(|p| p.error.is_some()).count();
    if failed > 0 {
        println!("failed     {failed} points (see the error column of points.csv)");
    }
    let front = front_sorted(points);
    println!("pareto     {} points:", front.len());
    for p in front.iter().take(10) {
        let m = p.metrics.as_ref().expect("front points have metrics");
        println!(
            "           {} width {} weight {}{}: accuracy {:.4}, ii {}, {} multipliers, {} memory bits",
            p.id,
            p.spec.width,
            p.spec.weight_width,
            if p.spec.weight_granularity == "per_channel" { " per-channel" } else { "" },
            mase_sweep::pareto::accuracy(m),
            m.ii_cycles,
            m.multipliers,
            m.memory_bits
        );
    }
    if front.len() > 10 {
        println!("           … {} more in pareto.csv", front.len() - 10);
    }
}

/// `mase sweep merge DIR… -o DIR`.
pub fn merge(dirs: &[PathBuf], out: &Path) -> anyhow::Result<()> {
    let doc = mase_sweep::merge(dirs, out)?;
    println!(
        "merged     {} directories: {} of {} selected points",
        dirs.len(),
        doc.points.len(),
        doc.sweep.selected
    );
    if doc.points.len() < doc.sweep.selected {
        eprintln!(
            "warning: {} points are missing (a shard not run or not given); the front covers the merged points only",
            doc.sweep.selected - doc.points.len()
        );
    }
    print_front(&doc.points);
    println!("wrote      {}", out.display());
    Ok(())
}

/// Prints one expensive step's line for a point: its figures and how long it took (or that an
/// earlier run's record gave it), or why it failed.
fn step_line(
    tally: &mase_sweep::StepTally,
    step: &str,
    id: &str,
    error: &Option<String>,
    figures: impl FnOnce() -> String,
) {
    let took = tally.seconds.get(&format!("{step} {id}"));
    match (error, took) {
        (Some(e), _) => println!("{step:<10} {id}: failed: {e}"),
        (None, Some(s)) => println!("{step:<10} {id}: {}, {s:.1} s", figures()),
        (None, None) => println!("{step:<10} {id}: {} (from its record)", figures()),
    }
}
