//! Checkpoint tests: round trips (metadata, i64 weights, quantized weights, odd float bit
//! patterns), deterministic bytes, prefix handling, and clear errors on damaged files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mase_ir::checkpoint::{checkpoint_paths, export, load};
use mase_ir::fixed::{FixedFormat, Overflow, Rounding};
use mase_ir::metadata::{Interface, TensorMeta, Toolchain, ValueType};
use mase_ir::pass::{find_pass, run_pass, PassArgs};
use mase_ir::passes::add_software_metadata::software_stats;
use mase_ir::tensor::{QuantTensor, Tensor};
use mase_ir::{MaseGraph, Op};
use ndarray::{ArrayD, IxDyn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn random(rng: &mut ChaCha8Rng, shape: &[usize]) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_f32(shape, (0..n).map(|_| rng.gen_range(-1.0f32..1.0)).collect()).unwrap()
}

/// A graph exercising every part of a checkpoint: metadata from passes, hardware fields, an
/// origin, an i64 weight (gather indices), a quantized weight, odd float bit patterns.
fn rich_graph() -> MaseGraph {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut g = MaseGraph::new("rich \"model\"");
    let x = g.add_node("x", Op::Placeholder, vec![]).unwrap();
    g.node_mut(x).meta.common.results.insert(
        "data_out_0".into(),
        TensorMeta { ty: ValueType::Float, precision: vec![32], shape: vec![2, 3], ..Default::default() },
    );
    let mut w = random(&mut rng, &[4, 3]);
    if let Tensor::F32(a) = &mut w {
        // -0.0, the smallest subnormal and a large value survive bit for bit.
        a[[0, 0]] = -0.0;
        a[[0, 1]] = f32::from_bits(1);
        a[[0, 2]] = 3.4e38;
    }
    g.weights.insert("fc.weight".into(), w);
    g.weights.insert("fc.bias".into(), random(&mut rng, &[4]));
    g.weights.insert("idx".into(), Tensor::from_i64(&[2], vec![2, 0]).unwrap());
    // Every element type round-trips: int32 and bool tensors too.
    g.weights.insert(
        "ids32".into(),
        Tensor::I32(ArrayD::from_shape_vec(IxDyn(&[3]), vec![-7, 0, 1 << 30]).unwrap()),
    );
    g.weights.insert(
        "mask".into(),
        Tensor::Bool(ArrayD::from_shape_vec(IxDyn(&[2, 2]), vec![true, false, false, true]).unwrap()),
    );
    g.weights.insert("ln.weight".into(), random(&mut rng, &[4]));
    let fc = g
        .add_node("fc", Op::Linear { weight: "fc.weight".into(), bias: Some("fc.bias".into()) }, vec![x])
        .unwrap();
    g.node_mut(fc).origin = Some("/layer/Gemm".into());
    let ln = g
        .add_node(
            "ln",
            Op::LayerNorm { axis: -1, epsilon: 1e-5, weight: Some("ln.weight".into()), bias: None },
            vec![fc],
        )
        .unwrap();
    let gelu = g.add_node("gelu", Op::Gelu { approximate: Default::default() }, vec![ln]).unwrap();
    let idx = g.add_node("idx", Op::Constant { tensor: "idx".into() }, vec![]).unwrap();
    let gather = g.add_node("pick", Op::Gather { axis: 1 }, vec![x, idx]).unwrap();
    let scaled = g.add_node("scaled", Op::MulScalar { scalar: 0.125 }, vec![gather]).unwrap();
    g.add_node("output", Op::Output, vec![gelu, scaled]).unwrap();
    let (mut g, _) = run_pass(find_pass("add_common_metadata").unwrap(), g, &PassArgs::new()).unwrap();
    let samples: Vec<_> =
        (0..2).map(|_| HashMap::from([("x".to_string(), random(&mut rng, &[2, 3]))])).collect();
    g = software_stats(g, &samples, &Default::default()).unwrap();
    let codes =
        ArrayD::from_shape_vec(IxDyn(&[4, 3]), (0..12).map(|i| i64::from(i) * 37 - 200).collect()).unwrap();
    let format = FixedFormat {
        signed: true,
        width: 9,
        frac: 5,
        rounding: Rounding::RndConv,
        overflow: Overflow::SatSym,
    };
    // Per-channel fractions (one per output row) round-trip with the codes.
    g.qweights.insert(
        "fc.weight".into(),
        QuantTensor { format, codes, channel_frac: Some(vec![5, 3, 4, 5]), affine: None },
    );
    let hw = &mut g.node_mut(fc).meta.hardware;
    hw.toolchain = Some(Toolchain::Internal);
    hw.module = Some("mase_linear".into());
    hw.verilog_param.insert("DATA_IN_0_PRECISION_0".into(), 8);
    hw.interface.insert("weight".into(), Interface { storage: "BRAM".into(), transpose: false });
    hw.parallelism.insert("data_in_0".into(), vec![3, 1]);
    g
}

