//! Models over several devices (`[[hardware.devices]]`): the partition respects every device's
//! budgets, the emitted system is the single-device design cut into device projects joined by
//! links, and under Verilator the whole system is bit-exact with random stalls, its ii where the
//! models put it (the combined budget's with a wide link, the link's with a narrow one).

mod common;

use std::path::Path;

use common::{flow, onnx_model, onnx_node, samples, try_flow, try_flow_bytes, value_info};
use mase_emit::flow::Flow;
use mase_emit::FlowConfig;
use mase_sim::{check_project, load_project, RunConfig};

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
    assert_same_files(
        dir.path(),
        again.path(),
        &["system/top.sv", "device_0/top_device_0.sv", "device_1/top_device_1_core.sv", "report.json"],
    );
}

/// Each of `files` (relative paths) has the same bytes in the two emits `a` and `b`.
fn assert_same_files(a: &Path, b: &Path, files: &[&str]) {
    for rel in files {
        let read = |d: &Path| std::fs::read(d.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(read(a), read(b), "{rel} differs between two emits");
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

/// Hidden width of [`residual_mlp_onnx`].
const RESIDUAL_HIDDEN: i64 = 128;

/// A residual block, `x → MatMul (16 → 128) → Relu → MatMul (128 → 16) → + x`, over 8 rows of 16,
/// as ONNX bytes built with the importer's protobuf types. Every cut between its two linears is
/// crossed by two streams: the branch (the first linear's or the Relu's output) and `x`, which
/// the residual add still needs on the far side.
fn residual_mlp_onnx() -> Vec<u8> {
    use mase_ir::onnx::proto::*;
    let vi = |name: &str| value_info(name, 1, Some(&[8, 16]));
    let node = |op: &str, inputs: &[&str], out: &str, name: &str| onnx_node(op, name, inputs, out);
    let weight = |name: &str, rows: i64, cols: i64, salt: i64| TensorProto {
        name: name.into(),
        dims: vec![rows, cols],
        data_type: 1,
        float_data: (0..rows * cols)
            .map(|i| ((i * 37 + salt) % 23) as f32 / (4.0 * rows as f32) - 0.06)
            .collect(),
        ..Default::default()
    };
    onnx_model(
        "residual_mlp",
        vec![
            node("MatMul", &["x", "w1"], "h", "up"),
            node("Relu", &["h"], "r", "act"),
            node("MatMul", &["r", "w2"], "d", "down"),
            node("Add", &["d", "x"], "y", "residual"),
        ],
        vec![weight("w1", 16, RESIDUAL_HIDDEN, 5), weight("w2", RESIDUAL_HIDDEN, 16, 11)],
        vec![vi("x")],
        vec![vi("y")],
    )
}

fn try_residual_flow(config: &str, dir: &Path) -> mase_ir::Result<Flow> {
    try_flow_bytes(&residual_mlp_onnx(), "residual_mlp", config, dir)
}

fn residual_flow(config: &str, dir: &Path) -> Flow {
    try_residual_flow(config, dir).unwrap_or_else(|e| panic!("residual_mlp: {e}"))
}

/// The multipliers each device has in the residual tests (enough for the fastest design, so the
/// link is what limits the system).
const RESIDUAL_MULTIPLIERS: u64 = 1024;

/// Memory bits per device that hold either linear's weights but not both (each has
/// `16 × HIDDEN` 8-bit weights, and a linear needs its input buffer besides), with the
/// single-device design: (bits, single-device flow).
fn residual_memory_split() -> (u64, Flow) {
    let dir = tempfile::tempdir().unwrap();
    let one = residual_flow(&format!("[hardware]\nmultiplier_budget = {RESIDUAL_MULTIPLIERS}\n"), dir.path());
    let linear_bits: Vec<u64> = one
        .design
        .instances
        .iter()
        .filter(|i| i.component == "linear")
        .map(|i| mase_hwlib::Component::cost(i.component(), &i.params).memory_bits)
        .collect();
    assert_eq!(linear_bits.len(), 2, "two linears: {:?}", one.design.instances);
    let weights = 16 * RESIDUAL_HIDDEN as u64 * 8;
    assert!(linear_bits.iter().all(|&b| b > weights), "{linear_bits:?}");
    (2 * weights, one)
}

/// The devices of the residual tests: a link of `link_bits` bits per cycle and 12 cycles.
fn residual_devices(memory_bits: u64, link_bits: usize) -> String {
    two_devices(RESIDUAL_MULTIPLIERS, memory_bits, link_bits, 12)
}

/// The links of a boundary several streams share, checked against a computation from the
/// design's streams: each link's width is its share of the boundary's bits in proportion to the
/// bits it carries per inference (at least one each, summing to the boundary's), its cycles are
/// beats × flits at that width, and the boundary's are the slowest link's. Returns the
/// boundary's cycles.
fn check_shared_boundary(sys: &mase_emit::system::System, boundary_bits: usize) -> u64 {
    let links = sys.links_after(0);
    let bits: Vec<u64> = links.iter().map(|l| l.beats * (l.lanes * l.format.width as usize) as u64).collect();
    let total: u64 = bits.iter().sum();
    let widths: Vec<usize> = links.iter().map(|l| l.link_width).collect();
    assert_eq!(widths.iter().sum::<usize>(), boundary_bits, "{widths:?} share {boundary_bits} bits");
    assert!(widths.iter().all(|&w| w >= 1));
    for (w, b) in widths.iter().zip(&bits) {
        let exact = boundary_bits as f64 * *b as f64 / total as f64;
        if exact >= 1.0 {
            assert!((*w as f64 - exact).abs() < 1.0, "width {w}, proportional share {exact} ({bits:?})");
        }
    }
    assert_eq!(widths, mase_hwlib::components::link::share_width(&bits, boundary_bits).unwrap());
    let mut slowest = 0;
    for l in &links {
        let beat_bits = l.lanes * l.format.width as usize;
        let cycles = l.beats * beat_bits.div_ceil(l.link_width) as u64;
        assert_eq!(l.cycles, cycles, "link of `{}`: beats × flits", l.tensor);
        assert_eq!(l.flits, beat_bits.div_ceil(l.link_width));
        slowest = slowest.max(cycles);
        // The instance in the flat design is priced at the link's width too.
        let inst = &sys.design.instances[l.instance];
        assert_eq!(inst.params["LINK_WIDTH"], l.link_width as i64);
        assert_eq!(inst.cycles_per_inference(), cycles, "the cost model prices `{}` at its share", l.tensor);
    }
    for (i, l) in links.iter().enumerate() {
        let sh = l.shared.expect("a shared boundary marks its links");
        assert_eq!(
            (sh.index, sh.links, sh.boundary_width, sh.boundary_cycles),
            (i, links.len(), boundary_bits, slowest)
        );
    }
    slowest
}

#[test]
fn a_cut_crossed_by_two_streams_shares_its_link_and_is_bit_exact_under_verilator() {
    let (memory_bits, one) = residual_memory_split();
    let link_bits = 12;
    let dir = tempfile::tempdir().unwrap();
    let f = residual_flow(&residual_devices(memory_bits, link_bits), dir.path());
    check_partition(&f, RESIDUAL_MULTIPLIERS, memory_bits);
    let sys = f.system.as_ref().unwrap();
    // The memory forces a cut between the linears: the branch (the first linear's output, or the
    // Relu's, whichever crosses faster) and `x` cross, each on a link of its own.
    let device = |name: &str| {
        let id = f.graph.find(name).unwrap_or_else(|| panic!("node {name}"));
        f.graph.node(id).meta.hardware.device_id
    };
    assert_eq!([device("up_linear"), device("down_linear"), device("residual")], [0, 1, 1]);
    let branch = if device("act") == 0 { "act" } else { "up_linear" };
    let links = sys.links_after(0);
    assert_eq!(links.len(), 2, "{links:?}");
    let mut tensors: Vec<&str> = links.iter().map(|l| l.tensor.as_str()).collect();
    tensors.sort();
    assert_eq!(tensors, [branch, "x"]);
    let boundary = check_shared_boundary(sys, link_bits);
    // The narrow link is the bottleneck, and the system ii is the boundary's slowest link.
    let rep = mase_emit::system_project::system_report(sys).unwrap();
    assert!(rep.bottleneck.starts_with("link 'fpga0' -> 'fpga1' #"), "bottleneck {}", rep.bottleneck);
    assert_eq!(rep.ii_cycles, boundary.max(rep.devices.iter().map(|d| d.ii_cycles).max().unwrap()));
    assert_eq!(rep.ii_cycles, boundary, "the link binds");
    lint_all(dir.path());

    // Bit-exact under stalls, each link carrying the flits its model says, and the same codes as
    // the single-device design.
    let (r, outputs) = simulate_outputs(dir.path(), &f, 2, 0.25);
    let figures = r.system.as_ref().unwrap();
    assert_eq!(figures.links.len(), 2);
    assert!(figures.links.iter().all(|l| l.name.starts_with("fpga0 -> fpga1 #")), "{:?}", figures.links);
    let p = load_project(dir.path()).unwrap();
    let codes = mase_sim::quantize_samples(&p, &samples(&f, 2)).unwrap();
    assert_eq!(outputs, mase_emit::golden::run(&one.design, &codes).unwrap());

    // Without stalls the measured ii is the boundary's: its slowest link.
    let r = simulate(dir.path(), &f, 3, 0.0);
    let ii = r.ii_cycles.expect("three inferences measure an ii");
    assert!(
        (ii - boundary as f64).abs() <= 0.05 * boundary as f64,
        "measured ii {ii}, boundary model {boundary}"
    );
    for l in &links {
        eprintln!(
            "link of `{}`: {} of {link_bits} bits, {} beats x {} flits = {} cycles",
            l.tensor, l.link_width, l.beats, l.flits, l.cycles
        );
    }
    eprintln!("two streams over {link_bits} bits: boundary model {boundary} cycles, measured ii {ii}");

    // Deterministic bytes.
    let again = tempfile::tempdir().unwrap();
    residual_flow(&residual_devices(memory_bits, link_bits), again.path());
    assert_same_files(
        dir.path(),
        again.path(),
        &[
            "system/top.sv",
            "device_0/top_device_0.sv",
            "device_1/top_device_1.sv",
            "report.json",
            "README.md",
        ],
    );
}

#[test]
fn a_boundary_with_fewer_bits_than_streams_is_an_error_naming_it() {
    let (memory_bits, _) = residual_memory_split();
    // The partition: every cut between the linears needs two bits.
    let dir = tempfile::tempdir().unwrap();
    let e = try_residual_flow(&residual_devices(memory_bits, 1), dir.path()).unwrap_err().to_string();
    assert!(e.contains("fits on no device") && e.contains("at least one bit each"), "{e}");
    // A saved project whose devices were edited to a one-bit link: loading names the boundary
    // and its streams.
    let f = residual_flow(&residual_devices(memory_bits, 4), dir.path());
    let sys = f.system.as_ref().unwrap();
    assert_eq!(sys.links.len(), 2);
    // Sharing 4 bits makes the boundary slower than either stream alone on all of them: the
    // partition's bound on the ii allows for it, and the system runs at the boundary's pace.
    let boundary = check_shared_boundary(sys, 4);
    let alone = sys
        .links_after(0)
        .iter()
        .map(|l| l.beats * (l.lanes * l.format.width as usize).div_ceil(4) as u64)
        .max()
        .unwrap();
    assert!(boundary > alone, "boundary {boundary}, slowest stream alone {alone}");
    assert_eq!(mase_emit::system_project::system_report(sys).unwrap().ii_cycles, boundary);
    let path = dir.path().join("report.json");
    let mut report: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    report["devices_configured"][0]["link_bits_per_cycle"] = 1.into();
    std::fs::write(&path, serde_json::to_vec(&report).unwrap()).unwrap();
    let e = load_project(dir.path()).unwrap_err().to_string();
    assert!(
        e.contains("'fpga0' and 'fpga1' is crossed by 2 streams")
            && e.contains("(x, ")
            && e.contains("at least one bit")
            && e.contains("link_bits_per_cycle"),
        "{e}"
    );
}
