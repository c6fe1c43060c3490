//! End to end: ONNX fixtures → import → quantize → hardware passes → emitted project →
//! Verilator, every output element checked against the graph-level golden model under random
//! stalls, accuracy against the float interpreter, lint of the emitted top, deterministic bytes,
//! snapshots of `top.sv` and `report.json`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{fixture, flow, onnx_model, onnx_node, samples, try_flow_bytes, value_info};
use mase_emit::flow::{run_flow, Flow, FlowOptions};
use mase_emit::FlowConfig;
use mase_ir::Tensor;
use mase_sim::{check_project, load_project, RunConfig};

/// Builds, simulates with stalls and checks bit-exactness; returns the cosine against float.
fn verify(
    dir: &Path,
    f: &Flow,
    inferences: u64,
    stall_prob: f64,
    seed: u64,
) -> (f64, mase_sim::DesignReport) {
    let p = load_project(dir).unwrap();
    let cfg = RunConfig { seed, stall_prob, ..RunConfig::default() };
    let (run, acc) = check_project(&p, &samples(f, inferences), &cfg).unwrap();
    let r = run.report;
    assert!(r.bit_exact, "{}: {} mismatches, first {:?}", f.graph.name, r.mismatches, r.first_mismatches);
    assert_eq!(run.outputs, run.expected);
    (acc.cosine, r)
}

/// [`verify`] with stalls at 0.3, a cosine of at least 0.98 against float, the figures printed,
/// then the project linted.
fn verify_close_and_lint(dir: &Path, f: &Flow, inferences: u64, seed: u64) {
    let (cos, r) = verify(dir, f, inferences, 0.3, seed);
    assert!(cos >= 0.98, "{}: cosine {cos}", f.graph.name);
    eprintln!(
        "{}: cosine {cos:.5}, latency {}, ii {:?} (bound {})",
        f.graph.name, r.latency_cycles, r.ii_cycles, r.model_ii_cycles
    );
    lint(dir);
}

fn lint(dir: &Path) {
    let v = mase_sim::tool::verilator().expect("Verilator is needed for the end-to-end tests");
    let out = v
        .command()
        .args(["--lint-only", "-Wall", "-f", "files.f", "--top-module", "top"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "lint of {}:\n{}", dir.display(), String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "lint warnings:\n{}", String::from_utf8_lossy(&out.stderr));
}

/// Yosys 0.23 synthesizes the emitted project as its README says (memories read from `mem/`
/// through the top's `MEM_DIR`); returns the log with the `stat` figures.
fn synthesize(dir: &Path, top: &str) -> String {
    let yosys = mase_sim::tool::yosys().unwrap_or_else(|e| panic!("{e}"));
    let files = std::fs::read_to_string(dir.join("files.f"))
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let script = format!("read_verilog -sv {files}; synth_xilinx -top {top}; stat");
    let out = yosys.command().arg("-p").arg(&script).current_dir(dir).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !text.contains("ERROR"),
        "yosys failed:\n{}",
        mase_sim::tool::tail(&text, 30)
    );
    text
}

const EIGHT_BIT: &str = "[passes.auto_precision]\nwidth = 8\nweight_width = 8\nbias_width = 8\n";

#[test]
fn mlp_gemm_relu_8bit_is_bit_exact() {
    let dir = tempfile::tempdir().unwrap();
    let f = flow("mlp_gemm_relu.onnx", EIGHT_BIT, dir.path());
    verify_close_and_lint(dir.path(), &f, 4, 7);
    let stat = synthesize(dir.path(), "top");
    let dsps: u64 = stat
        .lines()
        .filter(|l| l.trim_start().starts_with("DSP48E1"))
        .filter_map(|l| l.split_whitespace().last()?.parse().ok())
        .next_back()
        .expect("the linears map onto DSPs");
    assert!(
        dsps <= f.emitted.report.multipliers,
        "{dsps} DSPs for {} multipliers",
        f.emitted.report.multipliers
    );
}

#[test]
fn mlp_matmul_gelu_8bit_is_bit_exact() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = format!("{EIGHT_BIT}[hardware]\nlanes = 2\n");
    let f = flow("mlp_matmul_gelu.onnx", &cfg, dir.path());
    verify_close_and_lint(dir.path(), &f, 4, 3);
}

