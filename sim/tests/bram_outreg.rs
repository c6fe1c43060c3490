//! The block-RAM output-register pass ([`mase_sim::bram_outreg`]) on real Yosys 0.23 `synth_ecp5`
//! netlists, each proven equivalent to the netlist before the pass by Yosys's sequential
//! equivalence checker (`equiv_make`, `equiv_simple -short -seq 2`, `equiv_induct`,
//! `equiv_status`) over Yosys's ECP5 cell models plus behavioural `DP16KD` and `MULT18X18D` models
//! (`tests/data/ecp5_models.v`; Yosys 0.23 has none). A netlist with the register folded the wrong
//! way must fail the same check, so a pass proves something. Needs `yosys` on `PATH` (skips with
//! the reason otherwise); about twenty seconds.
//!
//! An emitted project is checked by parts (see `cut_folded`), a minute or more:
//! `MASE_OUTREG_PROJECT=DIR cargo test --release -p mase-sim --test bram_outreg -- --ignored`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

/// A scratch directory, kept and named on stderr when `MASE_OUTREG_KEEP` is set (to look into a
/// failed check).
fn scratch() -> tempfile::TempDir {
    let mut dir = tempfile::tempdir().unwrap();
    if std::env::var_os("MASE_OUTREG_KEEP").is_some() {
        dir.disable_cleanup(true);
        eprintln!("keeping {}", dir.path().display());
    }
    dir
}

fn yosys() -> Option<PathBuf> {
    let y = mase_sim::tool::which("yosys");
    if y.is_none() {
        eprintln!("skipped: no yosys on PATH (the equivalence check runs Yosys natively)");
    }
    y
}

/// Runs the Yosys `script` (kept with its log in `work`) in `cwd`; Err with the log's tail when
/// Yosys fails.
fn run_yosys(yosys: &Path, cwd: &Path, work: &Path, name: &str, script: &str) -> Result<String, String> {
    let (ys, log) = (work.join(format!("{name}.ys")), work.join(format!("{name}.log")));
    std::fs::write(&ys, script).unwrap();
    let out = Command::new(yosys).current_dir(cwd).arg("-q").arg("-l").arg(&log).arg("-s").arg(&ys).output();
    let out = out.unwrap_or_else(|e| panic!("running {}: {e}", yosys.display()));
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    if out.status.success() {
        Ok(text)
    } else {
        let tail: Vec<&str> = text.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        Err(format!("yosys {name} failed:\n{}\n{}", tail.join("\n"), String::from_utf8_lossy(&out.stderr)))
    }
}

