//! A sweep as Slurm jobs (`mase sweep … --slurm N`): a job array of N tasks evaluating the
//! points (task I is shard I/N, every shard caching into the sweep's one cache), then a job
//! array spreading the expensive steps over the front (task R runs front point R's `--verify`,
//! `--synth` and `--pnr` share, [`crate::steps`]), then one job collecting everything into the
//! sweep directory, each after the one before has succeeded. The scripts go to `DIR/slurm/`
//! and `DIR/slurm/submit.sh` submits the chain (what [`submit`] runs), so a user can read and
//! resubmit it; on a shared filesystem a resubmitted sweep reuses every finished point and
//! step. Task logs go to `DIR/slurm/logs/`, each the `--json` summary of its run.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{io, Result, SweepError};
use crate::steps::StepCounts;

/// What to submit.
#[derive(Debug, Clone)]
pub struct SlurmPlan {
    /// The `mase` executable the jobs run (absolute).
    pub mase: PathBuf,
    /// The sweep's own arguments after `mase sweep`: the model, `--config` and data options and
    /// `-j`, paths absolute (the jobs add the shard, cache, steps, `--json` and `-o`).
    pub args: Vec<String>,
    /// The sweep's output directory (absolute).
    pub out_dir: PathBuf,
    /// Array tasks evaluating the points (at least 1).
    pub tasks: usize,
    /// The expensive steps and how many front points each takes.
    pub steps: StepCounts,
    /// Extra `sbatch` options given to every job (partition, account, time limit, …).
    pub sbatch: Vec<String>,
}

/// The submitted jobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submitted {
    /// The array evaluating the points.
    pub points: String,
    /// The array running the expensive steps (none without steps).
    pub steps: Option<String>,
    /// The job collecting the results into the sweep directory.
    pub collect: String,
    /// The script that submitted them (`DIR/slurm/submit.sh`).
    pub script: PathBuf,
}

