//! Import never panics on malformed bytes: deterministic mutations (bit flips, truncations,
//! byte insertions and deletions, overwrites) of the fixture models, a few thousand cases;
//! either `Ok` or `Err` is fine. Also hostile sizes (huge or overflowing dims) give errors
//! before anything large is allocated.

mod onnx_support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use mase_ir::onnx::proto::*;
use mase_ir::onnx::{import_bytes, ImportOptions};
use onnx_support::vi;
use prost::Message;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn fixture_bytes(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/fixtures/{name}.onnx"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn mutate(rng: &mut ChaCha8Rng, src: &[u8]) -> Vec<u8> {
    let mut b = src.to_vec();
    for _ in 0..rng.gen_range(1..=3) {
        if b.is_empty() {
            break;
        }
        let at = rng.gen_range(0..b.len());
        match rng.gen_range(0..6) {
            0 => b[at] ^= 1 << rng.gen_range(0..8),
            1 => b.truncate(at),
            2 => {
                let n = rng.gen_range(1..=8);
                let ins: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                b.splice(at..at, ins);
            }
            3 => {
                let end = (at + rng.gen_range(1..=16)).min(b.len());
                b.drain(at..end);
            }
            4 => b[at] = 0xff,
            _ => b[at] = rng.gen(),
        }
    }
    b
}

/// Half the mutations anywhere (mostly weight bytes), half within the first `head` bytes, where
/// protobuf field order puts the nodes (GraphProto field 1).
fn mutate_nodes_or_anywhere(rng: &mut ChaCha8Rng, src: &[u8], head: usize, case: usize) -> Vec<u8> {
    if case.is_multiple_of(2) {
        return mutate(rng, src);
    }
    let mut m = mutate(rng, &src[..head]);
    m.extend_from_slice(&src[head..]);
    m
}

/// Imports `bytes`: `true` when it imports, `false` when it is refused with an error naming the
/// file; a panic fails the test, naming `what`.
fn imports(bytes: &[u8], opts: &ImportOptions, what: &str) -> bool {
    match catch_unwind(AssertUnwindSafe(|| import_bytes(bytes, "fuzz.onnx", opts))) {
        Ok(Ok(_)) => true,
        Ok(Err(e)) => {
            assert!(e.to_string().starts_with("fuzz.onnx: "), "error does not name the file: {e}");
            false
        }
        Err(_) => panic!("import panicked on {what}"),
    }
}

#[test]
fn mutated_models_never_panic() {
    let small = [
        "mlp_gemm_relu",
        "mlp_matmul_gelu",
        "pat_gelu_tanh",
        "pat_gemm_transb0",
        "pat_layer_norm_op",
        "pat_layer_norm_decomposed_noaffine",
        "pat_div_scalar",
        "neg_gelu_shared",
        "bad_domain",
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(0x6d61_7365);
    let opts = ImportOptions::default();
    let start = std::time::Instant::now();
    let (mut ok, mut err) = (0usize, 0usize);
    let mut run = |bytes: &[u8], what: &str| {
        if imports(bytes, &opts, what) {
            ok += 1
        } else {
            err += 1
        }
    };
    for name in small {
        let src = fixture_bytes(name);
        for case in 0..400 {
            let m = mutate(&mut rng, &src);
            run(&m, &format!("{name} case {case}"));
        }
    }
    // The encoder layer, its nodes in the first 16 KiB.
    let enc = fixture_bytes("encoder_layer");
    for case in 0..300 {
        let m = mutate_nodes_or_anywhere(&mut rng, &enc, 16 * 1024, case);
        run(&m, &format!("encoder_layer case {case}"));
    }
    println!("{ok} imported, {err} rejected, in {:.2} s", start.elapsed().as_secs_f64());
    assert!(err > 0 && ok + err == small.len() * 400 + 300);
}

/// The same for whole Hugging Face exports (both exporters), their inputs' shapes given: int64
/// inputs, shape sub-graphs and mask arithmetic under mutation; their nodes are in the first
/// 24 KiB.
#[test]
fn mutated_whole_model_exports_never_panic() {
    let shapes = ["input_ids", "attention_mask", "token_type_ids"].map(|i| (i.to_string(), vec![3usize, 16]));
    let opts = ImportOptions { input_shapes: shapes.into_iter().collect(), ..Default::default() };
    let mut rng = ChaCha8Rng::seed_from_u64(0x6866);
    let (mut ok, mut err) = (0usize, 0usize);
    for name in ["hf/bert_cls_ts_dynamic", "hf/bert_model_dynamo_dynamic"] {
        let src = fixture_bytes(name);
        for case in 0..200 {
            let m = mutate_nodes_or_anywhere(&mut rng, &src, 24 * 1024, case);
            if imports(&m, &opts, &format!("{name} case {case}")) {
                ok += 1
            } else {
                err += 1
            }
        }
    }
    assert!(ok > 0 && err > 0, "{ok} imported, {err} rejected: the mutations should give both");
}

fn model(inits: Vec<TensorProto>, input_shape: &[i64]) -> Vec<u8> {
    ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto { domain: String::new(), version: 13 }],
        graph: Some(GraphProto {
            name: "hostile".into(),
            node: vec![NodeProto {
                input: vec!["x".into(), "w".into()],
                output: vec!["y".into()],
                op_type: "Add".into(),
                name: "add".into(),
                ..Default::default()
            }],
            initializer: inits,
            input: vec![vi("x", input_shape)],
            output: vec![vi("y", input_shape)],
            ..Default::default()
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

#[test]
fn hostile_sizes_are_errors() {
    let opts = ImportOptions::default();
    let w = |dims: Vec<i64>, raw: Vec<u8>| TensorProto {
        name: "w".into(),
        dims,
        data_type: 1,
        raw_data: raw,
        ..Default::default()
    };
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (model(vec![w(vec![1 << 40, 1 << 40], vec![])], &[2]), "elements"),
        (model(vec![w(vec![i64::MAX, 3], vec![])], &[2]), "elements"),
        (model(vec![w(vec![-1], vec![])], &[2]), "negative"),
        (model(vec![w(vec![1000], vec![0; 8])], &[2]), "raw_data"),
        (model(vec![w(vec![2], vec![0; 8])], &[1 << 20, 1 << 20]), "elements"),
        (model(vec![w(vec![2], vec![0; 8])], &[-5]), "dynamic"),
        (
            model(
                vec![TensorProto {
                    name: "w".into(),
                    dims: vec![2],
                    data_type: 1,
                    data_location: 1,
                    ..Default::default()
                }],
                &[2],
            ),
            "external",
        ),
    ];
    for (bytes, want) in cases {
        let e = import_bytes(&bytes, "hostile.onnx", &opts).unwrap_err().to_string();
        assert!(e.contains(want) && e.contains("hostile.onnx"), "'{want}' not in: {e}");
    }
    // The same model with sane sizes imports.
    let ok = model(vec![w(vec![2], [1f32, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect())], &[2]);
    import_bytes(&ok, "ok.onnx", &opts).unwrap();
}
