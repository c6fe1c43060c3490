//! The CLI as a newcomer uses it: every command on the committed fixtures, and the errors a
//! user sees for bad input.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::mase;

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name).display().to_string()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "command failed\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn err(out: &Output) -> String {
    assert!(!out.status.success(), "command should fail; stdout:\n{}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn read_f32_npy(path: &Path) -> Vec<f32> {
    match mase_ir_npy(path) {
        mase_ir::Tensor::F32(a) => a.iter().copied().collect(),
        other => panic!("expected f32 output, got {:?}", other.dtype()),
    }
}

fn mase_ir_npy(path: &Path) -> mase_ir::Tensor {
    mase_ir::npy::read_npy(path).expect("readable npy")
}

#[test]
fn import_info_passes_run_draw_on_the_encoder_layer() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    ok(&mase(&["import", &fixture("encoder_layer.onnx"), "-o", "enc"], dir));
    assert!(dir.join("enc.json").exists() && dir.join("enc.safetensors").exists());

    ok(&mase(&["passes", "enc", "--run", "init_metadata,add_common_metadata,count_ops", "-o", "enc2"], dir));
    let table = ok(&mase(&["info", "enc2"], dir));
    for op in ["linear", "matmul", "softmax", "layer_norm", "gelu", "add", "reshape", "transpose"] {
        assert!(table.contains(op), "info table lacks {op}:\n{table}");
    }
    assert!(table.contains("[1, 8, 512]"), "FFN shape missing:\n{table}");

    let json: serde_json::Value = serde_json::from_str(&ok(&mase(&["info", "enc2", "--json"], dir))).unwrap();
    let nodes = json["nodes"].as_array().unwrap();
    for n in nodes {
        for key in
            ["name", "op_kind", "mase_type", "mase_op", "args", "arg_shapes", "result_shapes", "metadata"]
        {
            assert!(n.get(key).is_some(), "node JSON lacks {key}: {n}");
        }
        assert!(n["metadata"].get("common").is_some() && n["metadata"].get("hardware").is_some());
    }

    let input = format!("hidden_states={}", fixture("encoder_layer.in.hidden_states.npy"));
    ok(&mase(&["run", "enc2", "--input", &input, "-o", "out.npy"], dir));
    let got = read_f32_npy(&dir.join("out.npy"));
    let want = read_f32_npy(Path::new(&fixture("encoder_layer.out.0.npy")));
    assert_eq!(got.len(), want.len());
    let max_ref = want.iter().fold(0f32, |m, v| m.max(v.abs()));
    let max_err = got.iter().zip(&want).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
    assert!(max_err <= 1e-4 * max_ref, "max abs error {max_err} vs bound {}", 1e-4 * max_ref);

    ok(&mase(&["draw", "enc2", "-o", "enc.svg"], dir));
    let svg = std::fs::read_to_string(dir.join("enc.svg")).unwrap();
    assert!(svg.starts_with("<svg") || svg.starts_with("<?xml"));
    for n in nodes {
        let name = n["name"].as_str().unwrap();
        assert!(svg.contains(name), "the drawing lacks node {name}");
    }
    ok(&mase(&["draw", "enc2", "-o", "enc.dot"], dir));
    assert!(std::fs::read_to_string(dir.join("enc.dot")).unwrap().contains("digraph"));
}

#[test]
fn dynamic_dimension_needs_and_takes_an_input_shape() {
    let tmp = tempfile::tempdir().unwrap();
    let model = fixture("encoder_layer_decomposed_ln.onnx");
    let msg = err(&mase(&["import", &model, "-o", "m"], tmp.path()));
    assert!(msg.contains("--input-shape"), "error should tell how to fix the shape: {msg}");
    ok(&mase(&["import", &model, "-o", "m", "--input-shape", "hidden_states=1x8x128"], tmp.path()));
    let table = ok(&mase(&["info", "m"], tmp.path()));
    assert!(table.contains("layer_norm"), "decomposed layer norm should be raised:\n{table}");
}

#[test]
fn passes_list_names_every_registered_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let list = ok(&mase(&["passes", "--list"], tmp.path()));
    for p in mase_emit::pass_manager().passes() {
        assert!(list.contains(p.name()), "--list lacks {}", p.name());
    }
}

