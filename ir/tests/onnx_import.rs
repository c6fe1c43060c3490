//! ONNX import of the fixtures written by `scripts/make_fixtures.py`: op kinds after raising,
//! numerical agreement with onnxruntime (max abs error ≤ 1e-4 × max |output|), dynamic input
//! shapes, metadata, and the errors bad files give.

mod onnx_support;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use mase_ir::npy::read_npy;
use mase_ir::onnx::{import_bytes, import_file, ImportOptions};
use mase_ir::{interp, MaseGraph, Op, Tensor};
use onnx_support::{by_placeholder, fixture_inputs, fixture_names, fixture_opts, fixtures};

fn fixture(name: &str) -> PathBuf {
    fixtures().join(format!("{name}.onnx"))
}

fn import(name: &str) -> MaseGraph {
    import_file(&fixture(name), &fixture_opts(name, true)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Runs the graph on the fixture inputs and compares with onnxruntime's outputs.
fn check_numerics(name: &str, g: &MaseGraph) {
    let inputs = fixture_inputs(name);
    let outs = interp::run_outputs(g, &by_placeholder(g, &inputs)).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(outs.len(), g.output_values().len());
    for (k, got) in outs.iter().enumerate() {
        let want = read_npy(fixtures().join(format!("{name}.out.{k}.npy"))).unwrap();
        let (want, got) = (want.to_f32(), got.to_f32());
        assert_eq!(want.shape(), got.shape(), "{name} output {k}");
        let scale = want.iter().fold(0f32, |m, v| m.max(v.abs()));
        let err = want.iter().zip(got.iter()).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
        assert!(err <= 1e-4 * scale, "{name} output {k}: max abs error {err} > 1e-4 × {scale}");
    }
}

fn op_counts(g: &MaseGraph) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for (_, n) in g.nodes() {
        *m.entry(n.op.mase_op()).or_insert(0) += 1;
    }
    m
}

#[test]
fn every_fixture_matches_onnxruntime_raised_and_raw() {
    for name in fixture_names() {
        let g = import(&name);
        g.validate().unwrap();
        check_numerics(&name, &g);
        let raw = import_file(&fixture(&name), &fixture_opts(&name, false)).unwrap();
        check_numerics(&name, &raw);
    }
}

#[test]
fn mlp_gemm_relu_becomes_linear_relu_linear() {
    let g = import("mlp_gemm_relu");
    let ops: Vec<&str> = g.nodes().map(|(_, n)| n.op.mase_op()).collect();
    assert_eq!(ops, ["placeholder", "linear", "relu", "linear", "output"]);
    let (_, l1) = g.nodes().nth(1).unwrap();
    let Op::Linear { weight, bias: Some(bias) } = &l1.op else { panic!("{:?}", l1.op) };
    assert_eq!(g.weights[weight].shape(), [32, 16]);
    assert_eq!(g.weights[bias].shape(), [32]);
    assert_eq!(g.nodes().nth(3).unwrap().1.out_shape(), Some(&[4usize, 10][..]));
}

#[test]
fn mlp_matmul_gelu_becomes_linear_gelu_linear() {
    let g = import("mlp_matmul_gelu");
    let ops: Vec<&str> = g.nodes().map(|(_, n)| n.op.mase_op()).collect();
    assert_eq!(ops, ["placeholder", "linear", "gelu", "linear", "output"]);
}

/// Checks a stack of `layers` BERT-tiny-sized encoder layers (hidden 128, 2 heads, seq 8):
/// each layer's ops once per layer, one input and one output.
fn check_encoder(g: &MaseGraph, layers: usize) {
    let counts = op_counts(g);
    let allowed = [
        "placeholder",
        "output",
        "constant",
        "linear",
        "matmul",
        "mul",
        "softmax",
        "layer_norm",
        "gelu",
        "add",
        "reshape",
        "transpose",
    ];
    for k in counts.keys() {
        assert!(allowed.contains(k), "unexpected op {k} in {counts:?}");
    }
    let want = [
        ("linear", 6),
        ("matmul", 2),
        ("mul", 1),
        ("softmax", 1),
        ("layer_norm", 2),
        ("gelu", 1),
        ("add", 2),
        ("reshape", 4),
        ("transpose", 4),
        ("placeholder", 1),
        ("output", 1),
    ];
    for (op, n) in want {
        let n = if matches!(op, "placeholder" | "output") { n } else { n * layers };
        assert_eq!(counts.get(op).copied().unwrap_or(0), n, "{op} in {counts:?}");
    }
    // The attention scale is a scalar multiply by 1/8.
    assert!(g.nodes().any(|(_, n)| n.op == Op::MulScalar { scalar: 0.125 }));
    let out = g.output_values();
    assert_eq!(g.node(out[0]).out_shape(), Some(&[1usize, 8, 128][..]));
    for (_, n) in g.nodes() {
        if let Op::Reshape { shape } = &n.op {
            assert!(shape == &[1, 8, 2, 64] || shape == &[1, 8, 128], "reshape to {shape:?}");
        }
        assert!(n.origin.is_some() || n.op == Op::Output, "node {} has no ONNX origin", n.name);
        assert!(
            n.name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && n.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "node name {} is not an identifier",
            n.name
        );
    }
}

#[test]
fn encoder_layer_imports_to_mase_ops() {
    let g = import("encoder_layer");
    check_encoder(&g, 1);
    // Raised nodes are named after the PyTorch module path of the nodes they replace.
    for name in
        ["attention_self_query_linear", "attention_self_mul_scalar", "intermediate_intermediate_act_fn_gelu"]
    {
        assert!(g.find(name).is_some(), "no node {name}");
    }
}

#[test]
fn encoder_2layer_imports_as_two_chained_layers() {
    let g = import("encoder_2layer");
    check_encoder(&g, 2);
    // Each node is named after its layer's module path (encoder.layer.{i} -> encoder_layer_{i}_).
    let mut per_layer = [0usize; 2];
    for (_, n) in g.nodes() {
        if matches!(n.op, Op::Placeholder | Op::Output) {
            continue;
        }
        let layer = (0..2).find(|i| n.name.starts_with(&format!("encoder_layer_{i}_")));
        per_layer[layer.unwrap_or_else(|| panic!("node {} names no layer", n.name))] += 1;
    }
    assert_eq!(per_layer[0], per_layer[1], "layers differ in node count: {per_layer:?}");
    // Layer 1 reads layer 0's output: its query, key and value projections and its residual add.
    let out0 = g.find("encoder_layer_0_output_LayerNorm_LayerNormalization").expect("layer 0 output");
    let mut readers: Vec<&str> = g.users(out0).into_iter().map(|u| g.node(u).name.as_str()).collect();
    readers.sort_unstable();
    assert_eq!(
        readers,
        [
            "encoder_layer_1_attention_output_Add",
            "encoder_layer_1_attention_self_key_linear",
            "encoder_layer_1_attention_self_query_linear",
            "encoder_layer_1_attention_self_value_linear",
        ]
    );
}

#[test]
fn encoder_layer_decomposed_ln_needs_and_uses_input_shape() {
    let err = import_file(&fixture("encoder_layer_decomposed_ln"), &ImportOptions::default())
        .unwrap_err()
        .to_string();
    for part in ["encoder_layer_decomposed_ln.onnx", "hidden_states", "seq", "--input-shape", "dimension 1"] {
        assert!(err.contains(part), "'{part}' not in: {err}");
    }
    check_encoder(&import("encoder_layer_decomposed_ln"), 1);
    // A shape that conflicts with a fixed dimension is refused.
    let mut o = ImportOptions::default();
    o.input_shapes.insert("hidden_states".into(), vec![1, 8, 64]);
    let err = import_file(&fixture("encoder_layer_decomposed_ln"), &o).unwrap_err().to_string();
    assert!(err.contains("dimension 2 = 64") && err.contains("128"), "{err}");
    // So is an input name the model does not have.
    let mut o = ImportOptions::default();
    o.input_shapes.insert("hidden".into(), vec![1, 8, 128]);
    let err = import_file(&fixture("encoder_layer_decomposed_ln"), &o).unwrap_err().to_string();
    assert!(err.contains("'hidden'") && err.contains("hidden_states"), "{err}");
}

#[test]
fn encoder_layer_with_other_seq_len_runs() {
    // The shape sub-graphs fold for any fixed sequence length.
    let mut o = ImportOptions::default();
    o.input_shapes.insert("hidden_states".into(), vec![1, 5, 128]);
    let g = import_file(&fixture("encoder_layer_decomposed_ln"), &o).unwrap();
    let x = g.input_ids()[0];
    let mut inputs = HashMap::new();
    inputs.insert(g.node(x).name.clone(), Tensor::zeros_f32(&[1, 5, 128]));
    let outs = interp::run_outputs(&g, &inputs).unwrap();
    assert_eq!(outs[0].shape(), [1, 5, 128]);
}

#[test]
fn placeholder_metadata_and_origin() {
    let g = import("encoder_layer");
    let x = g.input_ids();
    assert_eq!(x.len(), 1);
    let n = g.node(x[0]);
    assert_eq!(n.name, "hidden_states");
    let m = &n.meta.common.results["data_out_0"];
    assert_eq!(m.shape, [1, 8, 128]);
    assert_eq!(m.precision, [32]);
    assert_eq!(m.ty, mase_ir::metadata::ValueType::Float);
    assert_eq!(n.origin.as_deref(), Some("hidden_states"));
}

#[test]
fn raw_import_keeps_onnx_structure() {
    let g = import_file(&fixture("mlp_gemm_relu"), &ImportOptions { raise: false, ..Default::default() })
        .unwrap();
    let counts = op_counts(&g);
    assert_eq!(counts.get("linear"), None);
    assert_eq!(counts["matmul"], 2);
    assert_eq!(counts["add"], 2);
    // transB = 1 folded the weight transposition into the constant.
    assert_eq!(counts.get("transpose"), None);
    // The shape sub-graphs of the encoder fold away even without raising.
    let g = import_file(&fixture("encoder_layer"), &ImportOptions { raise: false, ..Default::default() })
        .unwrap();
    let counts = op_counts(&g);
    for gone in ["shape", "gather", "unsqueeze", "cat"] {
        assert_eq!(counts.get(gone), None, "{gone} left in {counts:?}");
    }
    assert_eq!(counts["erf"], 1);
}

#[test]
fn bad_files_give_clear_errors() {
    let cases: &[(&str, &[&str])] = &[
        ("bad_truncated", &["bad_truncated.onnx", "not a valid ONNX model"]),
        ("bad_unknown_op", &["bad_unknown_op.onnx", "FooBar", "not supported", "MatMul"]),
        (
            "bad_missing_initializer",
            &["bad_missing_initializer.onnx", "MatMul", "missing_weight", "not defined"],
        ),
        ("bad_opset", &["bad_opset.onnx", "opset 9", "13 to 20"]),
        ("bad_domain", &["bad_domain.onnx", "custom_node", "com.example"]),
    ];
    for (name, parts) in cases {
        let err = import_file(&fixture(name), &ImportOptions::default()).unwrap_err().to_string();
        for p in *parts {
            assert!(err.contains(p), "{name}: '{p}' not in: {err}");
        }
    }
    let err =
        import_file(Path::new("/nonexistent/model.onnx"), &ImportOptions::default()).unwrap_err().to_string();
    assert!(err.contains("/nonexistent/model.onnx"), "{err}");
    let err = import_bytes(&[], "empty.onnx", &ImportOptions::default()).unwrap_err().to_string();
    assert!(err.contains("empty.onnx") && err.contains("no graph"), "{err}");
}

/// Builds a wide MLP of about 10 MB as an ONNX model through the importer's own protobuf types
/// and times its import. Run with
/// `cargo test --release -p mase-ir --test onnx_import -- --ignored --nocapture import_time`.
#[test]
#[ignore]
fn import_time_10mb() {
    use mase_ir::onnx::proto::*;
    use prost::Message;

    use crate::onnx_support::vi;
    let dims = [1024usize, 1024, 1024, 256];
    let mut nodes = Vec::new();
    let mut inits = Vec::new();
    let mut prev = "x".to_string();
    for (k, w) in dims.windows(2).enumerate() {
        let data: Vec<u8> = (0..w[0] * w[1]).flat_map(|i| ((i % 97) as f32 * 1e-3).to_le_bytes()).collect();
        inits.push(TensorProto {
            name: format!("w{k}"),
            dims: vec![w[0] as i64, w[1] as i64],
            data_type: 1,
            raw_data: data,
            ..Default::default()
        });
        inits.push(TensorProto {
            name: format!("b{k}"),
            dims: vec![w[1] as i64],
            data_type: 1,
            float_data: vec![0.5; w[1]],
            ..Default::default()
        });
        nodes.push(NodeProto {
            input: vec![prev.clone(), format!("w{k}")],
            output: vec![format!("m{k}")],
            op_type: "MatMul".into(),
            name: format!("mm{k}"),
            ..Default::default()
        });
        nodes.push(NodeProto {
            input: vec![format!("m{k}"), format!("b{k}")],
            output: vec![format!("a{k}")],
            op_type: "Add".into(),
            name: format!("add{k}"),
            ..Default::default()
        });
        nodes.push(NodeProto {
            input: vec![format!("a{k}")],
            output: vec![format!("r{k}")],
            op_type: "Relu".into(),
            name: format!("relu{k}"),
            ..Default::default()
        });
        prev = format!("r{k}");
    }
    let model = ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto { domain: String::new(), version: 17 }],
        graph: Some(GraphProto {
            name: "wide_mlp".into(),
            node: nodes,
            initializer: inits,
            input: vec![vi("x", &[4, 1024])],
            output: vec![vi(&prev, &[4, 256])],
            ..Default::default()
        }),
        ..Default::default()
    };
    let bytes = model.encode_to_vec();
    let t = std::time::Instant::now();
    let decoded = ModelProto::decode(bytes.as_slice()).unwrap();
    let decode = t.elapsed();
    drop(decoded);
    let t = std::time::Instant::now();
    let raw =
        import_bytes(&bytes, "wide_mlp.onnx", &ImportOptions { raise: false, ..Default::default() }).unwrap();
    let unraised = t.elapsed();
    let t = std::time::Instant::now();
    let g = import_bytes(&bytes, "wide_mlp.onnx", &ImportOptions::default()).unwrap();
    let dt = t.elapsed();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!(
        "{:.1} MB ONNX: protobuf decode {:.1} ms, import without raising {:.1} ms ({} nodes), with raising {:.1} ms ({} nodes)",
        bytes.len() as f64 / 1e6,
        ms(decode),
        ms(unraised),
        raw.len(),
        ms(dt),
        g.len()
    );
    assert_eq!(op_counts(&g)["linear"], 3);
}