#[test]
fn encoder_layer_16bit_is_bit_exact_and_runs_at_its_slowest_stage() {
    let dir = tempfile::tempdir().unwrap();
    let f = flow("encoder_layer.onnx", "", dir.path());
    let (cos, r) = verify(dir.path(), &f, 2, 0.25, 11);
    assert!(cos >= 0.99, "cosine {cos}");
    // Without stalls the measured rate must be within 1.25× of the slowest stage's bound.
    let (_, fast) = verify(dir.path(), &f, 3, 0.0, 1);
    let ii = fast.ii_cycles.expect("3 inferences give a rate");
    let bound = fast.model_ii_cycles as f64;
    assert!(ii <= 1.25 * bound, "ii {ii} cycles per inference against the bound {bound}");
    // The latency model is an estimate from the cost models: within 15 % of the stall-free run.
    let (measured, model) = (fast.latency_cycles as f64, fast.model_latency_cycles as f64);
    assert!(
        (model - measured).abs() <= 0.15 * measured,
        "latency model {model} cycles against {measured} measured"
    );
    eprintln!(
        "encoder layer 16/8: cosine {cos:.6}, bit-exact with stalls (latency {}), no-stall ii {ii:.0} (bound {bound}), no-stall latency {measured} (model {model}), {} multipliers, build {:.1} s",
        r.latency_cycles, f.emitted.report.multipliers, r.build_s
    );
    lint(dir.path());
}

#[test]
fn encoder_2layer_16bit_is_bit_exact() {
    // Two stacked encoder_layer-sized layers on one device: the second layer's inputs are the
    // first one's quantized outputs, through one stitched top.
    let dir = tempfile::tempdir().unwrap();
    let f = flow("encoder_2layer.onnx", "", dir.path());
    for layer in 0..2 {
        let prefix = format!("encoder_layer_{layer}_");
        assert!(
            f.design.instances.iter().any(|i| i.node.starts_with(&prefix)),
            "no instance of layer {layer} in the design"
        );
    }
    let (cos, r) = verify(dir.path(), &f, 2, 0.25, 11);
    assert!(cos >= 0.99, "cosine {cos}");
    eprintln!(
        "encoder_2layer 16/8: cosine {cos:.6}, bit-exact with stalls, latency {}, ii {:?} (bound {}), {} multipliers, build {:.1} s",
        r.latency_cycles, r.ii_cycles, r.model_ii_cycles, f.emitted.report.multipliers, r.build_s
    );
    lint(dir.path());
}