#[test]
fn bad_input_gives_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let msg = err(&mase(&["import", "no_such_model.onnx", "-o", "x"], dir));
    assert!(msg.contains("no_such_model.onnx"), "{msg}");
    let msg = err(&mase(&["import", &fixture("bad_unknown_op.onnx"), "-o", "x"], dir));
    assert!(msg.contains("bad_unknown_op.onnx") || msg.to_lowercase().contains("unsupported"), "{msg}");
    let msg =
        err(&mase(&["import", &fixture("mlp_gemm_relu.onnx"), "-o", "x", "--input-shape", "x=4xq"], dir));
    assert!(msg.contains("--input-shape"), "{msg}");

    ok(&mase(&["import", &fixture("mlp_gemm_relu.onnx"), "-o", "mlp"], dir));
    let msg = err(&mase(&["passes", "mlp", "--run", "no_such_pass", "-o", "y"], dir));
    assert!(msg.contains("no_such_pass") && msg.contains("add_common_metadata"), "{msg}");
    std::fs::write(dir.join("bad.npy"), b"not a numpy file").unwrap();
    let msg = err(&mase(&["run", "mlp", "--input", "x=bad.npy", "-o", "o.npy"], dir));
    assert!(msg.contains("bad.npy"), "{msg}");
    let msg = err(&mase(&["info", "missing_prefix"], dir));
    assert!(msg.contains("missing_prefix"), "{msg}");
}

#[test]
fn demo_runs_and_never_writes_into_a_directory_it_does_not_own() {
    let tmp = tempfile::tempdir().unwrap();
    let out = ok(&mase(&["demo", "-o", "demo"], tmp.path()));
    assert!(out.contains("encoder layer"), "{out}");
    assert!(tmp.path().join("demo/encoder_layer.svg").exists());
    ok(&mase(&["demo", "-o", "demo"], tmp.path()));

    let theirs = tmp.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("notes.txt"), "mine").unwrap();
    let msg = err(&mase(&["demo", "-o", "theirs"], tmp.path()));
    assert!(msg.contains("theirs"), "{msg}");
    assert_eq!(std::fs::read_to_string(theirs.join("notes.txt")).unwrap(), "mine");
}

/// `mase flow` of the fixture MLP into `hw/` of a temp dir; the dir and the project's `report.json`.
fn emitted_mlp() -> (tempfile::TempDir, serde_json::Value) {
    let tmp = tempfile::tempdir().unwrap();
    ok(&mase(&["flow", &fixture("mlp_gemm_relu.onnx"), "-o", "hw"], tmp.path()));
    let text = std::fs::read_to_string(tmp.path().join("hw/report.json")).unwrap();
    (tmp, serde_json::from_str(&text).unwrap())
}

/// `mase synth DIR` on a small emitted MLP: one row per instance of `report.json`, totals that are
/// the instances plus the top's glue, the report's estimate next to the measurement, DSPs
/// estimated exactly; a directory that is not a project is named in the error.
#[test]
fn synth_of_an_emitted_mlp_lists_instances_totals_and_estimates() {
    let (tmp, report) = emitted_mlp();
    let dir = tmp.path();
    let v: serde_json::Value = serde_json::from_str(&ok(&mase(&["synth", "hw", "--json"], dir))).unwrap();
    let names = |a: &serde_json::Value, suffix: &str| -> Vec<String> {
        a.as_array().unwrap().iter().map(|i| format!("{}{suffix}", i["name"].as_str().unwrap())).collect()
    };
    assert_eq!(names(&v["instances"], ""), names(&report["instances"], "_inst"));
    let field = |r: &serde_json::Value, k: &str| r[k].as_u64().unwrap();
    for k in ["lut", "ff", "dsp", "bram18", "lutram"] {
        let sum: u64 = v["instances"].as_array().unwrap().iter().map(|i| field(&i["measured"], k)).sum();
        assert_eq!(sum + field(&v["glue"], k), field(&v["measured"], k), "{k}: instances + glue = total");
        assert_eq!(field(&v["estimate"], k), field(&report["resources"], k), "{k}: estimate from the report");
    }
    assert!(field(&v["measured"], "lut") > 0 && field(&v["measured"], "ff") > 0);
    assert_eq!(field(&v["estimate"], "dsp"), field(&v["measured"], "dsp"));
    let text = ok(&mase(&["synth", "hw"], dir));
    assert!(text.contains("Gemm_linear_inst") && text.contains("total"), "{text}");
    let e = err(&mase(&["synth", "."], dir));
    assert!(e.contains("files.f") && e.contains("mase emit"), "{e}");
}