/// `s` as one word of a POSIX shell command.
fn quote(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn words(ws: &[String]) -> String {
    ws.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

impl SlurmPlan {
    fn path(&self, p: &Path) -> String {
        quote(&p.display().to_string())
    }

    /// `exec mase sweep ARGS …` as the jobs run it: `extra` are shell words, already quoted.
    fn sweep_line(&self, with_steps: bool, extra: &str) -> String {
        let mut a = self.args.clone();
        if with_steps {
            for (flag, k) in
                [("--verify", self.steps.verify), ("--synth", self.steps.synth), ("--pnr", self.steps.pnr)]
            {
                if k > 0 {
                    a.extend([flag.to_string(), k.to_string()]);
                }
            }
        }
        a.extend([
            "--json".to_string(),
            "--cache".to_string(),
            self.out_dir.join("cache").display().to_string(),
        ]);
        format!("exec {} sweep {} {extra}\n", self.path(&self.mase), words(&a))
    }

    fn script(&self, what: &str, line: String) -> String {
        format!(
            "#!/bin/sh\n# {what}\n# Written by `mase sweep --slurm {}`; submitted by submit.sh.\n{line}",
            self.tasks
        )
    }

    /// The scripts, by file name.
    fn scripts(&self) -> Vec<(&'static str, String)> {
        let out = self.out_dir.display().to_string();
        let shards = quote(&format!("{out}/shards/"));
        let n = self.tasks;
        let mut v = vec![(
            "points.sh",
            self.script(
                &format!("Array task I of 0..{n}: shard I/{n} of the sweep's points, into shards/I (points cached in ../cache)."),
                self.sweep_line(false, &format!("--shard \"$SLURM_ARRAY_TASK_ID/{n}\" -o {shards}\"$SLURM_ARRAY_TASK_ID\"")),
            ),
        )];
        if self.steps.ranks() > 0 {
            v.push((
                "steps.sh",
                self.script(
                    "Array task R: the expensive steps of front point R (best accuracy first), kept as records in ../steps.",
                    self.sweep_line(true, &format!("--front-rank \"$SLURM_ARRAY_TASK_ID\" -o {}", quote(&out))),
                ),
            ));
        }
        v.push((
            "collect.sh",
            self.script(
                "The sweep's files from the cached points and the steps' records.",
                self.sweep_line(true, &format!("-o {}", quote(&out))),
            ),
        ));
        v.push(("submit.sh", self.submit_script()));
        v
    }

    /// `submit.sh`: the chain of `sbatch` calls, each job after the one before succeeded (a
    /// failed or cancelled job cancels the ones waiting on it).
    fn submit_script(&self) -> String {
        let extra = if self.sbatch.is_empty() { String::new() } else { format!(" {}", words(&self.sbatch)) };
        let mut s = String::new();
        let _ = writeln!(s, "#!/bin/sh");
        let _ = writeln!(
            s,
            "# Submits the sweep in {} as Slurm jobs; run it again to resubmit",
            self.out_dir.display()
        );
        let _ = writeln!(s, "# (finished points and steps are reused). Prints the job ids.");
        let _ = writeln!(s, "set -e");
        let _ = writeln!(s, "cd {}", self.path(&self.out_dir.join("slurm")));
        let _ = writeln!(s, "mkdir -p logs");
        let _ = writeln!(s, "submit() {{ id=$(sbatch --parsable \"$@\"); echo \"${{id%%;*}}\"; }}");
        let _ = writeln!(
            s,
            "points=$(submit --job-name=mase-sweep-points --array=0-{} --output=logs/points-%A_%a.out{extra} points.sh)",
            self.tasks - 1
        );
        let _ = writeln!(s, "echo \"points $points\"");
        let after = "--kill-on-invalid-dep=yes --dependency=afterok:";
        let mut before = "$points";
        if self.steps.ranks() > 0 {
            let _ = writeln!(
                s,
                "steps=$(submit --job-name=mase-sweep-steps --array=0-{} --output=logs/steps-%A_%a.out {after}{before}{extra} steps.sh)",
                self.steps.ranks() - 1
            );
            let _ = writeln!(s, "echo \"steps $steps\"");
            before = "$steps";
        }
        let _ = writeln!(
            s,
            "collect=$(submit --job-name=mase-sweep-collect --output=logs/collect-%j.out {after}{before}{extra} collect.sh)"
        );
        let _ = writeln!(s, "echo \"collect $collect\"");
        s
    }

    /// Writes the scripts into `DIR/slurm/` (replacing earlier ones) and returns `submit.sh`.
    pub fn write_scripts(&self) -> Result<PathBuf> {
        if self.tasks == 0 {
            return Err(SweepError::Config("--slurm N: N must be at least 1".into()));
        }
        let dir = self.out_dir.join("slurm");
        std::fs::create_dir_all(&dir).map_err(io("creating", &dir))?;
        for (name, text) in self.scripts() {
            let p = dir.join(name);
            std::fs::write(&p, text).map_err(io("writing", &p))?;
            make_executable(&p)?;
        }
        Ok(dir.join("submit.sh"))
    }
}

#[cfg(unix)]
fn make_executable(p: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).map_err(io("setting the mode of", p))
}

#[cfg(not(unix))]
fn make_executable(_: &Path) -> Result<()> {
    Ok(())
}

/// Writes the scripts and runs `submit.sh`: the jobs are queued when this returns.
pub fn submit(plan: &SlurmPlan) -> Result<Submitted> {
    let script = plan.write_scripts()?;
    let out = Command::new("sh").arg(&script).output().map_err(io("running", &script))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let hint = if stderr.contains("sbatch: not found") || stderr.contains("sbatch: command not found") {
            " (no `sbatch` on PATH: submit from a Slurm login node)"
        } else {
            ""
        };
        return Err(SweepError::Config(format!(
            "{} failed{hint}: {}{}",
            script.display(),
            stdout.trim(),
            stderr.trim()
        )));
    }
    let id = |job: &str| {
        stdout.lines().find_map(|l| l.strip_prefix(job).and_then(|r| r.strip_prefix(' '))).map(str::to_string)
    };
    let missing =
        |job| SweepError::Config(format!("{}: no {job} job id in its output: {stdout}", script.display()));
    Ok(Submitted {
        points: id("points").ok_or_else(|| missing("points"))?,
        steps: id("steps"),
        collect: id("collect").ok_or_else(|| missing("collect"))?,
        script,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(steps: StepCounts) -> SlurmPlan {
        SlurmPlan {
            mase: "/opt/mase bin/mase".into(),
            args: vec!["/m/model.onnx".into(), "--config".into(), "/m/S.toml".into()],
            out_dir: "/scratch/sw".into(),
            tasks: 3,
            steps,
            sbatch: vec!["--partition=gpu".into(), "--time=1:00:00".into()],
        }
    }

    #[test]
    fn the_chain_waits_on_each_stage_and_quotes_paths_and_skips_absent_steps() {
        let s: std::collections::BTreeMap<_, _> =
            plan(StepCounts { verify: 2, synth: 1, pnr: 0 }).scripts().into_iter().collect();
        let submit = &s["submit.sh"];
        assert!(
            submit.contains(
                "--array=0-2 --output=logs/points-%A_%a.out --partition=gpu --time=1:00:00 points.sh"
            ),
            "{submit}"
        );
        assert!(submit.contains("--array=0-1 --output=logs/steps-%A_%a.out --kill-on-invalid-dep=yes --dependency=afterok:$points"), "{submit}");
        assert!(
            submit.contains("--dependency=afterok:$steps --partition=gpu --time=1:00:00 collect.sh"),
            "{submit}"
        );
        assert!(s["points.sh"].contains("exec '/opt/mase bin/mase' sweep /m/model.onnx --config /m/S.toml --json --cache /scratch/sw/cache --shard \"$SLURM_ARRAY_TASK_ID/3\" -o /scratch/sw/shards/\"$SLURM_ARRAY_TASK_ID\""), "{}", s["points.sh"]);
        assert!(!s["points.sh"].contains("--verify"), "the points' tasks run no steps");
        assert!(s["steps.sh"].contains("--verify 2 --synth 1 --json"), "{}", s["steps.sh"]);
        let rank = "--front-rank \"$SLURM_ARRAY_TASK_ID\" -o /scratch/sw";
        assert!(s["steps.sh"].contains(rank), "{}", s["steps.sh"]);

        // Without steps the collecting job follows the points.
        let s: std::collections::BTreeMap<_, _> = plan(StepCounts::default()).scripts().into_iter().collect();
        let submit = &s["submit.sh"];
        assert!(!s.contains_key("steps.sh"));
        assert!(submit.contains("afterok:$points --partition=gpu --time=1:00:00 collect.sh"), "{submit}");
    }

    #[test]
    fn quoting_survives_the_shell() {
        for w in ["plain", "with space", "it's", "$HOME", ""] {
            let out = Command::new("sh").arg("-c").arg(format!("printf %s {}", quote(w))).output().unwrap();
            assert_eq!(String::from_utf8_lossy(&out.stdout), w);
        }
    }
}
