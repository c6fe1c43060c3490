//! The Python package's suite inside `cargo test`: a cached venv (`target/py-venv`, or
//! `$MASE_PY_VENV`) gets maturin, numpy, pytest, pytest-xdist, onnxruntime (the whole-model
//! test runs the project's host parts with it) and Dask (the sweep over an executor) from PyPI,
//! then `pip install ./py` (built with the
//! dev profile into this workspace's target dir, so the dependencies `cargo test` just compiled
//! are reused), then pytest, one worker per core, runs `py/tests` (API, harness, the README's
//! Python example) and `testbenches/` (one cocotb-style testbench per library component). Any
//! failure fails this test with pytest's output. Needs `python3` with `venv` (Python >= 3.9),
//! like `.ci/run` provides.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `cmd`, failing the test with its output when it fails.
fn run(cmd: &mut Command, what: &str) {
    let t = Instant::now();
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot start {cmd:?}: {e}"));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{what} failed ({}):\n{text}", out.status);
    eprintln!("python suite: {what}: {:.1} s", t.elapsed().as_secs_f64());
    if what == "pytest" {
        eprintln!("{text}");
    }
}

/// The venv's python, creating the venv and its tools once.
fn venv(dir: &Path) -> PathBuf {
    let py = dir.join("bin").join("python");
    if !py.exists() {
        let base = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        run(Command::new(&base).args(["-m", "venv"]).arg(dir), "creating the venv");
    }
    // The marker lists what was installed, so a venv made before a tool joined the list gets it.
    let tools = ["maturin>=1.5,<2", "numpy", "pytest", "pytest-xdist", "onnxruntime", "dask[distributed]"];
    let ready = dir.join(".mase-tools");
    let listed = tools.join(" ") + "\n";
    if std::fs::read_to_string(&ready).ok().as_deref() != Some(listed.as_str()) {
        run(
            Command::new(&py).args(["-m", "pip", "install", "-q"]).args(tools),
            "installing maturin, numpy, pytest, pytest-xdist, onnxruntime, dask[distributed]",
        );
        std::fs::write(&ready, listed).expect("marking the venv ready");
    }
    py
}

/// `PATH` with the venv's `bin/` first.
fn with_venv_path(py: &Path) -> std::ffi::OsString {
    let bin = py.parent().expect("the venv's bin directory").to_path_buf();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&rest))).expect("PATH")
}

#[test]
fn python_package_suite() {
    let root = root();
    let dir =
        std::env::var_os("MASE_PY_VENV").map(PathBuf::from).unwrap_or_else(|| root.join("target/py-venv"));
    let py = venv(&dir);
    run(
        Command::new(&py)
            .args(["-m", "pip", "install", "-q", "--no-build-isolation", "--force-reinstall", "--no-deps"])
            .arg(root.join("py"))
            // The dev profile (target/debug): the dependencies `cargo test` built are reused (the
            // test profile cannot be used: `cargo rustc --profile test` builds a test harness).
            .env("MATURIN_PEP517_ARGS", "--profile dev")
            // maturin's build hook looks for the `maturin` executable on PATH.
            .env("PATH", with_venv_path(&py)),
        "pip install ./py",
    );
    run(
        Command::new(&py)
            // One worker per core: the testbenches' Verilator builds are independent (the cache
            // locks per design), and one process would leave all but one core idle.
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "auto", "py/tests", "testbenches"])
            .current_dir(&root),
        "pytest",
    );
}