fn weight_bits(t: &Tensor) -> Vec<u64> {
    match t {
        Tensor::F32(a) => a.iter().map(|v| u64::from(v.to_bits())).collect(),
        Tensor::I64(a) => a.iter().map(|&v| v as u64).collect(),
        Tensor::I32(a) => a.iter().map(|&v| v as u64).collect(),
        Tensor::Bool(a) => a.iter().map(|&v| u64::from(v)).collect(),
    }
}

#[test]
fn round_trip_gives_an_equal_graph() {
    let g = rich_graph();
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("model");
    export(&g, &prefix).unwrap();
    let back = load(&prefix).unwrap();
    assert_eq!(back, g);
    for (k, t) in &g.weights {
        assert_eq!(weight_bits(&back.weights[k]), weight_bits(t), "{k}");
        assert_eq!(back.weights[k].dtype(), t.dtype());
    }
    assert_eq!(back.qweights, g.qweights);
    // The loaded graph works: it runs the same.
    let x = HashMap::from([(
        "x".to_string(),
        Tensor::from_f32(&[2, 3], vec![0.5, -1.0, 2.0, 0.0, 1.5, -0.25]).unwrap(),
    )]);
    let bits = |g: &MaseGraph| -> Vec<Vec<u64>> {
        mase_ir::interp::run_outputs(g, &x).unwrap().iter().map(weight_bits).collect()
    };
    assert_eq!(bits(&back), bits(&g));
    // The method forms do the same.
    g.export(dir.path().join("again")).unwrap();
    assert_eq!(MaseGraph::from_checkpoint(dir.path().join("again")).unwrap(), g);
}

#[test]
fn exports_are_deterministic() {
    let g = rich_graph();
    let dir = tempfile::tempdir().unwrap();
    export(&g, &dir.path().join("a")).unwrap();
    export(&rich_graph(), &dir.path().join("b")).unwrap();
    for ext in ["json", "safetensors"] {
        let a = std::fs::read(dir.path().join(format!("a.{ext}"))).unwrap();
        let b = std::fs::read(dir.path().join(format!("b.{ext}"))).unwrap();
        assert!(a == b, "{ext} differs");
    }
    // The JSON names inputs by node name and carries the metadata tree.
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("a.json")).unwrap()).unwrap();
    let fc = json["nodes"].as_array().unwrap().iter().find(|n| n["name"] == "fc").unwrap();
    assert_eq!(fc["inputs"], serde_json::json!(["x"]));
    assert_eq!(fc["op"]["op"], "linear");
    assert_eq!(fc["meta"]["common"]["results"]["data_out_0"]["shape"], serde_json::json!([2, 4]));
    assert!(fc["meta"]["software"]["results"]["data_out_0"]["stat"]["range_min_max"].is_object());
}

