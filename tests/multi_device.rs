//! Models over several devices (`[[hardware.devices]]`): the partition respects every device's
//! budgets, the emitted system is the single-device design cut into device projects joined by
//! links, and under Verilator the whole system is bit-exact with random stalls, its ii where the
//! models put it (the combined budget's with a wide link, the link's with a narrow one).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mase_emit::flow::{run_flow, seeded_inputs, Flow, FlowOptions};
use mase_emit::FlowConfig;
use mase_ir::Tensor;
use mase_sim::{check_project, load_project, RunConfig};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures").join(name)
}

fn try_flow(model: &str, config: &str, dir: &Path) -> mase_ir::Result<Flow> {
    let bytes = std::fs::read(fixture(model)).unwrap();
    let table: toml::Table = config.parse().unwrap();
    let mut opts = FlowOptions::new(model, dir);
    opts.config = FlowConfig::from_table(&table, model, None)?;
    run_flow(&bytes, &opts)
}

fn flow(model: &str, config: &str, dir: &Path) -> Flow {
    try_flow(model, config, dir).unwrap_or_else(|e| panic!("{model}: {e}"))
}

fn samples(f: &Flow, n: u64) -> Vec<HashMap<String, Tensor>> {
    (0..n).map(|k| seeded_inputs(&f.graph, 100 + k).unwrap()).collect()
}

/// Two devices with the given multipliers and memory bits each, and a link of `link_bits` bits
/// per cycle and `latency` cycles between them.
fn two_devices(multipliers: u64, memory_bits: u64, link_bits: usize, latency: usize) -> String {
    format!(
        "[[hardware.devices]]\nname = \"fpga0\"\nmultipliers = {multipliers}\nmemory_bits = {memory_bits}\n\
         link_bits_per_cycle = {link_bits}\nlink_latency_cycles = {latency}\n\
         [[hardware.devices]]\nname = \"fpga1\"\nmultipliers = {multipliers}\nmemory_bits = {memory_bits}\n"
    )
}

/// The single-device design's figures: (memory bits, ii) at a multiplier budget.
fn single(model: &str, budget: u64) -> (u64, u64, Flow) {
    let dir = tempfile::tempdir().unwrap();
    let f = flow(model, &format!("[hardware]\nmultiplier_budget = {budget}\n"), dir.path());
    (f.emitted.report.memory_bits, f.emitted.report.ii_cycles, f)
}

/// Device ids follow the dataflow: every node instance's device is at least that of every
/// instance feeding it, and each device holds no more than its budgets.
fn check_partition(f: &Flow, multipliers: u64, memory_bits: u64) {
    let sys = f.system.as_ref().expect("a configuration with devices gives a system");
    let d = &sys.design;
    for w in &d.wires {
        assert!(sys.placement.of(&w.from) <= sys.placement.of(&w.to), "a stream runs backwards: {w:?}");
    }
    let rep = mase_emit::system_project::system_report(sys).unwrap();
    assert_eq!(rep.devices.len(), 2, "both devices are needed: {:?}", rep.devices);
    for dev in &rep.devices {
        assert!(dev.multipliers <= multipliers, "{}: {} multipliers", dev.device.name, dev.multipliers);
        assert!(dev.memory_bits <= memory_bits, "{}: {} memory bits", dev.device.name, dev.memory_bits);
    }
    for node in f.graph.nodes().map(|(_, n)| n) {
        assert!(
            (0..2).contains(&node.meta.hardware.device_id),
            "{}: device {}",
            node.name,
            node.meta.hardware.device_id
        );
    }
}

