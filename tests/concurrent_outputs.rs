//! Concurrent writers and builders, as real `mase` processes: two `mase flow -o DIR` of different
//! models started together leave `DIR` holding one whole project (compared file by file with a
//! project of each model written alone), a writer waits for the directory's holder and says so,
//! and two `mase sim` of one project with one shared empty build cache both pass and leave one
//! cache entry, built once.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use common::fixture;
use mase_emit::project::{LOCK, MARKER};

/// The two fixture models raced into one directory (small: the flow takes well under a second).
const MODELS: [&str; 2] = ["mlp_gemm_relu.onnx", "mlp_classifier.onnx"];

/// Starts `mase` with `args`, stdout and stderr piped, and `env` set.
fn spawn(args: &[&Path], env: &[(&str, &Path)]) -> Child {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mase"));
    c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    c.spawn().expect("runs the mase binary")
}

/// `mase flow MODEL -o DIR` started.
fn spawn_flow(model: &str, dir: &Path) -> Child {
    spawn(&[Path::new("flow"), &fixture(model), Path::new("-o"), dir], &[])
}

/// Waits for `child` and panics with its stderr unless it succeeded.
fn succeeded(child: Child, what: &str) -> Output {
    let out = child.wait_with_output().expect("waits for mase");
    assert!(out.status.success(), "{what} failed: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// Every file under `dir` (relative path → bytes) but the lock file, which is the directory's,
/// not the project's.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, at: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(at).unwrap_or_else(|e| panic!("{}: {e}", at.display())).flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(p.strip_prefix(root).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out.remove(Path::new(LOCK));
    out
}

/// The files in which `got` differs from `want` (missing, extra or different bytes).
fn differences(got: &BTreeMap<PathBuf, Vec<u8>>, want: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<String> {
    let mut d: Vec<String> = want
        .iter()
        .filter(|(p, b)| got.get(*p) != Some(*b))
        .map(|(p, _)| {
            format!("{} {}", if got.contains_key(p) { "differs:" } else { "missing:" }, p.display())
        })
        .collect();
    d.extend(got.keys().filter(|p| !want.contains_key(*p)).map(|p| format!("extra: {}", p.display())));
    d
}

/// The project of each model written alone, each as `<tmp>/ref_<k>/proj` (the same last
/// component as the raced directory, should a file ever name its directory).
fn references(tmp: &Path) -> Vec<BTreeMap<PathBuf, Vec<u8>>> {
    let children: Vec<(Child, PathBuf)> = MODELS
        .iter()
        .enumerate()
        .map(|(k, m)| {
            let dir = tmp.join(format!("ref_{k}")).join("proj");
            (spawn_flow(m, &dir), dir)
        })
        .collect();
    children
        .into_iter()
        .zip(MODELS)
        .map(|((c, dir), m)| {
            succeeded(c, &format!("mase flow {m}"));
            tree(&dir)
        })
        .collect()
}

#[test]
fn concurrent_flows_into_one_directory_leave_one_whole_project() {
    let tmp = tempfile::tempdir().unwrap();
    let refs = references(tmp.path());
    assert_ne!(refs[0], refs[1], "the two models' projects differ");
    let dir = tmp.path().join("race").join("proj");
    for round in 0..4 {
        // Alternate which model starts first; the directory keeps the previous round's project,
        // so each round also replaces a whole project of either model.
        let order: Vec<&str> =
            if round % 2 == 0 { MODELS.to_vec() } else { MODELS.iter().rev().copied().collect() };
        let children: Vec<Child> = order.iter().map(|m| spawn_flow(m, &dir)).collect();
        for (c, m) in children.into_iter().zip(&order) {
            succeeded(c, &format!("round {round}: mase flow {m}"));
        }
        let got = tree(&dir);
        let diffs: Vec<Vec<String>> = refs.iter().map(|r| differences(&got, r)).collect();
        assert!(
            diffs.iter().any(Vec::is_empty),
            "round {round}: {} is no model's whole project; against {}: {:?}; against {}: {:?}",
            dir.display(),
            MODELS[0],
            diffs[0],
            MODELS[1],
            diffs[1]
        );
    }
}

#[test]
fn a_writer_waits_for_the_directory_and_names_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("proj");
    std::fs::create_dir_all(&dir).unwrap();
    // This test holds the directory as a writer does.
    let held = mase_emit::lock::lock(&dir.join(LOCK), mase_emit::lock::Kind::Exclusive, || {
        panic!("nobody else holds it")
    })
    .unwrap();
    let mut child = spawn_flow(MODELS[0], &dir);
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("waiting for") {
                let _ = tx.send(line.clone());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let line = rx.recv_timeout(Duration::from_secs(120)).expect("mase flow says it waits");
    assert!(line.contains(&dir.display().to_string()), "the message names the directory: {line}");
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().unwrap().is_none(), "mase flow finished while the directory was held");
    assert!(!dir.join(MARKER).exists(), "a project was written while the directory was held");
    drop(held);
    let status = child.wait().unwrap();
    let err = reader.join().unwrap();
    assert!(status.success(), "mase flow failed after the wait: {err}");
    assert!(
        dir.join(MARKER).is_file() && dir.join("top.sv").is_file(),
        "the project is written after the wait"
    );
}

#[test]
fn concurrent_sims_share_an_empty_cache_and_build_once() {
    // The Verilator every child uses, found (or provisioned) once through the usual cache, so
    // the shared empty cache below only holds what the two runs build.
    let verilator = mase_sim::tool::verilator().unwrap_or_else(|e| panic!("{e}")).bin.clone();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("proj");
    succeeded(spawn_flow(MODELS[0], &dir), "mase flow");
    let cache = tmp.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let env = [("MASE_CACHE_DIR", cache.as_path()), ("MASE_VERILATOR", verilator.as_path())];
    let sim = || spawn(&[Path::new("sim"), &dir, Path::new("--json")], &env);
    let children = [sim(), sim()];
    let reports: Vec<serde_json::Value> = children
        .into_iter()
        .map(|c| {
            let out = succeeded(c, "mase sim");
            serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("mase sim --json: {e}: {}", String::from_utf8_lossy(&out.stdout)))
        })
        .collect();
    for r in &reports {
        assert_eq!(r["bit_exact"], true, "{r}");
        assert_eq!(r["mismatches"], 0, "{r}");
    }
    let hits: Vec<bool> = reports.iter().map(|r| r["cache_hit"].as_bool().expect("cache_hit")).collect();
    assert_eq!(
        hits.iter().filter(|h| !**h).count(),
        1,
        "exactly one run builds, the other waits for it: {hits:?}"
    );

    let builds = cache.join("builds");
    let entries: Vec<PathBuf> = std::fs::read_dir(&builds).unwrap().flatten().map(|e| e.path()).collect();
    let dirs: Vec<&PathBuf> = entries.iter().filter(|p| p.is_dir()).collect();
    assert_eq!(dirs.len(), 1, "one build in the cache, no temp dirs left: {entries:?}");
    let name = dirs[0].file_name().unwrap().to_string_lossy().to_string();
    assert!(name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit()), "a key, not a temp dir: {name}");
    for f in ["libmase.so", "build.json"] {
        assert!(dirs[0].join(f).is_file(), "{f} missing from the cache entry {name}");
    }
    let others: Vec<&PathBuf> =
        entries.iter().filter(|p| !p.is_dir() && **p != builds.join(format!("{name}.lock"))).collect();
    assert!(others.is_empty(), "only the entry and its lock file: {others:?}");
    let runtime: Vec<_> = std::fs::read_dir(cache.join("runtime")).unwrap().flatten().collect();
    assert_eq!(runtime.len(), 1, "one saved set of runtime objects");

    // The entry is valid: a third run loads it and is still bit-exact.
    let out = succeeded(sim(), "mase sim (cached)");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((r["bit_exact"].as_bool(), r["cache_hit"].as_bool()), (Some(true), Some(true)), "{r}");

    // The same project in another directory is the same build: the model reads its memories
    // from a content-addressed copy, not from the directory it was emitted into.
    let moved = tmp.path().join("moved");
    copy_tree(&dir, &moved);
    std::fs::remove_dir_all(&dir).unwrap();
    let out = succeeded(spawn(&[Path::new("sim"), &moved, Path::new("--json")], &env), "mase sim (moved)");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((r["bit_exact"].as_bool(), r["cache_hit"].as_bool()), (Some(true), Some(true)), "{r}");
    let trees: Vec<_> = std::fs::read_dir(cache.join("memdirs")).unwrap().flatten().collect();
    assert_eq!(trees.len(), 1, "one copy of the project's memories: {trees:?}");
}

/// Copies the directory `from` to `to`, recursively.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}