#[test]
fn prefixes_with_and_without_extensions() {
    let g = rich_graph();
    let dir = tempfile::tempdir().unwrap();
    export(&g, &dir.path().join("m.json")).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["m.json", "m.safetensors"], "only the two checkpoint files are written");
    for p in ["m", "m.json", "m.safetensors"] {
        assert_eq!(load(&dir.path().join(p)).unwrap(), g, "{p}");
    }
    let (j, s) = checkpoint_paths(Path::new("out/bert.v2")).unwrap();
    assert_eq!((j, s), (PathBuf::from("out/bert.v2.json"), PathBuf::from("out/bert.v2.safetensors")));
    assert!(checkpoint_paths(Path::new("/")).is_err());
    let e = export(&g, &dir.path().join("no/such/dir/m")).unwrap_err().to_string();
    assert!(e.contains("no/such/dir/m.json"), "{e}");
}

/// Exports the rich graph, applies `edit` to its JSON, and returns the load error.
fn load_error_after_json_edit(edit: impl Fn(&mut serde_json::Value)) -> String {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("m");
    export(&rich_graph(), &prefix).unwrap();
    let path = dir.path().join("m.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    let e = load(&prefix).unwrap_err().to_string();
    assert!(e.contains("m.json") || e.contains("m.safetensors"), "error names no file: {e}");
    e
}

fn node_mut<'a>(v: &'a mut serde_json::Value, name: &str) -> &'a mut serde_json::Value {
    v["nodes"].as_array_mut().unwrap().iter_mut().find(|n| n["name"] == name).unwrap()
}

#[test]
fn damaged_json_gives_clear_errors() {
    let e = load_error_after_json_edit(|v| node_mut(v, "gelu")["inputs"] = serde_json::json!(["nope"]));
    assert!(e.contains("gelu") && e.contains("'nope'") && e.contains("not a node"), "{e}");
    let e = load_error_after_json_edit(|v| node_mut(v, "fc")["inputs"] = serde_json::json!(["gelu"]));
    assert!(e.contains("fc") && e.contains("later"), "{e}");
    let e = load_error_after_json_edit(|v| v["version"] = serde_json::json!(99));
    assert!(e.contains("version 99"), "{e}");
    let e = load_error_after_json_edit(|v| v["format"] = serde_json::json!("other"));
    assert!(e.contains("format"), "{e}");
    let e = load_error_after_json_edit(|v| node_mut(v, "ln")["op"] = serde_json::json!({"op": "frobnicate"}));
    assert!(e.contains("ln") && e.contains("frobnicate"), "{e}");
    let e = load_error_after_json_edit(|v| {
        v["weights"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"key": "ghost", "dtype": "f32", "shape": [1]}))
    });
    assert!(e.contains("ghost") && e.contains("missing"), "{e}");
    let e = load_error_after_json_edit(|v| {
        let w = v["weights"].as_array_mut().unwrap().iter_mut().find(|w| w["key"] == "fc.bias").unwrap();
        w["shape"] = serde_json::json!([5]);
    });
    assert!(e.contains("fc.bias") && e.contains("shape"), "{e}");
    let e = load_error_after_json_edit(|v| {
        let w = v["weights"].as_array_mut().unwrap().iter_mut().find(|w| w["key"] == "idx").unwrap();
        w["dtype"] = serde_json::json!("f32");
    });
    assert!(e.contains("idx") && e.contains("I64"), "{e}");
    let e = load_error_after_json_edit(|v| {
        v["weights"].as_array_mut().unwrap().retain(|w| w["key"] != "ln.weight");
    });
    assert!(e.contains("ln.weight"), "{e}");
    let e = load_error_after_json_edit(|v| {
        v["qweights"] = serde_json::json!([]);
    });
    assert!(e.contains("q/fc.weight") && e.contains("not listed"), "{e}");
}