fn read_all(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn emitted_projects_are_deterministic_and_match_their_snapshots() {
    for (model, cfg) in [("mlp_gemm_relu.onnx", EIGHT_BIT), ("encoder_layer.onnx", "")] {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        flow(model, cfg, a.path());
        flow(model, cfg, b.path());
        let (fa, fb) = (read_all(a.path()), read_all(b.path()));
        assert_eq!(fa.keys().collect::<Vec<_>>(), fb.keys().collect::<Vec<_>>());
        for (k, v) in &fa {
            assert!(v == &fb[k], "{model}: {} differs between two emits", k.display());
        }
        // Re-emitting into the same directory is allowed and gives the same bytes.
        flow(model, cfg, a.path());
        assert_eq!(read_all(a.path()), fa);
        let stem = model.trim_end_matches(".onnx");
        let top = String::from_utf8(fa[Path::new("top.sv")].clone()).unwrap();
        insta::assert_snapshot!(format!("{stem}_top_sv"), top);
        let report = String::from_utf8(fa[Path::new("report.json")].clone()).unwrap();
        insta::assert_snapshot!(format!("{stem}_report_json"), report);
    }
}

#[test]
fn emit_refuses_a_foreign_directory_and_sim_detects_an_edited_top() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let bytes = std::fs::read(fixture("mlp_gemm_relu.onnx")).unwrap();
    let err = run_flow(&bytes, &FlowOptions::new("mlp", dir.path())).unwrap_err();
    assert!(err.to_string().contains("not written by `mase emit`"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(), "mine");

    let dir = tempfile::tempdir().unwrap();
    flow("mlp_gemm_relu.onnx", EIGHT_BIT, dir.path());
    let top = dir.path().join("top.sv");
    let text = std::fs::read_to_string(&top).unwrap();
    std::fs::write(&top, text.replace("endmodule", "// edited\nendmodule")).unwrap();
    let err = load_project(dir.path()).unwrap_err();
    assert!(err.to_string().contains("edited or is stale"), "{err}");
}

#[test]
fn unsupported_ops_are_named_with_their_node() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(fixture("neg_mul_tensor.onnx")).unwrap();
    let err = run_flow(&bytes, &FlowOptions::new("neg_mul_tensor", dir.path())).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("node '") && msg.contains("no hardware component implements"), "{msg}");
    assert!(msg.contains("linear, matmul"), "the message lists what is supported: {msg}");
    // Nothing was written.
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[test]
fn cli_flow_then_sim() {
    // The README's walkthrough: the example flow configuration, then `mase sim` on a data file.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("proj");
    let cfg = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/flow_mlp_int8.toml");
    let mase = env!("CARGO_BIN_EXE_mase");
    let st = Command::new(mase)
        .args([
            "flow",
            fixture("mlp_gemm_relu.onnx").to_str().unwrap(),
            "--config",
            cfg.to_str().unwrap(),
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let st = Command::new(mase)
        .args(["sim", out.to_str().unwrap(), "--input"])
        .arg(format!("x={}", fixture("mlp_gemm_relu.in.x.npy").display()))
        .args(["--json"])
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let v: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(v["bit_exact"], true);
    assert_eq!(v["mismatches"], 0);
    let codes = mase_ir::npy::read_npy(out.join("sim").join("Gemm_1_linear.codes.npy")).unwrap();
    assert_eq!(codes.shape()[1..], [4, 10]);
    // The golden model alone (no Verilator) writes the same codes.
    let st = Command::new(mase)
        .args(["sim", out.to_str().unwrap(), "--golden", "--input"])
        .arg(format!("x={}", fixture("mlp_gemm_relu.in.x.npy").display()))
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let golden = mase_ir::npy::read_npy(out.join("sim").join("Gemm_1_linear.codes.npy")).unwrap();
    assert_eq!(golden, codes);
}

fn external_flow(manifest: &Path, dir: &Path) -> mase_ir::Result<Flow> {
    let bytes = std::fs::read(fixture("mlp_gemm_relu.onnx")).unwrap();
    let cfg = format!("{EIGHT_BIT}[hardware.nodes.Relu]\nexternal = {:?}\n", manifest.display().to_string());
    let table: toml::Table = cfg.parse().unwrap();
    let mut opts = FlowOptions::new("mlp_gemm_relu.onnx", dir);
    opts.config = FlowConfig::from_table(&table, "mlp_gemm_relu.onnx", None)?;
    run_flow(&bytes, &opts)
}

#[test]
fn external_user_module_with_float_op_model_is_bit_exact() {
    let dir = tempfile::tempdir().unwrap();
    let f = external_flow(&fixture("external/user_relu.toml"), dir.path()).unwrap();
    let relu = f.graph.node(f.graph.find("Relu").unwrap());
    assert_eq!(relu.meta.hardware.toolchain, Some(mase_ir::metadata::Toolchain::External));
    assert_eq!(relu.meta.hardware.module.as_deref(), Some("user_relu"));
    assert_eq!(relu.meta.hardware.verilog_param["LANES"], 2);
    let top = std::fs::read_to_string(dir.path().join("top.sv")).unwrap();
    assert!(top.contains("user_relu #("), "the top instantiates the user's module");
    assert!(
        dir.path().join("rtl/user_relu.sv").exists()
            && dir.path().join("external/Relu/manifest.toml").exists()
    );
    // The project is self-contained: `mase sim` finds the copied manifest.
    verify_close_and_lint(dir.path(), &f, 3, 5);
}

#[test]
fn external_user_module_with_table_model_is_bit_exact() {
    // A table model: output code per input code, computed here from the ReLU definition.
    let dir = tempfile::tempdir().unwrap();
    let quant = tempfile::tempdir().unwrap();
    let probe = external_flow(&fixture("external/user_relu.toml"), quant.path()).unwrap();
    let relu = probe.graph.node(probe.graph.find("Relu").unwrap());
    let fmt = mase_hwlib::NodeView::new(&probe.graph, relu).in_format(0).unwrap();
    let codes: Vec<i64> = (fmt.min_code()..=fmt.max_code()).map(|c| c.max(0)).collect();
    let man_dir = tempfile::tempdir().unwrap();
    let n = codes.len();
    mase_ir::npy::write_npy(man_dir.path().join("relu.npy"), &Tensor::from_i64(&[n], codes).unwrap())
        .unwrap();
    let sv = fixture("external/user_relu.sv");
    let manifest = format!(
        "module = \"user_relu\"\nsources = [{:?}]\nlanes = 4\nlatency_cycles = 1\noutput_format = \"input\"\n\
         [parameters]\nDATA_WIDTH = \"data_in_0.width\"\nLANES = \"lanes\"\n[model]\nkind = \"table\"\nfile = \"relu.npy\"\n",
        sv.display().to_string()
    );
    std::fs::write(man_dir.path().join("m.toml"), manifest).unwrap();
    let f = external_flow(&man_dir.path().join("m.toml"), dir.path()).unwrap();
    assert!(dir.path().join("external/Relu/table.npy").exists());
    verify(dir.path(), &f, 2, 0.3, 9);
}

#[test]
fn external_manifest_errors_name_what_is_wrong() {
    let man_dir = tempfile::tempdir().unwrap();
    let sv = fixture("external/user_relu.sv").display().to_string();
    let cases = [
        // A parameter the module does not declare: caught at emit time against the header.
        (format!("module = \"user_relu\"\nsources = [{sv:?}]\n[parameters]\nWIDTH = 8\n[model]\nkind = \"float_op\"\n"), "WIDTH"),
        (format!("module = \"other\"\nsources = [{sv:?}]\n[model]\nkind = \"float_op\"\n"), "no readable header of module other"),
        ("module = \"user_relu\"\nsources = [\"missing.sv\"]\n[model]\nkind = \"float_op\"\n".to_string(), "missing.sv"),
        (format!("module = \"user_relu\"\nsources = [{sv:?}]\n[model]\nkind = \"magic\"\n"), "kind = \"magic\""),
        (format!("module = \"user_relu\"\nsources = [{sv:?}]\n[parameters]\nW = \"data_in_0.size\"\n[model]\nkind = \"float_op\"\n"), "unknown quantity"),
    ];
    for (text, needle) in cases {
        std::fs::write(man_dir.path().join("m.toml"), &text).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let err = external_flow(&man_dir.path().join("m.toml"), dir.path()).unwrap_err().to_string();
        assert!(err.contains(needle), "expected `{needle}` in: {err}");
    }
}

#[test]
fn every_single_pattern_fixture_flows_to_a_bit_exact_design() {
    // One raised op per model (gelu erf/tanh forms, layer norm with and without affine, linear
    // without bias or with a transposed weight, mul/div by a scalar), default flow, with stalls.
    let mut n = 0;
    for entry in std::fs::read_dir(fixture("")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !(name.starts_with("pat_") && name.ends_with(".onnx")) {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let f = flow(&name, "", dir.path());
        let (cos, _) = verify(dir.path(), &f, 2, 0.3, 13);
        assert!(cos >= 0.999, "{name}: cosine {cos}");
        n += 1;
    }
    assert!(n >= 10, "only {n} pattern fixtures found");
}

#[test]
fn external_user_module_with_a_rust_model_is_bit_exact() {
    // A program using the library registers the golden model of its module.
    mase_emit::external::register_model(
        "user_relu_model",
        std::sync::Arc::new(|_ext, stim| {
            let x = stim.inputs.get("data_in_0").ok_or("no input")?;
            Ok([("data_out_0".to_string(), x.iter().map(|c| (*c).max(0)).collect())].into_iter().collect())
        }),
    );
    let man_dir = tempfile::tempdir().unwrap();
    let sv = fixture("external/user_relu.sv").display().to_string();
    let manifest = format!(
        "module = \"user_relu\"\nsources = [{sv:?}]\nlanes = 4\noutput_format = \"input\"\n[parameters]\n\
         DATA_WIDTH = \"data_in_0.width\"\nLANES = \"lanes\"\n[model]\nkind = \"rust\"\nname = \"user_relu_model\"\n"
    );
    std::fs::write(man_dir.path().join("m.toml"), manifest).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = external_flow(&man_dir.path().join("m.toml"), dir.path()).unwrap();
    verify(dir.path(), &f, 2, 0.3, 21);
    // An unregistered name is an error that says how to register one.
    std::fs::write(
        man_dir.path().join("m2.toml"),
        format!("module = \"user_relu\"\nsources = [{sv:?}]\n[model]\nkind = \"rust\"\nname = \"nope\"\n"),
    )
    .unwrap();
    let e = external_flow(&man_dir.path().join("m2.toml"), tempfile::tempdir().unwrap().path()).unwrap_err();
    assert!(e.to_string().contains("register_model"), "{e}");
}

#[test]
fn two_graph_outputs_one_feeding_on_and_a_trailing_reshape() {
    let dir = tempfile::tempdir().unwrap();
    let f = flow("mlp_two_outputs.onnx", EIGHT_BIT, dir.path());
    let outs: Vec<_> =
        f.design.ports.iter().filter(|p| p.dir == mase_emit::design::PortDir::Output).collect();
    assert_eq!(outs.len(), 2);
    assert_eq!(outs[1].shape, [2, 20], "the port carries the graph output's own shape");
    let (cos, _) = verify(dir.path(), &f, 3, 0.3, 17);
    assert!(cos >= 0.98, "cosine {cos}");
}

#[test]
fn per_channel_weights_are_bit_exact_and_no_less_accurate() {
    // The encoder layer at 16-bit activations and 6-bit weights: per-channel fractions keep the
    // small channels' precision, and the linears' alignment shifts are bit-exact in RTL.
    let base = "[passes.auto_precision]\nwidth = 16\nweight_width = 6\nbias_width = 16\n";
    let per_tensor_dir = tempfile::tempdir().unwrap();
    let per_tensor = flow("encoder_layer.onnx", base, per_tensor_dir.path());
    let dir = tempfile::tempdir().unwrap();
    let f = flow("encoder_layer.onnx", &format!("{base}weight_granularity = \"per_channel\"\n"), dir.path());
    let linears: Vec<_> = f.graph.nodes().filter(|(_, n)| n.op.mase_op() == "linear").collect();
    assert!(!linears.is_empty());
    for (_, n) in &linears {
        let p = &n.meta.hardware.verilog_param;
        assert_eq!(p["WEIGHT_PER_CHANNEL"], 1, "{}", n.name);
        let (_, key) = n.op.weight_names()[0];
        let fracs = f.graph.qweights[key].channel_frac.as_ref().expect("per-channel fractions");
        let spread = fracs.iter().max().unwrap() - fracs.iter().min().unwrap();
        assert!(spread < 1 << p["WEIGHT_SHIFT_WIDTH"], "{}: spread {spread}", n.name);
    }
    let (cos, _) = verify(dir.path(), &f, 2, 0.3, 11);
    let (cos_tensor, _) = verify(per_tensor_dir.path(), &per_tensor, 2, 0.3, 11);
    eprintln!("encoder layer, 6-bit weights: cosine per-tensor {cos_tensor:.5}, per-channel {cos:.5}");
    assert!(cos >= cos_tensor, "per-channel {cos} below per-tensor {cos_tensor}");
    lint(dir.path());
}

/// The `gelu` parameters the flow chose for node `name`.
fn gelu_params(f: &Flow, name: &str) -> indexmap::IndexMap<String, i64> {
    let id = f.graph.find(name).unwrap_or_else(|| panic!("no node {name}"));
    f.graph.node(id).meta.hardware.verilog_param.clone()
}

#[test]
fn gelu_16bit_defaults_to_the_interpolated_form_and_a_node_can_pick_its_form() {
    // 16-bit activations: the full table would exceed the 16 kbit budget, so the default is the
    // interpolated form; it is bit-exact under stalls and lint-clean.
    let dir = tempfile::tempdir().unwrap();
    let f = flow("mlp_matmul_gelu.onnx", "[hardware]\nlanes = 2\n", dir.path());
    let p = gelu_params(&f, "Erf_gelu");
    assert_eq!(p["FORM"], 1, "{p:?}");
    let (cos, _) = verify(dir.path(), &f, 3, 0.3, 5);
    assert!(cos >= 0.999, "cosine {cos}");
    lint(dir.path());
    // `form = "table"` keeps the full table for the same node.
    let dir2 = tempfile::tempdir().unwrap();
    let cfg = "[hardware]\nlanes = 2\n[hardware.nodes.Erf_gelu]\nform = \"table\"\n";
    let f2 = flow("mlp_matmul_gelu.onnx", cfg, dir2.path());
    assert_eq!(gelu_params(&f2, "Erf_gelu")["FORM"], 0);
    // 8-bit: the full table is small, and it is the default.
    let dir3 = tempfile::tempdir().unwrap();
    let f3 = flow("mlp_matmul_gelu.onnx", EIGHT_BIT, dir3.path());
    assert_eq!(gelu_params(&f3, "Erf_gelu")["FORM"], 0);
}

/// A BERT pooler's shape, `MatMul` by a constant then `Tanh` over rows of 16, as ONNX bytes built
/// with the importer's protobuf types.
fn dense_tanh_onnx() -> Vec<u8> {
    use mase_ir::onnx::proto::*;
    let vi = |name: &str| value_info(name, 1, Some(&[2, 16]));
    // Weights large enough that the pre-activations reach tanh's saturation.
    let w: Vec<f32> = (0..256).map(|i| ((i * 37 % 29) as f32 - 14.0) / 6.0).collect();
    onnx_model(
        "dense_tanh",
        vec![onnx_node("MatMul", "MatMul_0", &["x", "w"], "h"), onnx_node("Tanh", "Tanh_0", &["h"], "y")],
        vec![TensorProto {
            name: "w".into(),
            dims: vec![16, 16],
            data_type: 1,
            float_data: w,
            ..Default::default()
        }],
        vec![vi("x")],
        vec![vi("y")],
    )
}

#[test]
fn tanh_binds_in_both_forms_and_is_bit_exact() {
    let bytes = dense_tanh_onnx();
    let run = |config: &str, dir: &Path| {
        try_flow_bytes(&bytes, "dense_tanh", config, dir).unwrap_or_else(|e| panic!("dense_tanh: {e}"))
    };
    // 16-bit activations: the interpolated form.
    let dir = tempfile::tempdir().unwrap();
    let f = run("[hardware]\nlanes = 2\n", dir.path());
    let id = f.graph.find("Tanh_0").expect("node Tanh_0");
    let p = f.graph.node(id).meta.hardware.verilog_param.clone();
    assert_eq!(p["FORM"], 1, "{p:?}");
    let (cos, _) = verify(dir.path(), &f, 3, 0.3, 5);
    assert!(cos >= 0.999, "cosine {cos}");
    lint(dir.path());
    // 8 bits: the full table over the magnitudes up to the saturation point.
    let dir8 = tempfile::tempdir().unwrap();
    let f8 = run(EIGHT_BIT, dir8.path());
    let id = f8.graph.find("Tanh_0").expect("node Tanh_0");
    let p8 = f8.graph.node(id).meta.hardware.verilog_param.clone();
    assert_eq!(p8["FORM"], 0, "{p8:?}");
    assert!(p8["TABLE_POS"] < 128, "{p8:?}");
    verify(dir8.path(), &f8, 3, 0.3, 6);
}

#[test]
fn an_unknown_form_is_an_error_naming_the_node_and_the_forms() {
    let bytes = std::fs::read(fixture("mlp_matmul_gelu.onnx")).unwrap();
    for (node, want) in [("Erf_gelu", "supported: \"table\", \"interp\""), ("MatMul_linear", "no forms")] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = format!("[hardware.nodes.{node}]\nform = \"cordic\"\n");
        let mut opts = FlowOptions::new("mlp_matmul_gelu.onnx", dir.path());
        opts.config = FlowConfig::from_table(&cfg.parse().unwrap(), "cfg", None).unwrap();
        let err = match run_flow(&bytes, &opts) {
            Ok(_) => panic!("{node}: an unknown form must be rejected"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains(node) && err.contains("cordic") && err.contains(want), "{err}");
    }
}

/// A classifier head's shape: `x [2, 4, 8]` → `MatMul` by a constant → `Gather(axis, indices)`
/// (the pooler's token selection) → `MatMul` by a constant (when `head`; else the gather is the
/// output), as ONNX bytes built with the importer's protobuf types. `indices` is an int64
/// initializer of shape `idx_dims`, or with `None` a scalar int64 graph input.
fn gather_head_onnx(axis: i64, idx_dims: &[i64], indices: Option<&[i64]>, head: bool) -> Vec<u8> {
    use mase_ir::onnx::proto::*;
    let node = |op: &str, inputs: [&str; 2], out: &str| onnx_node(op, &format!("{op}_{out}"), &inputs, out);
    let weight = |name: &str, k: usize| TensorProto {
        name: name.into(),
        dims: vec![8, 8],
        data_type: 1,
        float_data: (0..64).map(|i| (((i * 37 + k * 11) % 17) as f32 - 8.0) / 16.0).collect(),
        ..Default::default()
    };
    let mut gather = node("Gather", ["h", "idx"], "g");
    gather.attribute = vec![AttributeProto {
        name: "axis".into(),
        r#type: attr_type::INT,
        i: Some(axis),
        ..Default::default()
    }];
    let mut nodes = vec![node("MatMul", ["x", "w1"], "h"), gather];
    if head {
        nodes.push(node("MatMul", ["g", "w2"], "y"));
    }
    onnx_model(
        "gather_head",
        nodes,
        [weight("w1", 1), weight("w2", 2)]
            .into_iter()
            .chain(indices.map(|v| TensorProto {
                name: "idx".into(),
                dims: idx_dims.to_vec(),
                data_type: 7,
                int64_data: v.to_vec(),
                ..Default::default()
            }))
            .collect(),
        [value_info("x", 1, Some(&[2, 4, 8]))]
            .into_iter()
            .chain(indices.is_none().then(|| value_info("idx", 7, Some(&[]))))
            .collect(),
        // The output's shape is left to inference (it depends on the indices).
        vec![value_info(if head { "y" } else { "g" }, 1, None)],
    )
}

/// 8-bit formats from a quantize config: no calibration, so a graph with an integer input flows.
const QUANTIZE_8BIT: &str = "[passes.quantize.default.config]\nname = \"integer\"\n\
    data_in_width = 8\ndata_in_frac_width = 4\nweight_width = 8\nweight_frac_width = 6\n\
    bias_width = 8\nbias_frac_width = 4\ndata_out_width = 8\ndata_out_frac_width = 4\n";

fn gather_opts(dir: &Path, config: &str) -> FlowOptions {
    let table: toml::Table = format!("{config}[hardware]\nlanes = 2\n").parse().unwrap();
    let mut opts = FlowOptions::new("gather_head", dir);
    opts.config = FlowConfig::from_table(&table, "gather_head", None).unwrap();
    opts
}

fn gather_flow(bytes: &[u8], dir: &Path, config: &str) -> mase_ir::Result<Flow> {
    run_flow(bytes, &gather_opts(dir, config))
}

#[test]
fn gather_of_one_token_binds_to_row_select_and_is_bit_exact() {
    // index 0 (the pooler's first token), the last index, and -3 (= 1), as a scalar and as a
    // one-element 1-D index (which keeps the axis: [2, 1, 8]).
    for (dims, index, kept) in [(vec![], 0, 0), (vec![], 3, 3), (vec![], -3, 1), (vec![1], 2, 2)] {
        let bytes = gather_head_onnx(1, &dims, Some(&[index]), true);
        let dir = tempfile::tempdir().unwrap();
        let f = gather_flow(&bytes, dir.path(), "").unwrap_or_else(|e| panic!("index {index}: {e}"));
        let id = f.graph.find("Gather_g").expect("node Gather_g");
        let hw = &f.graph.node(id).meta.hardware;
        assert_eq!(hw.module.as_deref(), Some("mase_row_select"));
        let p = &hw.verilog_param;
        assert_eq!((p["GROUP"], p["INNER"], p["INDEX"]), (4, 1, kept), "index {index}: {p:?}");
        let (cos, r) = verify(dir.path(), &f, 3, 0.3, 11 + kept as u64);
        assert!(cos >= 0.99, "index {index}: cosine {cos}");
        eprintln!(
            "gather index {index}: cosine {cos:.5}, latency {}, ii {:?}",
            r.latency_cycles, r.ii_cycles
        );
        lint(dir.path());
    }
}

/// A gather the library does not implement runs on the host. With a linear after it, the device
/// runs that linear and the host the gather (and the linear before it, which the gather pulls
/// onto the host); with nothing left for the device, the flow's error names the node and the
/// scope of what the library implements, as the hardware passes do on the whole graph.
#[test]
fn unsupported_gathers_run_on_the_host_or_are_named_with_the_scope() {
    let cases = [
        (gather_head_onnx(2, &[], Some(&[1]), false), "last axis"),
        (gather_head_onnx(-1, &[], Some(&[1]), false), "last axis"),
        (gather_head_onnx(1, &[2], Some(&[0, 1]), true), "2 indices"),
        (
            gather_head_onnx(1, &[], None, true),
            "indices are computed by node 'idx' (`placeholder`), not a constant",
        ),
    ];
    let named = |err: String, want: &str| {
        assert!(
            err.contains("Gather_g") && err.contains(want) && err.contains("one constant index"),
            "{err}"
        );
    };
    for (k, (bytes, want)) in cases.into_iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let opts = gather_opts(dir.path(), QUANTIZE_8BIT);
        let head = k >= 2;
        match run_flow(&bytes, &opts) {
            Ok(f) if head => {
                let h = f.host.as_ref().unwrap_or_else(|| panic!("{want}: the gather runs on the host"));
                assert!(h.pre.find("Gather_g").is_some(), "{want}: the pre part computes the gather");
                // The device takes the gather's result as an input.
                let on_device = f.graph.find("Gather_g").map(|i| f.graph.node(i).op.mase_op());
                assert_eq!(on_device, Some("placeholder"), "{want}");
            }
            Ok(_) => panic!("{want}: nothing is left for the device, the flow must say why"),
            Err(e) if !head => named(e.to_string(), want),
            Err(e) => panic!("{want}: {e}"),
        }
        let (_, q, _, _) = mase_emit::flow::quantized_graph(&bytes, &opts).unwrap();
        match mase_emit::add_hardware_metadata(q, &opts.config.hardware) {
            Ok(_) => panic!("{want}: the binding must reject it"),
            Err(e) => named(e.to_string(), want),
        }
    }
}

/// `x [2, 4, 8]` → `MatMul` by a constant → `Relu` → `Add` of a constant of shape `pos_dims` (learned
/// position embeddings) → `y`, as ONNX bytes.
fn position_add_onnx(pos_dims: &[i64]) -> Vec<u8> {
    use mase_ir::onnx::proto::*;
    let n: i64 = pos_dims.iter().product();
    let tensor = |name: &str, dims: &[i64], k: i64| TensorProto {
        name: name.into(),
        dims: dims.to_vec(),
        data_type: 1,
        float_data: (0..dims.iter().product::<i64>())
            .map(|i| (((i * 37 + k) % 17) as f32 - 8.0) / 8.0)
            .collect(),
        ..Default::default()
    };
    onnx_model(
        "position_add",
        vec![
            onnx_node("MatMul", "MatMul_h", &["x", "w"], "h"),
            // Between the two, so that the add is not raised into the linear's bias.
            onnx_node("Relu", "Relu_r", &["h"], "r"),
            onnx_node("Add", "Add_pos", &["r", "pos"], "y"),
        ],
        vec![tensor("w", &[8, 8], 3), tensor("pos", pos_dims, n)],
        vec![value_info("x", 1, Some(&[2, 4, 8]))],
        vec![value_info("y", 1, Some(&[2, 4, 8]))],
    )
}

/// The hardware passes and the project of `position_add_onnx(pos_dims)` at 8 bits, 2 lanes, in
/// `dir`: the quantized graph bound node by node (no host/device split: the split's rule for
/// constant operands is its own), its design and project.
fn position_add_project(pos_dims: &[i64], dir: &Path) -> mase_ir::Result<mase_ir::MaseGraph> {
    let cfg = format!("{EIGHT_BIT}[hardware]\nlanes = 2\n");
    let mut opts = FlowOptions::new("position_add", dir);
    opts.config = FlowConfig::from_table(&cfg.parse().unwrap(), "position_add", None)?;
    let q = mase_emit::flow::quantized_graph(&position_add_onnx(pos_dims), &opts)?.1;
    let (g, _) = mase_emit::add_hardware_metadata(q, &opts.config.hardware)?;
    let d = mase_emit::design_of(&g, "top")?;
    mase_emit::project::write_project(&g, &d, dir, opts.config.hardware.clock_mhz)?;
    Ok(g)
}

#[test]
fn an_add_of_a_constant_binds_add_table_and_is_bit_exact() {
    // [1, S, H] (BERT's folded position constant: R = 4 of 8 rows), [S, H], [H] (R = 1).
    for (dims, rows) in [(&[1, 4, 8][..], 4), (&[4, 8], 4), (&[8], 1)] {
        let dir = tempfile::tempdir().unwrap();
        let g = position_add_project(dims, dir.path()).unwrap_or_else(|e| panic!("pos {dims:?}: {e}"));
        let hw = &g.node(g.find("Add_pos").expect("node Add_pos")).meta.hardware;
        assert_eq!(hw.module.as_deref(), Some("mase_add_table"), "pos {dims:?}");
        assert_eq!(hw.verilog_param["WEIGHT_TENSOR_SIZE_DIM_1"], rows, "pos {dims:?}");
        let p = load_project(dir.path()).unwrap();
        let inputs: Vec<_> = (0..3).map(|k| mase_emit::flow::seeded_inputs(&g, 100 + k).unwrap()).collect();
        let cfg = RunConfig { seed: 11, stall_prob: 0.3, ..RunConfig::default() };
        let (run, _) = check_project(&p, &inputs, &cfg).unwrap();
        assert!(run.report.bit_exact, "pos {dims:?}: {} mismatches", run.report.mismatches);
        assert_eq!(run.outputs, run.expected);
        lint(dir.path());
    }
}

#[test]
fn an_add_of_a_constant_that_broadcasts_within_rows_is_an_error_naming_the_node() {
    let dir = tempfile::tempdir().unwrap();
    let err = match position_add_project(&[4, 1], dir.path()) {
        Ok(_) => panic!("a [4, 1] constant broadcasts along rows, which add_table does not do"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("Add_pos") && err.contains("[4, 1]") && err.contains("[2, 4, 8]"), "{err}");
}