#[test]
fn misc_ops_and_several_outputs() {
    let g = import("misc_ops");
    assert_eq!(g.output_values().len(), 3);
    let counts = op_counts(&g);
    for op in [
        "dropout",
        "identity",
        "slice",
        "unsqueeze",
        "squeeze",
        "flatten",
        "cast",
        "gather",
        "cat",
        "transpose",
    ] {
        assert!(counts.contains_key(op), "{op} missing from {counts:?}");
    }
    // Shape(x)[1] = 8 folded into the divisor, raised to a multiply by 1/8.
    assert_eq!(counts.get("shape"), None);
    assert!(g.nodes().any(|(_, n)| n.op == Op::MulScalar { scalar: 0.125 }));
    let shapes: Vec<_> = g.output_values().iter().map(|&v| g.node(v).out_shape().unwrap().to_vec()).collect();
    assert_eq!(shapes, [vec![2, 16], vec![2, 8], vec![16, 2, 2]]);
}

mod built {
    //! Small models built with the importer's protobuf types.
    use mase_ir::onnx::proto::*;
    use prost::Message;

    pub use crate::onnx_support::vi;

    pub fn model(
        nodes: Vec<NodeProto>,
        inits: Vec<TensorProto>,
        inputs: Vec<ValueInfoProto>,
        out: &str,
    ) -> Vec<u8> {
        model_at(13, nodes, inits, inputs, out)
    }