#[test]
fn missing_and_truncated_files_give_errors() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("m");
    let e = load(&prefix).unwrap_err().to_string();
    assert!(e.contains("m.json"), "{e}");
    export(&rich_graph(), &prefix).unwrap();
    let st = dir.path().join("m.safetensors");
    let bytes = std::fs::read(&st).unwrap();
    std::fs::write(&st, &bytes[..bytes.len() / 2]).unwrap();
    let e = load(&prefix).unwrap_err().to_string();
    assert!(e.contains("m.safetensors") && e.contains("safetensors"), "{e}");
    std::fs::remove_file(&st).unwrap();
    let e = load(&prefix).unwrap_err().to_string();
    assert!(e.contains("m.safetensors"), "{e}");
    let json = dir.path().join("m.json");
    let text = std::fs::read(&json).unwrap();
    std::fs::write(&json, &text[..text.len() / 3]).unwrap();
    let e = load(&prefix).unwrap_err().to_string();
    assert!(e.contains("m.json") && e.contains("JSON"), "{e}");
}

#[test]
fn non_finite_attributes_are_refused_at_export() {
    let mut g = MaseGraph::new("nan");
    let x = g.add_node("x", Op::Placeholder, vec![]).unwrap();
    let m = g.add_node("m", Op::MulScalar { scalar: f32::NAN }, vec![x]).unwrap();
    g.add_node("output", Op::Output, vec![m]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let e = export(&g, &dir.path().join("m")).unwrap_err().to_string();
    assert!(e.contains("'m'") && e.contains("scalar"), "{e}");
}

#[test]
fn mutated_files_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("m");
    export(&rich_graph(), &prefix).unwrap();
    let json = std::fs::read(dir.path().join("m.json")).unwrap();
    let st = std::fs::read(dir.path().join("m.safetensors")).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let mut errors = 0;
    for round in 0..120 {
        let (mut j, mut s) = (json.clone(), st.clone());
        let target = if round % 2 == 0 { &mut j } else { &mut s };
        for _ in 0..rng.gen_range(1..4) {
            let i = rng.gen_range(0..target.len());
            match rng.gen_range(0..3) {
                0 => target[i] = rng.gen(),
                1 => target.truncate(i),
                _ => target.insert(i, rng.gen()),
            }
            if target.is_empty() {
                break;
            }
        }
        std::fs::write(dir.path().join("m.json"), &j).unwrap();
        std::fs::write(dir.path().join("m.safetensors"), &s).unwrap();
        // Either a graph or an error; a panic fails the test.
        if load(&prefix).is_err() {
            errors += 1;
        }
    }
    assert!(errors > 0, "no mutation was detected");
}

#[test]
fn output_names_round_trip_and_are_absent_when_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let json = |prefix: &str| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(dir.path().join(format!("{prefix}.json"))).unwrap()).unwrap()
    };
    // A graph without names writes no key, as checkpoints always did.
    export(&rich_graph(), &dir.path().join("plain")).unwrap();
    assert!(json("plain").get("output_names").is_none());
    let mut g = rich_graph();
    g.output_names = vec!["hidden".into(), "scaled \"logits\"".into()];
    export(&g, &dir.path().join("named")).unwrap();
    assert_eq!(json("named")["output_names"], serde_json::json!(g.output_names));
    let back = load(&dir.path().join("named")).unwrap();
    assert_eq!(back.output_names, g.output_names);
    assert_eq!(back, g);
    assert_eq!(
        (back.output_name(0), back.output_name(1)),
        ("hidden".to_string(), "scaled \"logits\"".to_string())
    );
    // One name per output, or the restored graph is invalid.
    let mut v = json("named");
    v["output_names"] = serde_json::json!(["only one"]);
    std::fs::write(dir.path().join("named.json"), serde_json::to_vec(&v).unwrap()).unwrap();
    let e = load(&dir.path().join("named")).unwrap_err().to_string();
    assert!(e.contains("1 output names") && e.contains("2 outputs"), "{e}");
}