/// `verilator --lint-only -Wall` is clean on every device top and on the system top (when
/// Verilator is on PATH: this test also runs on machines without it).
fn lint_all(dir: &Path) {
    if mase_sim::tool::which("verilator").is_none() {
        return;
    }
    let v = mase_sim::tool::verilator().unwrap();
    let mut runs = vec![(dir.join("system"), "top".to_string())];
    for k in 0..2 {
        runs.push((dir.join(format!("device_{k}")), mase_emit::system_project::device_top("top", k)));
    }
    for (cwd, top) in runs {
        let out = v
            .command()
            .args(["--lint-only", "-Wall", "-f", "files.f", "--top-module", &top])
            .current_dir(&cwd)
            .output()
            .unwrap();
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "lint of {top} in {}:\n{}",
            cwd.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_layer_split_by_memory_computes_what_the_single_device_design_computes() {
    // No Verilator: the partition, the emitted files and the golden models only.
    let (mem, _, one) = single("encoder_layer.onnx", 64);
    let per_device = mem * 7 / 10;
    let dir = tempfile::tempdir().unwrap();
    let f = flow("encoder_layer.onnx", &two_devices(64, per_device, 64, 20), dir.path());
    check_partition(&f, 64, per_device);
    for k in 0..2 {
        let (top, core) = mase_emit::system_project::device_files("top", k);
        for file in [top.as_str(), core.as_str(), "files.f", "report.json", "README.md"] {
            assert!(dir.path().join(format!("device_{k}")).join(file).is_file(), "device_{k}/{file}");
        }
    }
    assert!(dir.path().join("system/top.sv").is_file() && dir.path().join("system/files.f").is_file());
    lint_all(dir.path());
    let sys = f.system.as_ref().unwrap();
    assert_eq!(sys.links.len(), 1);
    let inputs = samples(&f, 2);
    let p = load_project(dir.path()).unwrap();
    let codes = mase_sim::quantize_samples(&p, &inputs).unwrap();
    let split = mase_emit::golden::run(&sys.design, &codes).unwrap();
    let whole = mase_emit::golden::run(&one.design, &codes).unwrap();
    assert_eq!(split, whole, "the split design computes other codes than the single-device one");
    // Deterministic bytes.
    let again = tempfile::tempdir().unwrap();
    flow("encoder_layer.onnx", &two_devices(64, per_device, 64, 20), again.path());
    for rel in ["system/top.sv", "device_0/top_device_0.sv", "device_1/top_device_1_core.sv", "report.json"] {
        assert_eq!(
            std::fs::read(dir.path().join(rel)).unwrap(),
            std::fs::read(again.path().join(rel)).unwrap(),
            "{rel} differs between two emits"
        );
    }
}

#[test]
fn the_example_device_configurations_parse() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in ["two_devices_wide.toml", "two_devices_narrow.toml"] {
        let cfg = FlowConfig::from_file(&root.join("examples").join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(cfg.hardware.devices.len(), 2, "{name}");
        assert!(
            cfg.hardware.devices[0].link().is_some() && cfg.hardware.devices[1].link().is_none(),
            "{name}"
        );
    }
}

#[test]
fn budgets_no_device_holds_are_errors_naming_the_node() {
    let (mem, _, _) = single("encoder_layer.onnx", 64);
    let dir = tempfile::tempdir().unwrap();
    // Each device holds a tenth of the weights: the first large linear fits nowhere.
    let e = try_flow("encoder_layer.onnx", &two_devices(64, mem / 10, 64, 20), dir.path())
        .unwrap_err()
        .to_string();
    assert!(e.contains("fits on no device") && e.contains("memory bits") && e.contains("linear"), "{e}");
    let e = try_flow(
        "encoder_layer.onnx",
        "[[hardware.devices]]\nname = \"a\"\nmultipliers = 8\nmemory_bits = 100\n[[hardware.devices]]\nname = \"b\"\nmultipliers = 8\nmemory_bits = 100\n",
        dir.path(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("devices[0]") && e.contains("link_bits_per_cycle"), "{e}");
}

/// Simulates a multi-device project with stalls; returns the report and the RTL's output codes.
fn simulate_outputs(
    dir: &Path,
    f: &Flow,
    inferences: u64,
    stall_prob: f64,
) -> (mase_sim::DesignReport, Vec<Vec<i64>>) {
    let p = load_project(dir).unwrap();
    assert!(p.system.is_some());
    let cfg = RunConfig { seed: 7, stall_prob, ..RunConfig::default() };
    let (run, _) = check_project(&p, &samples(f, inferences), &cfg).unwrap();
    let r = run.report;
    assert!(r.bit_exact, "{} mismatches, first {:?}", r.mismatches, r.first_mismatches);
    assert_eq!(run.outputs, run.expected);
    // The flits the system top counted on each link are the link model's beats × flits.
    let sys = r.system.as_ref().expect("a system run reports its devices and links");
    assert!(!sys.links.is_empty());
    for l in &sys.links {
        assert_eq!(l.measured_cycles, Some(l.model_cycles as f64), "link {}", l.name);
    }
    (r, run.outputs)
}

fn simulate(dir: &Path, f: &Flow, inferences: u64, stall_prob: f64) -> mase_sim::DesignReport {
    simulate_outputs(dir, f, inferences, stall_prob).0
}

#[test]
fn a_layer_split_by_memory_is_bit_exact_under_verilator_and_equal_to_one_device() {
    let (mem, _, one) = single("encoder_layer.onnx", 64);
    let dir = tempfile::tempdir().unwrap();
    let f = flow("encoder_layer.onnx", &two_devices(64, mem * 7 / 10, 64, 20), dir.path());
    let (r, outputs) = simulate_outputs(dir.path(), &f, 2, 0.25);
    assert!(r.system.as_ref().is_some_and(|s| s.devices.len() == 2 && s.links.len() == 1));
    // The RTL's codes are the single-device design's (its golden model, which its own RTL
    // matches bit for bit in flow_e2e) on the same inputs.
    let p = load_project(dir.path()).unwrap();
    let codes = mase_sim::quantize_samples(&p, &samples(&f, 2)).unwrap();
    assert_eq!(outputs, mase_emit::golden::run(&one.design, &codes).unwrap());
}

#[test]
fn two_layers_over_two_devices_reach_the_combined_budget_or_the_link_rate() {
    // Budgets that cannot hold the model on one device: each has 60 % of its memory.
    let per_device_mults = 64;
    let (mem, ii_one, _) = single("encoder_2layer.onnx", 2 * per_device_mults);
    let per_device_mem = mem * 6 / 10;

    // A wide link: the system runs within 10 % of one device with the combined budget.
    let wide = tempfile::tempdir().unwrap();
    let f = flow("encoder_2layer.onnx", &two_devices(per_device_mults, per_device_mem, 512, 30), wide.path());
    check_partition(&f, per_device_mults, per_device_mem);
    let r = simulate(wide.path(), &f, 3, 0.0);
    let ii = r.ii_cycles.expect("three inferences measure an ii");
    assert!(ii <= 1.1 * ii_one as f64, "two devices: ii {ii}, one device with the combined budget {ii_one}");
    let stalled = simulate(wide.path(), &f, 2, 0.2);
    assert!(stalled.bit_exact);
    eprintln!("wide link: system ii {ii} (model {}), single device {ii_one}", r.model_ii_cycles);

    // A narrow link (one bit per cycle) between faster devices: the link is the bottleneck, and
    // the measured ii is the link model's.
    let narrow = tempfile::tempdir().unwrap();
    let f =
        flow("encoder_2layer.onnx", &two_devices(4 * per_device_mults, per_device_mem, 1, 30), narrow.path());
    let sys = f.system.as_ref().unwrap();
    let rep = mase_emit::system_project::system_report(sys).unwrap();
    assert!(rep.bottleneck.starts_with("link"), "bottleneck {}", rep.bottleneck);
    let link_cycles = rep.links[0].link.cycles as f64;
    let r = simulate(narrow.path(), &f, 3, 0.0);
    let ii = r.ii_cycles.unwrap();
    assert!(
        (ii - link_cycles).abs() <= 0.05 * link_cycles,
        "narrow link: measured ii {ii}, link model {link_cycles}"
    );
    eprintln!("narrow link: measured ii {ii}, link model {link_cycles}");
}
