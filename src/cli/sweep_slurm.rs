//! `mase sweep … --slurm N [--sbatch "…"]`: the sweep's arguments made absolute and handed to
//! [`mase_sweep::slurm`], which writes the job scripts into `DIR/slurm/` and submits them.

use std::path::Path;

use mase_sweep::slurm::{submit as submit_jobs, SlurmPlan};
use mase_sweep::StepCounts;

use super::sweep::SweepArgs;

fn absolute(p: &Path) -> anyhow::Result<String> {
    Ok(std::path::absolute(p)?.display().to_string())
}

/// `NAME=FILE` with the file made absolute (the jobs may start elsewhere).
fn absolute_named(spec: &str) -> anyhow::Result<String> {
    Ok(match spec.split_once('=') {
        Some((name, file)) => format!("{name}={}", absolute(Path::new(file))?),
        None => spec.to_string(),
    })
}

/// The sweep's arguments every job repeats, paths absolute.
fn job_args(model: &Path, a: &SweepArgs) -> anyhow::Result<Vec<String>> {
    let config =
        a.config.as_deref().ok_or_else(|| anyhow::anyhow!("mase sweep needs --config SWEEP.toml"))?;
    let mut v = vec![absolute(model)?, "--config".into(), absolute(config)?];
    for s in &a.shapes {
        v.extend(["--input-shape".into(), s.clone()]);
    }
    for (flag, specs) in [("--calibrate", &a.calibrate), ("--eval", &a.eval)] {
        for s in specs {
            v.extend([flag.to_string(), absolute_named(s)?]);
        }
    }
    if let Some(l) = &a.labels {
        v.extend(["--labels".into(), absolute(l)?]);
    }
    v.extend(["-j".into(), a.jobs.to_string()]);
    Ok(v)
}

/// Submits the sweep as Slurm jobs and prints their ids.
pub fn submit(model: &Path, a: &SweepArgs, out: &Path, tasks: usize) -> anyhow::Result<()> {
    let sbatch = match &a.sbatch {
        Some(s) => shlex::split(s).ok_or_else(|| {
            anyhow::anyhow!("--sbatch {s:?}: unbalanced quotes (give the options as one shell-quoted string)")
        })?,
        None => Vec::new(),
    };
    let plan = SlurmPlan {
        mase: std::env::current_exe()?,
        args: job_args(model, a)?,
        out_dir: std::path::absolute(out)?,
        tasks,
        steps: StepCounts { verify: a.verify, synth: a.synth, pnr: a.pnr },
        sbatch,
    };
    let jobs = submit_jobs(&plan)?;
    if a.json {
        let v = serde_json::json!({
            "points": jobs.points, "steps": jobs.steps, "collect": jobs.collect,
            "script": jobs.script.display().to_string(), "out": out.display().to_string(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("slurm      points: array job {} ({tasks} tasks)", jobs.points);
        if let Some(s) = &jobs.steps {
            println!("slurm      steps:  array job {s} ({} front points)", plan.steps.ranks());
        }
        println!("slurm      collect: job {} (writes {})", jobs.collect, out.display());
        println!(
            "scripts    {} (run it again to resubmit; finished points and steps are reused)",
            jobs.script.display()
        );
    }
    Ok(())
}