    /// [`model`] at the default domain's `opset`.
    pub fn model_at(
        opset: i64,
        nodes: Vec<NodeProto>,
        inits: Vec<TensorProto>,
        inputs: Vec<ValueInfoProto>,
        out: &str,
    ) -> Vec<u8> {
        ModelProto {
            ir_version: 8,
            opset_import: vec![OperatorSetIdProto { domain: String::new(), version: opset }],
            graph: Some(GraphProto {
                name: "built".into(),
                node: nodes,
                initializer: inits,
                input: inputs,
                output: vec![vi(out, &[2, 3])],
                ..Default::default()
            }),
            ..Default::default()
        }
        .encode_to_vec()
    }

    pub fn node(op: &str, name: &str, inputs: &[&str], out: &str, attrs: Vec<AttributeProto>) -> NodeProto {
        NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![out.into()],
            op_type: op.into(),
            name: name.into(),
            attribute: attrs,
            ..Default::default()
        }
    }
}

#[test]
fn initializer_listed_as_input_is_not_a_placeholder() {
    use mase_ir::onnx::proto::*;
    let w = TensorProto {
        name: "w".into(),
        dims: vec![3],
        data_type: 1,
        float_data: vec![1.0, 2.0, 3.0],
        ..Default::default()
    };
    let bytes = built::model(
        vec![built::node("Add", "add", &["x", "w"], "y", vec![])],
        vec![w],
        vec![built::vi("x", &[2, 3]), built::vi("w", &[3])],
        "y",
    );
    let g = import_bytes(&bytes, "m.onnx", &ImportOptions::default()).unwrap();
    assert_eq!(g.input_ids().len(), 1);
    assert_eq!(g.node(g.input_ids()[0]).name, "x");
}