/// `synth_ecp5` of the Verilog read by `read` (run in `cwd`) into a JSON netlist.
fn synth(yosys: &Path, cwd: &Path, work: &Path, read: &str, top: &str) -> Value {
    let json = work.join("synth.json");
    let script =
        format!("{read}\nhierarchy -check -top {top}\nsynth_ecp5 -top {top} -json {}\n", json.display());
    run_yosys(yosys, cwd, work, "synth", &script).unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

/// The netlist with only module `top` (the cell library's blackbox modules would clash with the
/// simulation models).
fn top_only(netlist: &Value, top: &str) -> Value {
    serde_json::json!({"modules": {top: netlist["modules"][top].clone()}})
}

/// The signals whose meaning the pass changes on purpose, not to be matched between `gold` and
/// `gate`: the data-out pins (and the model's output wire) of a block RAM whose output register
/// it turned on, which now carry the register instead of the latch, its output enables (unused
/// before), and the names whose nets it cleared (the unregistered read, gone from the netlist).
/// Every other named signal is matched, the module's outputs among them.
fn changed_names(gold: &Value, gate: &Value, top: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (name, cell) in cells_of(gate, top, "DP16KD") {
        if cell["parameters"] != gold["modules"][top]["cells"][name]["parameters"] {
            for p in ['A', 'B'] {
                out.extend((0..18).map(|i| format!("{name}.DO{p}{i}")));
                out.push(format!("{name}.OCE{p}"));
                out.push(format!("{name}.oce{}", p.to_ascii_lowercase()));
            }
            out.push(format!("{name}.pdp.out"));
        }
    }
    for (name, n) in gate["modules"][top]["netnames"].as_object().unwrap() {
        if n["bits"] != gold["modules"][top]["netnames"][name]["bits"] {
            out.push(name.clone());
        }
    }
    out
}

/// For each of `gates` (module `top`): how many matched signals Yosys's sequential equivalence
/// check proves equal to `gold` and how many it cannot, all in one Yosys run.
fn equivalence(yosys: &Path, work: &Path, gold: &Value, gates: &[&Value], top: &str) -> Vec<(usize, usize)> {
    let models = format!("{DATA}/ecp5_models.v");
    let mut script = String::new();
    let sides: Vec<(String, &Value)> = std::iter::once(("gold".to_string(), gold))
        .chain(gates.iter().enumerate().map(|(i, g)| (format!("gate{i}"), *g)))
        .collect();
    for (side, netlist) in &sides {
        let json = work.join(format!("{side}.json"));
        std::fs::write(&json, top_only(netlist, top).to_string()).unwrap();
        // Constants first (so the read-only memories lose their write ports), then the memories
        // as logic and the flip-flops as plain $dff: equiv_simple models neither a memory nor a
        // flip-flop with an enable.
        script += &format!(
            "read_verilog +/ecp5/cells_sim.v\nread_verilog -overwrite {models}\nread_json {}\n\
             hierarchy -check -top {top}\nproc\nflatten\nopt -fast\nmemory -nomap\nopt -full\n\
             memory_map\nopt -full\ndffunmap\nrename {top} {side}\ndesign -stash {side}\n",
            json.display()
        );
    }
    for (i, gate) in gates.iter().enumerate() {
        let blacklist = work.join(format!("gate{i}.blacklist"));
        std::fs::write(&blacklist, changed_names(gold, gate, top).join("\n")).unwrap();
        // equiv_simple without -short never steps back a clock cycle in Yosys 0.23.
        script += &format!(
            "design -reset\ndesign -copy-from gold -as gold gold\ndesign -copy-from gate{i} -as gate gate{i}\n\
             equiv_make -blacklist {} gold gate equiv\nhierarchy -top equiv\nequiv_simple -short -seq 2\n\
             equiv_induct -seq 2\nequiv_status\n",
            blacklist.display()
        );
    }
    let log = run_yosys(yosys, work, work, "equiv", &script).unwrap_or_else(|e| panic!("{e}"));
    // "  Of those cells 1452 are proven and 0 are unproven."
    let counts: Vec<(usize, usize)> = log
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Of those cells "))
        .map(|l| {
            let n: Vec<usize> = l.split(' ').filter_map(|w| w.parse().ok()).collect();
            (n[0], n[1])
        })
        .collect();
    assert_eq!(counts.len(), gates.len(), "equiv_status lines in {}", work.join("equiv.log").display());
    counts
}

fn cells_of<'a>(netlist: &'a Value, top: &str, ty: &str) -> Vec<(&'a String, &'a Value)> {
    let cells = netlist["modules"][top]["cells"].as_object().unwrap();
    cells.iter().filter(|(_, c)| c["type"] == ty).collect()
}