/// `mase synth DIR --target ecp5` places and routes a small emitted MLP (nextpnr-ecp5, provisioned
/// when not installed): a positive Fmax, a critical path that starts and ends in instances of the
/// top (named with their components as in `report.json`), every resource within the part and
/// the multipliers the design has; the report is kept in the project, and `mase sim` converts
/// its cycles at that Fmax. ECP5 options without the target, and an unknown part, are refused by
/// name.
#[test]
fn place_and_route_of_an_emitted_mlp_reports_fmax_path_and_utilisation() {
    let (tmp, report) = emitted_mlp();
    let dir = tmp.path();
    let v: serde_json::Value =
        serde_json::from_str(&ok(&mase(&["synth", "hw", "--target", "ecp5", "--json"], dir))).unwrap();
    let fmax = v["fmax_mhz"].as_f64().unwrap();
    assert!(fmax.is_finite() && fmax > 0.0, "{v}");
    assert_eq!(v["met"].as_bool().unwrap(), fmax >= v["options"]["freq_mhz"].as_f64().unwrap());
    let instances: Vec<(String, String)> = report["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (format!("{}_inst", i["name"].as_str().unwrap()), i["component"].as_str().unwrap().to_string())
        })
        .collect();
    let path = &v["critical_path"];
    for end in ["start", "end"] {
        let (inst, comp) =
            (path[end]["instance"].as_str().unwrap(), path[end]["component"].as_str().unwrap());
        assert!(
            instances.iter().any(|(i, c)| i == inst && c == comp),
            "{end}: {inst} ({comp}) not in {instances:?}"
        );
        assert!(path[end]["cell"].as_str().unwrap().starts_with(&format!("{inst}.")));
    }
    let steps: f64 = path["steps"].as_array().unwrap().iter().map(|s| s["delay_ns"].as_f64().unwrap()).sum();
    let (logic, routing) = (path["logic_ns"].as_f64().unwrap(), path["routing_ns"].as_f64().unwrap());
    assert!((logic + routing - steps).abs() < 1e-6 && logic > 0.0 && routing > 0.0, "{path}");
    // The critical path bounds the clock: Fmax = 1 / its delay.
    assert!((1000.0 / (logic + routing) - fmax).abs() / fmax < 0.02, "{fmax} MHz vs {} ns", logic + routing);
    let used = |cell: &str| {
        let u = v["utilisation"].as_array().unwrap().iter().find(|u| u["cell"] == cell).unwrap();
        (u["used"].as_u64().unwrap(), u["available"].as_u64().unwrap())
    };
    for cell in ["TRELLIS_COMB", "TRELLIS_FF", "MULT18X18D", "DP16KD", "TRELLIS_RAMW"] {
        let (u, a) = used(cell);
        assert!(u <= a && a > 0, "{cell}: {u} of {a}");
    }
    assert!(used("TRELLIS_COMB").0 > 0 && used("TRELLIS_FF").0 > 0);
    assert_eq!(
        used("MULT18X18D").0,
        report["resources"]["dsp"].as_u64().unwrap(),
        "one MULT18X18D per multiplier"
    );
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("hw/pnr_ecp5.json")).unwrap()).unwrap();
    assert_eq!(kept["fmax_mhz"], v["fmax_mhz"]);
    // Without a configured clock, `mase sim` gives its measured cycles in time at that Fmax.
    let sim: serde_json::Value = serde_json::from_str(&ok(&mase(
        &["sim", "hw", "--inferences", "3", "--stall-prob", "0", "--json"],
        dir,
    )))
    .unwrap();
    assert_eq!(sim["clock_mhz"].as_f64(), Some(fmax), "{sim}");
    let ii = sim["ii_cycles"].as_f64().unwrap();
    assert!((sim["inferences_per_s"].as_f64().unwrap() * ii - fmax * 1e6).abs() < 1e-3, "{sim}");
    // Emitted again, the project's design may differ: the older report's Fmax is not used.
    std::thread::sleep(std::time::Duration::from_millis(20));
    ok(&mase(&["flow", &fixture("mlp_gemm_relu.onnx"), "-o", "hw"], dir));
    let again: serde_json::Value = serde_json::from_str(&ok(&mase(
        &["sim", "hw", "--inferences", "3", "--stall-prob", "0", "--json"],
        dir,
    )))
    .unwrap();
    assert!(again["ii_cycles"].as_f64().is_some() && again.get("clock_mhz").is_none(), "{again}");

    let e = err(&mase(&["synth", "hw", "--part", "LFE5U-85F"], dir));
    assert!(e.contains("--part") && e.contains("--target ecp5"), "{e}");
    let e = err(&mase(&["synth", "hw", "--target", "ecp5", "--part", "LFE5U-99F"], dir));
    assert!(e.contains("LFE5U-99F") && e.contains("LFE5U-85F"), "{e}");
}

