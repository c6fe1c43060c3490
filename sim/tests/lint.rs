//! RTL hygiene: every `rtl/*.sv` (found by glob) passes `verilator --lint-only -Wall` with no
//! warning, declares the module its file name promises, and is read by Yosys (`read_verilog -sv`,
//! `hierarchy`, `proc`); every registered component also lints clean at each of its test
//! parameter sets, and synthesizes with `synth_xilinx` at its defaults; every file that uses the
//! shared macros of `rtl/mase_assert.svh` includes it, every component's file list starts with
//! it, and every component asserts stream stability on each of its stream ports. Fails loudly
//! when Verilator or Yosys is missing.

use std::path::PathBuf;

use mase_hwlib::{registry, resolve_params, rtl_dir, rtl_file_names};

/// The shared header of parameter-check and stream-assertion macros.
const ASSERT_HEADER: &str = "mase_assert.svh";

fn rtl_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(rtl_dir())
        .expect("rtl/ directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "sv"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no rtl/*.sv found in {}", rtl_dir().display());
    v
}

fn lint(top: &str, file: &PathBuf, params: &[(String, i64)]) -> Result<(), String> {
    let v = mase_sim::tool::verilator().unwrap_or_else(|e| panic!("lint needs Verilator: {e}"));
    let mut cmd = v.command();
    cmd.arg("--lint-only").arg("-Wall").arg("-y").arg(rtl_dir()).arg("--top-module").arg(top).arg(file);
    for (k, x) in params {
        cmd.arg(format!("-G{k}={x}"));
    }
    let out = cmd.output().map_err(|e| format!("running verilator: {e}"))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if !out.status.success() || text.contains("%Warning") || text.contains("%Error") {
        return Err(format!("{} ({top} {params:?}):\n{text}", file.display()));
    }
    Ok(())
}