#[test]
fn folded_registers_keep_a_small_netlist_equivalent() {
    let Some(yosys) = yosys() else { return };
    let t0 = Instant::now();
    let dir = scratch();
    let work = dir.path();
    let top = "outreg_small";
    let gold = synth(&yosys, work, work, &format!("read_verilog {DATA}/outreg_small.v"), top);
    let mut gate = gold.clone();
    assert_eq!(mase_sim::bram_outreg::absorb_output_registers(&mut gate), 2);

    let regmodes = |n: &Value, rom: &str| {
        let (_, c) = cells_of(n, top, "DP16KD").into_iter().find(|(name, _)| name.starts_with(rom)).unwrap();
        (
            c["parameters"]["REGMODE_A"].as_str().unwrap().to_string(),
            c["parameters"]["REGMODE_B"].as_str().unwrap().to_string(),
        )
    };
    let (out, no) = ("OUTREG".to_string(), "NOREG".to_string());
    assert_eq!(regmodes(&gate, "rom1"), (out.clone(), out.clone()), "36-bit mode: both halves");
    assert_eq!(regmodes(&gate, "rom2"), (out.clone(), no.clone()));
    assert_eq!(regmodes(&gate, "rom3"), (no.clone(), no.clone()), "its read leaves the module");
    let ffs = |n: &Value| cells_of(n, top, "TRELLIS_FF").len();
    assert_eq!(ffs(&gold) - ffs(&gate), 36 + 18);

    // The check has teeth: rom1's output register on the opposite enable is not equivalent.
    let mut wrong = gate.clone();
    let rom1 =
        cells_of(&gate, top, "DP16KD").into_iter().find(|(n, _)| n.starts_with("rom1")).unwrap().0.clone();
    let mux = &mut wrong["modules"][top]["cells"][&rom1]["parameters"]["OCEBMUX"];
    *mux = if *mux == "INV" { "OCEB".into() } else { "INV".into() };

    let counts = equivalence(&yosys, work, &gold, &[&gate, &wrong], top);
    eprintln!("proven/unproven: folded {:?}, wrong enable {:?}", counts[0], counts[1]);
    assert!(counts[0].0 > 0 && counts[0].1 == 0, "folded netlist not proven equivalent: {:?}", counts[0]);
    // y1 and r1 (36 bits each) at least.
    assert!(counts[1].1 >= 72, "an inverted OCEB passed the check: {:?}", counts[1]);
    eprintln!("{:.1} s", t0.elapsed().as_secs_f64());
}

/// Splits the check of a netlist too large for a whole-netlist proof (Yosys 0.23's `equiv_make`
/// only pairs an internal signal when its named wire is the one the flip-flop drives, which in a
/// large flattened netlist it often is not): outside the block RAMs the pass changed and the
/// flip-flops it removed, `gate` must be `gold` cell for cell and port for port; those block RAMs
/// with the flip-flops, cut out as one module `folded` whose ports are the nets they share with
/// the rest, must be sequentially equivalent. Together the whole netlists are (a sub-circuit
/// replaced by an equivalent one). Returns the cut-out modules of `gold` and `gate`.
fn cut_folded(gold: &Value, gate: &Value, top: &str) -> (Value, Value) {
    use std::collections::BTreeSet;
    let (g, h) = (&gold["modules"][top], &gate["modules"][top]);
    assert_eq!(g["ports"], h["ports"], "module ports changed");
    let (gc, hc) = (g["cells"].as_object().unwrap(), h["cells"].as_object().unwrap());
    assert!(hc.keys().all(|n| gc.contains_key(n)), "the pass added cells");
    let removed: BTreeSet<&String> = gc.keys().filter(|n| !hc.contains_key(*n)).collect();
    let changed: BTreeSet<&String> = hc.keys().filter(|n| hc[*n] != gc[*n]).collect();
    assert!(removed.iter().all(|n| gc[*n]["type"] == "TRELLIS_FF"), "removed a cell other than a flip-flop");
    assert!(changed.iter().all(|n| hc[*n]["type"] == "DP16KD"), "changed a cell other than a block RAM");
    // Every other cell is untouched (compared above as JSON), so the rest of both netlists is one.
    let in_gold: BTreeSet<&String> = removed.union(&changed).copied().collect();
    let bits = |cell: &Value, output: bool| -> Vec<u64> {
        let dirs = &cell["port_directions"];
        let conns = cell["connections"].as_object().unwrap();
        conns
            .iter()
            .filter(|(p, _)| (dirs[p.as_str()] == "output") == output)
            .flat_map(|(_, b)| b.as_array().unwrap().iter().filter_map(Value::as_u64))
            .collect()
    };
    let sub: Vec<&Value> = in_gold.iter().map(|n| &gc[*n]).chain(changed.iter().map(|n| &hc[*n])).collect();
    let driven: BTreeSet<u64> = sub.iter().flat_map(|c| bits(c, true)).collect();
    let read: BTreeSet<u64> = sub.iter().flat_map(|c| bits(c, false)).collect();
    let mut outside: BTreeSet<u64> =
        gc.iter().filter(|(n, _)| !in_gold.contains(n)).flat_map(|(_, c)| bits(c, false)).collect();
    for p in g["ports"].as_object().unwrap().values() {
        outside.extend(p["bits"].as_array().unwrap().iter().filter_map(Value::as_u64));
    }
    let mut ports = serde_json::Map::new();
    for n in read.difference(&driven) {
        ports.insert(format!("i{n}"), serde_json::json!({"direction": "input", "bits": [n]}));
    }
    for n in driven.intersection(&outside) {
        ports.insert(format!("o{n}"), serde_json::json!({"direction": "output", "bits": [n]}));
    }
    let module = |cells: &BTreeSet<&String>, from: &serde_json::Map<String, Value>| {
        let cells: serde_json::Map<String, Value> =
            cells.iter().map(|n| ((*n).clone(), from[*n].clone())).collect();
        serde_json::json!({"modules": {"folded": {"ports": ports, "cells": cells, "netnames": {}}}})
    };
    (module(&in_gold, gc), module(&changed, hc))
}