/// `mase parts`: every named part in the table, and in the JSON with the figures a device takes
/// from it (memory_bits = block RAM + UltraRAM), as the library's table has them.
#[test]
fn parts_lists_every_named_part_and_its_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let table = ok(&mase(&["parts"], tmp.path()));
    let json: serde_json::Value = serde_json::from_str(&ok(&mase(&["parts", "--json"], tmp.path()))).unwrap();
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), mase_emit::parts::PARTS.len());
    for (row, p) in rows.iter().zip(mase_emit::parts::PARTS) {
        assert!(table.contains(p.name), "the table lacks {}:\n{table}", p.name);
        assert_eq!(row["name"], p.name);
        let n = |k: &str| row[k].as_u64().unwrap_or_else(|| panic!("{}: no {k}", p.name));
        assert_eq!((n("multipliers"), n("lut")), (p.multipliers, p.lut), "{}", p.name);
        assert_eq!(n("memory_bits"), n("block_ram_bits") + n("ultra_ram_bits"), "{}", p.name);
        assert_eq!(n("memory_bits"), p.memory_bits(), "{}", p.name);
        assert!(!row["source"].as_str().unwrap().is_empty(), "{}: every figure has a source", p.name);
    }
}

/// The figures of `report.json` under `key` as f64.
fn num(v: &serde_json::Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("no number {key} in {v}"))
}

