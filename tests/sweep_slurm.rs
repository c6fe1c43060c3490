//! `mase sweep --slurm` on a real single-node Slurm cluster (Debian's slurm-wlm and munge,
//! started here with a generated `slurm.conf` in a temporary directory): the fixture classifier
//! swept with `--verify 2 --synth 1` as a 3-task array, then the steps' array and the collecting
//! job, gives `points.csv`, `pareto.csv`, `verify.json` and `synth.json` byte-identical to the
//! local `-j 1` run. Then a step task is cancelled while it runs (`scancel`), which cancels the
//! jobs waiting on it; resubmitting completes the same files, evaluating no point again and
//! running only the steps whose records the cancelled run did not leave.
//!
//! Starting the daemons needs root and the Slurm and munge binaries; without them the test says
//! so and passes, except under `CI=true`, where `.ci/run` installs them and a missing cluster is
//! a failure.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{classifier_sweep_args, stdout_json, CLASSIFIER_AXES};

/// A single-node cluster whose daemons stop when it is dropped.
struct Cluster {
    dir: tempfile::TempDir,
    daemons: Vec<Child>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {cmd}"))
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl Cluster {
    /// Starts munged, slurmctld and slurmd, or says why it cannot.
    fn start() -> Result<Cluster, String> {
        for cmd in ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel"] {
            if !have(cmd) {
                return Err(format!("`{cmd}` not found (apt-get install slurm-wlm munge)"));
            }
        }
        if unsafe { libc::geteuid() } != 0 {
            return Err("the Slurm daemons need root".into());
        }
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for sub in ["state", "spool", "log", "munge"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        // A fresh munge key of our own: the daemons and clients here share it through the socket.
        let key: Vec<u8> = (0..1024u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        let key_file = d.join("munge/munge.key");
        std::fs::write(&key_file, key).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let socket = d.join("munge/munge.sock");
        // The node's name as slurmd finds it: the short host name.
        let host =
            std::fs::read_to_string("/proc/sys/kernel/hostname").map_err(|e| format!("host name: {e}"))?;
        let host = host.trim().split('.').next().unwrap_or_default();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let p = |s: &str| d.join(s).display().to_string();
        let conf = format!(
            "ClusterName=mase-test\nSlurmctldHost={host}(127.0.0.1)\nSlurmUser=root\nSlurmdUser=root\n\
             AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={sock}\n\
             StateSaveLocation={state}\nSlurmdSpoolDir={spool}\n\
             SlurmctldPidFile={log}/ctld.pid\nSlurmdPidFile={log}/d.pid\n\
             SlurmctldLogFile={log}/ctld.log\nSlurmdLogFile={log}/d.log\n\
             SlurmctldPort={ctld_port}\nSlurmdPort={d_port}\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\n\
             SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
             MpiDefault=none\nReturnToService=2\nSchedulerParameters=sched_interval=2\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=1000 State=UNKNOWN\n\
             PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP\n",
            sock = socket.display(),
            state = p("state"),
            spool = p("spool"),
            log = p("log"),
            ctld_port = free_port(),
            d_port = free_port(),
        );
        std::fs::write(d.join("slurm.conf"), conf).unwrap();
        let spawn = |cmd: &mut Command| cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn();
        let mut daemons = Vec::new();
        let munged = spawn(
            Command::new("munged")
                .args(["--foreground", "--force", "--key-file"])
                .arg(&key_file)
                .arg("--socket")
                .arg(&socket)
                .arg("--pid-file")
                .arg(d.join("munge/munged.pid"))
                .arg("--log-file")
                .arg(d.join("munge/munged.log"))
                .arg("--seed-file")
                .arg(d.join("munge/seed")),
        );
        daemons.push(munged.map_err(|e| format!("munged: {e}"))?);
        let mut cluster = Cluster { dir, daemons };
        cluster.wait_for(|| socket.exists(), "munged's socket")?;
        for daemon in ["slurmctld", "slurmd"] {
            let child = spawn(Command::new(daemon).arg("-D").envs(cluster.env()));
            cluster.daemons.push(child.map_err(|e| format!("{daemon}: {e}"))?);
        }
        cluster.wait_for(
            || {
                let out = Command::new("sinfo").args(["-h", "-o", "%t"]).envs(cluster.env()).output();
                out.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
            },
            "the node to come up idle",
        )?;
        Ok(cluster)
    }

    /// The environment every Slurm client (and the jobs, which inherit it) needs.
    fn env(&self) -> Vec<(&'static str, PathBuf)> {
        vec![("SLURM_CONF", self.dir.path().join("slurm.conf"))]
    }

    fn wait_for(&self, mut ready: impl FnMut() -> bool, what: &str) -> Result<(), String> {
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(60) {
            if ready() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let log = |f: &str| std::fs::read_to_string(self.dir.path().join("log").join(f)).unwrap_or_default();
        Err(format!(
            "timed out waiting for {what}\nslurmctld:\n{}\nslurmd:\n{}",
            log("ctld.log"),
            log("d.log")
        ))
    }

    /// Jobs of these ids still queued or running.
    fn queued(&self, ids: &[&str]) -> Vec<String> {
        let out = Command::new("squeue")
            .args(["-h", "-o", "%i %t", "-j", &ids.join(",")])
            .envs(self.env())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
    }

    /// Waits until none of the jobs is queued or running.
    fn wait_done(&self, ids: &[&str]) {
        let t = Instant::now();
        while !self.queued(ids).is_empty() {
            assert!(
                t.elapsed() < Duration::from_secs(900),
                "jobs {ids:?} still queued: {:?}",
                self.queued(ids)
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for d in self.daemons.iter_mut().rev() {
            let _ = d.kill();
            let _ = d.wait();
        }
    }
}

fn stdout_of(out: &Output) -> String {
    let s = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "failed:\n{s}\n{}", String::from_utf8_lossy(&out.stderr));
    s
}

/// The JSON documents of the logs `DIR/slurm/logs/<stage>-<job>_*.out` (one per task).
fn task_logs(out: &Path, stage: &str, job: &str) -> Vec<serde_json::Value> {
    let mut docs = Vec::new();
    for e in std::fs::read_dir(out.join("slurm/logs")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(&format!("{stage}-{job}_")) {
            let text = std::fs::read_to_string(e.path()).unwrap();
            let json =
                text.find('{').map(|i| &text[i..]).unwrap_or_else(|| panic!("{name}: no JSON in {text}"));
            docs.push(serde_json::from_str(json).unwrap_or_else(|e| panic!("{name}: {e}: {text}")));
        }
    }
    docs
}

fn sum(docs: &[serde_json::Value], f: impl Fn(&serde_json::Value) -> Option<u64>) -> u64 {
    docs.iter().map(|d| f(d).unwrap_or_else(|| panic!("no such field in {d}"))).sum()
}

#[test]
fn a_slurm_sweep_equals_the_local_one_and_a_cancelled_step_is_all_a_rerun_redoes() {
    let cluster = match Cluster::start() {
        Ok(c) => c,
        Err(why) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("skipped: no Slurm cluster can be started here: {why}");
            return;
        }
        Err(why) => panic!("CI installs Slurm (.ci/run), yet: {why}"),
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("SWEEP.toml"), CLASSIFIER_AXES).unwrap();
    let run = |extra: &[&str]| {
        let mut a = classifier_sweep_args(true);
        a.extend(["--verify", "2", "--synth", "1"].iter().chain(extra).map(|s| s.to_string()));
        Command::new(env!("CARGO_BIN_EXE_mase"))
            .args(&a)
            .current_dir(dir)
            .envs(cluster.env())
            .output()
            .expect("runs mase")
    };
    let submit = |out: &str| -> serde_json::Value {
        let o = run(&["--slurm", "3", "--json", "-o", out]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        stdout_json(&o)
    };
    let ids = |jobs: &serde_json::Value| -> Vec<String> {
        ["points", "steps", "collect"].iter().filter_map(|k| jobs[k].as_str().map(str::to_string)).collect()
    };
    let compared = ["points.csv", "pareto.csv", "verify.json", "synth.json"];

    stdout_of(&run(&["-j", "1", "-o", "local"]));

    let jobs = submit("cluster");
    let all = ids(&jobs);
    cluster.wait_done(&all.iter().map(String::as_str).collect::<Vec<_>>());
    for f in compared {
        let (a, b) = (dir.join("local").join(f), dir.join("cluster").join(f));
        assert!(
            b.is_file(),
            "the collecting job wrote no {f}: {:?}",
            std::fs::read_dir(dir.join("cluster/slurm/logs"))
                .map(|r| r.flatten().map(|e| e.file_name()).collect::<Vec<_>>())
        );
        assert_eq!(
            std::fs::read(&a).unwrap(),
            std::fs::read(&b).unwrap(),
            "{f} differs between the local and the Slurm run"
        );
    }
    let cluster_dir = dir.join("cluster");
    let points = task_logs(&cluster_dir, "points", jobs["points"].as_str().unwrap());
    assert_eq!(points.len(), 3, "three array tasks");
    assert_eq!(sum(&points, |d| d["evaluated"].as_u64()), 4, "every point evaluated once, by one task");

    // Cancel the step task of the most accurate front point while it synthesizes (Yosys runs
    // for seconds, its Verilator builds come from the cache), then resubmit.
    let jobs = submit("cancelled");
    let cancelled = dir.join("cancelled");
    let task = format!("{}_0", jobs["steps"].as_str().expect("a steps array"));
    let t = Instant::now();
    while !cancelled.join("synth").is_dir() {
        assert!(t.elapsed() < Duration::from_secs(600), "step task {task} never synthesized");
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = Command::new("scancel").arg(&task).envs(cluster.env()).output().unwrap();
    stdout_of(&out);
    let first = ids(&jobs);
    cluster.wait_done(&first.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        !cancelled.join("synth.json").exists(),
        "the collecting job was cancelled with the step it waited on"
    );
    let records = |d: &Path| {
        std::fs::read_dir(d.join("steps"))
            .map_or(0, |r| r.flatten().filter(|e| e.file_name().to_string_lossy().ends_with(".json")).count())
    };
    let left = records(&cancelled);
    assert!(left < 3, "the cancelled task left its steps unfinished ({left} of 3 records)");

    let jobs = submit("cancelled");
    let again = ids(&jobs);
    cluster.wait_done(&again.iter().map(String::as_str).collect::<Vec<_>>());
    for f in compared {
        assert_eq!(
            std::fs::read(dir.join("local").join(f)).unwrap(),
            std::fs::read(cancelled.join(f)).unwrap_or_default(),
            "{f} after the rerun"
        );
    }
    let points = task_logs(&cancelled, "points", jobs["points"].as_str().unwrap());
    assert_eq!(sum(&points, |d| d["evaluated"].as_u64()), 0, "no point evaluated again");
    let steps = task_logs(&cancelled, "steps", jobs["steps"].as_str().unwrap());
    assert_eq!(
        sum(&steps, |d| d["steps"]["ran"].as_u64()) as usize,
        3 - left,
        "only the missing steps ran again"
    );
    assert_eq!(
        sum(&steps, |d| d["steps"]["reused"].as_u64()) as usize,
        left,
        "the finished ones came from their records"
    );
}