/// TorchScript exports name inputs like `x.461`; the IR's name is an identifier, and the ONNX
/// name still finds the input (the CLI's `--input` and calibration files use this).
#[test]
fn an_input_is_found_by_its_onnx_name_too() {
    let bytes = built::model(
        vec![built::node("Relu", "relu", &["x.461"], "y", vec![])],
        vec![],
        vec![built::vi("x.461", &[2, 3])],
        "y",
    );
    let g = import_bytes(&bytes, "m.onnx", &ImportOptions::default()).unwrap();
    let ir_name = g.node(g.input_ids()[0]).name.clone();
    assert_ne!(ir_name, "x.461");
    assert_eq!(g.input_name_for("x.461"), Some(ir_name.as_str()));
    assert_eq!(g.input_name_for(&ir_name), Some(ir_name.as_str()));
    assert_eq!(g.input_name_for("y"), None);
}

#[test]
fn unsupported_attribute_names_node_attribute_and_alternatives() {
    use mase_ir::onnx::proto::*;
    // The import error of a Softmax node `name` carrying `attr`.
    let error = |name: &str, attr: AttributeProto| {
        let node = built::node("Softmax", name, &["x"], "y", vec![attr]);
        let bytes = built::model(vec![node], vec![], vec![built::vi("x", &[2, 3])], "y");
        import_bytes(&bytes, "m.onnx", &ImportOptions::default()).unwrap_err().to_string()
    };
    let err = error(
        "my_softmax",
        AttributeProto { name: "fancy".into(), r#type: 2, i: Some(1), ..Default::default() },
    );
    for part in ["m.onnx", "my_softmax", "Softmax", "'fancy'", "axis"] {
        assert!(err.contains(part), "'{part}' not in: {err}");
    }
    // An attribute of the wrong type is named too.
    let err =
        error("sm", AttributeProto { name: "axis".into(), r#type: 1, f: Some(1.0), ..Default::default() });
    assert!(err.contains("'axis'") && err.contains("INT"), "{err}");
}

/// The weight-only pattern as the dynamo exporter writes it: int8 codes `CastLike` an
/// activation, times a scale per output channel, transposed into a MatMul. The linear's weight
/// keeps the model's codes on the scales' grid, and its float values are the product.
#[test]
fn cast_like_of_int8_codes_times_a_scale_keeps_the_codes() {
    use mase_ir::onnx::proto::*;
    let codes = [3i32, -127, 0, 5, 127, -1, 2, 9, -64, 1, 0, 100];
    let init = |name: &str, dims: Vec<i64>, data_type: i32| TensorProto {
        name: name.into(),
        dims,
        data_type,
        ..Default::default()
    };
    let w = TensorProto { int32_data: codes.to_vec(), ..init("w", vec![3, 4], 3) };
    let scale = [0.011f32, 0.0031, 0.27];
    let s = TensorProto { float_data: scale.to_vec(), ..init("s", vec![3, 1], 1) };
    let perm = AttributeProto { name: "perm".into(), r#type: 7, ints: vec![1, 0], ..Default::default() };
    let nodes = vec![
        built::node("CastLike", "cast", &["w", "x"], "wf", vec![]),
        built::node("Mul", "scale", &["wf", "s"], "ws", vec![]),
        built::node("Transpose", "t", &["ws"], "wt", vec![perm]),
        built::node("MatMul", "mm", &["x", "wt"], "y", vec![]),
    ];
    // CastLike is an opset 15 op.
    let bytes = built::model_at(17, nodes, vec![w, s], vec![built::vi("x", &[2, 4])], "y");
    let g = import_bytes(&bytes, "w8.onnx", &ImportOptions::default()).unwrap();
    let (_, lin) = g.nodes().find(|(_, n)| matches!(n.op, Op::Linear { .. })).expect("a linear");
    let Op::Linear { weight, .. } = &lin.op else { unreachable!() };
    let q = &g.qweights[weight];
    let a = q.affine.as_ref().expect("the codes on their grid");
    assert_eq!(q.codes.iter().map(|&c| c as i32).collect::<Vec<_>>(), codes, "[out, in] codes");
    assert_eq!((a.scale.as_slice(), a.axis), (scale.as_slice(), 0));
    let want: Vec<f32> = codes.iter().enumerate().map(|(i, &c)| c as f32 * scale[i / 4]).collect();
    assert_eq!(g.weights[weight].to_f32().iter().copied().collect::<Vec<_>>(), want);
    assert!(mase_ir::quant::qlinear::is_weight_only(&g, lin));
}