/// The project in `MASE_OUTREG_PROJECT` (written by `mase emit`/`mase flow`): synthesized as
/// `mase synth DIR --target ecp5` does, folded, and proven equivalent by [`cut_folded`].
#[test]
#[ignore = "a minute or more; set MASE_OUTREG_PROJECT=DIR"]
fn folded_registers_keep_a_project_equivalent() {
    let Some(dir) = std::env::var_os("MASE_OUTREG_PROJECT").map(PathBuf::from) else {
        eprintln!("skipped: MASE_OUTREG_PROJECT is not set");
        return;
    };
    let Some(yosys) = yosys() else { return };
    let t0 = Instant::now();
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let top = report["top"].as_str().unwrap().to_string();
    let files = std::fs::read_to_string(dir.join("files.f")).unwrap();
    let sources: Vec<&str> =
        files.lines().map(str::trim).filter(|f| !f.is_empty() && !f.ends_with(".svh")).collect();
    let scratch = scratch();
    let work = scratch.path();
    // Paths in the project are relative to it (the top's MEM_DIR is "mem/"): Yosys runs there.
    let read = format!("read_verilog -sv -I rtl {}", sources.join(" "));
    let gold = synth(&yosys, &dir, work, &read, &top);
    let mut gate = gold.clone();
    let folded = mase_sim::bram_outreg::absorb_output_registers(&mut gate);
    let brams = cells_of(&gold, &top, "DP16KD").len();
    let ffs = |n: &Value| cells_of(n, &top, "TRELLIS_FF").len();
    eprintln!(
        "{top}: {folded} block-RAM read ports folded ({brams} DP16KD), {} flip-flops removed",
        ffs(&gold) - ffs(&gate)
    );
    assert!(folded > 0, "nothing folded in {}", dir.display());
    let (sub_gold, sub_gate) = cut_folded(&gold, &gate, &top);
    let ports = sub_gold["modules"]["folded"]["ports"].as_object().unwrap().len();
    eprintln!("the rest is the same cell for cell; the cut-out has {ports} ports");
    // And with the teeth shown: one block RAM's output register on the opposite enable.
    let mut wrong = sub_gate.clone();
    let (bram, _) = cells_of(&sub_gate, "folded", "DP16KD").into_iter().next().unwrap();
    let params = &mut wrong["modules"]["folded"]["cells"][bram]["parameters"];
    for oce in ["OCEAMUX", "OCEBMUX"] {
        let plain = oce.trim_end_matches("MUX");
        match params.get(oce).and_then(Value::as_str) {
            Some("INV") => params[oce] = plain.into(),
            Some(_) => params[oce] = "INV".into(),
            None => {}
        }
    }
    let counts = equivalence(&yosys, work, &sub_gold, &[&sub_gate, &wrong], "folded");
    eprintln!("proven/unproven: folded {:?}, wrong enable {:?}", counts[0], counts[1]);
    assert!(
        counts[0].0 > 0 && counts[0].1 == 0,
        "not proven equivalent: {:?} (see {})",
        counts[0],
        work.display()
    );
    assert!(counts[1].1 > 0, "an inverted OCE passed the check: {:?}", counts[1]);
    eprintln!("{:.1} s", t0.elapsed().as_secs_f64());
}