#[test]
fn every_rtl_file_lints_clean_with_wall() {
    let mut failures = Vec::new();
    for f in rtl_files() {
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&f).unwrap();
        if !text.contains(&format!("module {stem}")) {
            failures.push(format!("{}: does not declare module {stem}", f.display()));
            continue;
        }
        if let Err(e) = lint(&stem, &f, &[]) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_component_lints_clean_at_its_test_params() {
    let mut failures = Vec::new();
    for c in registry() {
        for ov in c.test_params() {
            let p = resolve_params(*c, &ov).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
            let params: Vec<(String, i64)> = p.iter().map(|(k, v)| (k.clone(), *v)).collect();
            let file = rtl_dir().join(format!("mase_{}.sv", c.name()));
            if let Err(e) = lint(&format!("mase_{}", c.name()), &file, &params) {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn yosys_reads_every_rtl_file() {
    let yosys = mase_sim::tool::yosys().unwrap_or_else(|e| panic!("{e}"));
    let files = rtl_files();
    let mut script = String::new();
    for f in &files {
        script.push_str(&format!("read_verilog -sv {}\n", f.display()));
    }
    for f in &files {
        let stem = f.file_stem().unwrap().to_string_lossy();
        script.push_str(&format!("design -push-copy\nhierarchy -check -top {stem}\nproc\ndesign -pop\n"));
    }
    let out = yosys.command().arg("-q").arg("-p").arg(&script).output().expect("running yosys");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && !text.contains("ERROR"), "yosys failed:\n{text}");
}

/// Each component synthesizes at its smallest test instance (smallest memory, multipliers and
/// ports: the full-size points are for `mase synth component`, not the default test run).
#[test]
fn every_component_synthesizes_with_synth_xilinx() {
    let mut jobs: Vec<(String, Vec<(String, i64)>)> = Vec::new();
    for c in registry() {
        let smallest = c
            .test_params()
            .into_iter()
            .filter_map(|ov| resolve_params(*c, &ov).ok().map(|p| (ov, p)))
            .min_by_key(|(_, p)| {
                let cost = c.cost(p);
                let ports: usize = c.streams(p).iter().map(|s| s.port_width()).sum();
                cost.memory_bits + 64 * cost.multipliers + ports as u64
            })
            .unwrap_or_else(|| panic!("{}: no valid test_params", c.name()));
        jobs.push((c.name().to_string(), smallest.0.iter().map(|(k, v)| (k.to_string(), *v)).collect()));
    }
    // A deep FIFO's plain synchronous-read memory must become block RAM (with OUT_REG too: its
    // read register still maps into the RAM), a shallow one LUT RAM.
    jobs.push((
        "fifo".into(),
        vec![("DEPTH".into(), 1024), ("DATA_WIDTH".into(), 16), ("OUT_REG".into(), 1)],
    ));
    jobs.push(("fifo".into(), vec![("DEPTH".into(), 1024), ("DATA_WIDTH".into(), 16)]));
    jobs.push(("fifo".into(), vec![("DEPTH".into(), 32), ("DATA_WIDTH".into(), 16)]));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((name, ov)) = jobs.get(i) else { break };
                let r = mase_sim::synth_component(name, ov).map_err(|e| format!("{name} {ov:?}: {e}"));
                results.lock().unwrap().push((i, r));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);
    let mut failures = Vec::new();
    for (i, r) in results {
        match r {
            Err(e) => failures.push(e),
            Ok(r) if r.ff + r.lut == 0 => {
                failures.push(format!("{}: empty netlist {:?}", r.component, r.cells))
            }
            Ok(r) if (i == jobs.len() - 3 || i == jobs.len() - 2) && r.bram == 0 => {
                failures.push(format!("DEPTH 1024 FIFO did not infer block RAM: {:?}", r.cells))
            }
            Ok(r) if i == jobs.len() - 1 && (r.lutram == 0 || r.bram != 0) => {
                failures.push(format!("DEPTH 32 FIFO did not infer LUT RAM: {:?}", r.cells))
            }
            Ok(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A file that uses a `MASE_*` macro includes the header (behind its guard, so a tool handed the
/// header as the first source needs no include path), and each component that uses one lists the
/// header first, so every build, synthesis script and emitted file list reads it before the
/// modules (and a change to it changes the simulation cache key).
#[test]
fn macro_users_include_the_assertion_header_and_list_it_first() {
    let include = format!("`ifndef MASE_ASSERT_SVH `include \"{ASSERT_HEADER}\" `endif\n");
    let mut failures = Vec::new();
    for f in rtl_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        if text.contains("`MASE_") && !text.contains(&include) {
            failures.push(format!(
                "{}: uses `MASE_ macros without the guarded include of {ASSERT_HEADER}",
                f.display()
            ));
        }
    }
    assert!(rtl_dir().join(ASSERT_HEADER).is_file(), "rtl/{ASSERT_HEADER} is missing");
    for c in registry() {
        let files = rtl_file_names(*c);
        let uses = files.iter().any(|f| {
            f.ends_with(".sv")
                && std::fs::read_to_string(rtl_dir().join(f)).unwrap_or_default().contains("`MASE_")
        });
        if uses && files.first().map(String::as_str) != Some(ASSERT_HEADER) {
            failures.push(format!("{}: file list {files:?} does not start with {ASSERT_HEADER}", c.name()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every component states the shared stream-stability assertion for each of its stream ports.
#[test]
fn every_component_asserts_stream_stability_on_every_port() {
    let mut failures = Vec::new();
    for c in registry() {
        let file = rtl_dir().join(format!("mase_{}.sv", c.name()));
        let text = std::fs::read_to_string(&file).unwrap();
        let p = resolve_params(*c, &[] as &[(&str, i64)]).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
        for s in c.streams(&p) {
            if !text.contains(&format!("`MASE_ASSERT_STREAM_STABLE({})", s.name)) {
                failures.push(format!("{}: no `MASE_ASSERT_STREAM_STABLE({})", file.display(), s.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