/// `[hardware] clock_mhz`: report.json, the project README and `mase flow`'s figures line give
/// inferences/s and µs next to the cycles; `mase sim` converts its measured cycles at the
/// report's clock or at `--clock-mhz`. Without a clock none of it appears.
#[test]
fn a_clock_gives_inferences_per_second_and_microseconds_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let model = fixture("mlp_gemm_relu.onnx");
    let clock = 125.0;
    std::fs::write(dir.join("flow.toml"), format!("[hardware]\nclock_mhz = {clock}\n")).unwrap();
    let out = ok(&mase(&["flow", &model, "--config", "flow.toml", "-o", "hw"], dir));
    let figures = out.lines().find(|l| l.starts_with("figures")).unwrap();
    assert!(figures.contains(&format!("at {clock} MHz")) && figures.contains("inferences/s"), "{figures}");

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("hw/report.json")).unwrap()).unwrap();
    let (ii, latency) = (num(&report, "ii_cycles"), num(&report, "latency_cycles_estimate"));
    assert_eq!(num(&report, "clock_mhz"), clock);
    assert!((num(&report, "inferences_per_s") * ii - clock * 1e6).abs() < 1e-3, "{report}");
    assert!((num(&report, "latency_us") * clock - latency).abs() < 1e-9, "{report}");
    let readme = std::fs::read_to_string(dir.join("hw/README.md")).unwrap();
    assert!(readme.contains(&format!("at {clock} MHz")) && readme.contains("µs"), "{readme}");

    // Measured: three inferences without stalls give an ii; the report's clock, or the flag's.
    let sim = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["sim", "hw", "--inferences", "3", "--stall-prob", "0", "--json"];
        args.extend(extra);
        serde_json::from_str(&ok(&mase(&args, dir))).unwrap()
    };
    for (extra, want) in [(&[][..], clock), (&["--clock-mhz", "50"][..], 50.0)] {
        let v = sim(extra);
        assert_eq!(num(&v, "clock_mhz"), want);
        assert!((num(&v, "inferences_per_s") * num(&v, "ii_cycles") - want * 1e6).abs() < 1e-3, "{v}");
        assert!((num(&v, "latency_us") * want - num(&v, "latency_cycles")).abs() < 1e-9, "{v}");
    }
    let text = ok(&mase(&["sim", "hw", "--inferences", "3", "--stall-prob", "0"], dir));
    assert!(text.contains(&format!("at {clock} MHz")) && text.contains("report.json"), "{text}");
    let e = err(&mase(&["sim", "hw", "--clock-mhz", "0"], dir));
    assert!(e.contains("--clock-mhz"), "{e}");

    // No clock: none of the real-unit figures.
    let out = ok(&mase(&["flow", &model, "-o", "plain"], dir));
    assert!(!out.contains("MHz"), "{out}");
    let report = std::fs::read_to_string(dir.join("plain/report.json")).unwrap();
    for key in ["clock_mhz", "inferences_per_s", "latency_us"] {
        assert!(!report.contains(key), "{key} without a clock");
    }
    assert!(!std::fs::read_to_string(dir.join("plain/README.md")).unwrap().contains("MHz"));
    let v: serde_json::Value = serde_json::from_str(&ok(&mase(&["sim", "plain", "--json"], dir))).unwrap();
    assert!(v.get("clock_mhz").is_none(), "{v}");

    // A system (one device here): its ii and latency in real units, in the report, its README
    // and the flow's system line.
    let cfg =
        format!("[hardware]\nclock_mhz = {clock}\n[[hardware.devices]]\nname = \"a\"\npart = \"xc7a100t\"\n");
    std::fs::write(dir.join("sys.toml"), cfg).unwrap();
    let out = ok(&mase(&["flow", &model, "--config", "sys.toml", "-o", "sys"], dir));
    assert!(out.lines().any(|l| l.starts_with("system") && l.contains(&format!("at {clock} MHz"))), "{out}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sys/report.json")).unwrap()).unwrap();
    assert_eq!(num(&report, "clock_mhz"), clock);
    assert!((num(&report, "inferences_per_s") * num(&report, "ii_cycles") - clock * 1e6).abs() < 1e-3);
    let latency = num(&report["design"], "latency_cycles_estimate");
    assert!((num(&report, "latency_us") * clock - latency).abs() < 1e-9, "{report}");
    let readme = std::fs::read_to_string(dir.join("sys/README.md")).unwrap();
    assert!(readme.contains(&format!("at {clock} MHz")), "{readme}");
}

/// A device named by its part: the project records the part and its figures, and reads back.
#[test]
fn a_device_named_by_its_part_takes_the_parts_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let p = mase_emit::parts::find("LFE5U-25F").unwrap();
    std::fs::write(
        dir.join("flow.toml"),
        "[hardware]\n[[hardware.devices]]\nname = \"ulx3s\"\npart = \"lfe5u-25f\"\nlut = 20000\n",
    )
    .unwrap();
    ok(&mase(&["flow", &fixture("mlp_gemm_relu.onnx"), "--config", "flow.toml", "-o", "hw"], dir));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("hw/report.json")).unwrap()).unwrap();
    let d = &report["devices_configured"][0];
    assert_eq!(d["part"], p.name);
    assert_eq!(d["multipliers"].as_u64(), Some(p.multipliers));
    assert_eq!(d["memory_bits"].as_u64(), Some(p.memory_bits()));
    assert_eq!(d["lut"].as_u64(), Some(20000), "a key beside the part overrides it");
    // `mase sim` reads the devices back from the report (the golden model alone, no Verilator).
    ok(&mase(&["sim", "hw", "--golden"], dir));
}
