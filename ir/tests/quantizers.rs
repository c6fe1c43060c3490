//! The quantizer ops one by one: QONNX `Quant` (every rounding mode, signed / unsigned, narrow,
//! 1-bit, per-channel scale and zero point), `BipolarQuant`, `Trunc` v2, ONNX `QuantizeLinear`
//! / `DequantizeLinear` (round half to even, saturation, per axis, zero points), against values
//! computed with qonnx 1.0.0's own functions (`int_quant`, `resolve_rounding_mode`,
//! `binary_quant`, `trunc_v2`) and the ONNX specification; the import errors of unsupported
//! attributes, domains and ops; checkpoint and ONNX export round trips.

mod onnx_support;

use std::collections::{BTreeMap, HashMap};

use mase_ir::interp::{eval_op, quantize};
use mase_ir::onnx::proto::*;
use mase_ir::onnx::{import_bytes, tensor_to_proto, to_onnx, ExportOptions, ImportOptions};
use mase_ir::op::{QuantIntType, RoundingMode};
use mase_ir::{checkpoint, interp, MaseGraph, Op, Tensor};
use ndarray::{arr0, ArrayD, IxDyn};
use onnx_support::{fixtures, same_bits, vi};
use prost::Message;

fn a(shape: &[usize], v: &[f32]) -> ArrayD<f32> {
    ArrayD::from_shape_vec(IxDyn(shape), v.to_vec()).unwrap()
}
fn s(v: f32) -> ArrayD<f32> {
    arr0(v).into_dyn()
}

#[test]
fn rounding_modes_match_qonnx() {
    let x = [-2.5f32, -1.5, -0.5, 0.5, 1.5, 2.5, -0.7, 0.3, 1.2, 0.49999997];
    let want: [(RoundingMode, [f32; 10]); 7] = [
        (RoundingMode::Round, [-2., -2., 0., 0., 2., 2., -1., 0., 1., 0.]),
        (RoundingMode::Ceil, [-2., -1., 0., 1., 2., 3., 0., 1., 2., 1.]),
        (RoundingMode::Floor, [-3., -2., -1., 0., 1., 2., -1., 0., 1., 0.]),
        (RoundingMode::Up, [-3., -2., -1., 1., 2., 3., -1., 1., 2., 1.]),
        (RoundingMode::Down, [-2., -1., 0., 0., 1., 2., 0., 0., 1., 0.]),
        // 0.49999997 + 0.5 rounds to 1.0 in float32, as numpy computes it.
        (RoundingMode::HalfUp, [-3., -2., -1., 1., 2., 3., -1., 0., 1., 1.]),
        (RoundingMode::HalfDown, [-2., -1., 0., 0., 1., 2., -1., 0., 1., 0.]),
    ];
    for (mode, w) in want {
        let got: Vec<f32> = x.iter().map(|&v| mode.round(v)).collect();
        assert_eq!(got, w, "{mode:?}");
        // The same through Quant at scale 1, zero point 0, 8 bits signed.
        let q = quantize::int_quant(&a(&[10], &x), &s(1.0), &s(0.0), &s(8.0), true, false, mode).unwrap();
        assert_eq!(q.iter().copied().collect::<Vec<_>>(), w, "{mode:?} through quant");
        assert_eq!(RoundingMode::from_qonnx(&mode.qonnx_name().to_lowercase()), Some(mode));
    }
    assert_eq!(RoundingMode::from_qonnx("HALF_EVEN"), Some(RoundingMode::Round));
    assert_eq!(RoundingMode::from_qonnx("STOCHASTIC"), None);
}

#[test]
fn signed_and_narrow_ranges() {
    let x = a(&[8], &[-9., -8., -7.6, 7.4, 7.6, 15., 16., -0.4]);
    let cases = [
        (false, false, [0., 0., 0., 7., 8., 15., 15., 0.]),
        (false, true, [0., 0., 0., 7., 8., 14., 14., 0.]),
        (true, false, [-8., -8., -8., 7., 7., 7., 7., 0.]),
        (true, true, [-7., -7., -7., 7., 7., 7., 7., 0.]),
    ];
    for (signed, narrow, w) in cases {
        let q =
            quantize::int_quant(&x, &s(1.0), &s(0.0), &s(4.0), signed, narrow, RoundingMode::Round).unwrap();
        assert_eq!(q.iter().copied().collect::<Vec<_>>(), w, "signed {signed} narrow {narrow}");
    }
    assert_eq!(quantize::int_range(true, false, 8.0), (-128.0, 127.0));
    assert_eq!(quantize::int_range(false, true, 8.0), (0.0, 254.0));
}

#[test]
fn one_bit_signed_quant_is_bipolar_and_bipolar_quant() {
    let q = quantize::int_quant(
        &a(&[4], &[-0.1, 0.0, 0.1, -3.0]),
        &s(0.5),
        &s(0.0),
        &s(1.0),
        true,
        false,
        RoundingMode::Round,
    )
    .unwrap();
    assert_eq!(q.iter().copied().collect::<Vec<_>>(), [-0.5, 0.5, 0.5, -0.5]);
    let b = quantize::bipolar_quant(&a(&[1, 3], &[-0.0, 1.0, -2.0]), &a(&[1, 3], &[0.5, 1.0, 2.0])).unwrap();
    assert_eq!(b.iter().copied().collect::<Vec<_>>(), [0.5, 1.0, -2.0]);
}

#[test]
fn per_channel_scale_and_zero_point() {
    let x = a(&[2, 3], &[0.1, 0.26, -1.0, 3.0, -0.3, 0.74]);
    let q = quantize::int_quant(
        &x,
        &a(&[2, 1], &[0.1, 0.25]),
        &a(&[2, 1], &[2.0, -1.0]),
        &s(3.0),
        true,
        false,
        RoundingMode::Round,
    )
    .unwrap();
    assert_eq!(q.iter().copied().collect::<Vec<_>>(), [0.1, 0.1, -0.6, 1.0, -0.25, 0.75]);
    let bad =
        quantize::int_quant(&x, &a(&[3, 1], &[1.0; 3]), &s(0.0), &s(3.0), true, false, RoundingMode::Round);
    assert!(bad.unwrap_err().contains("does not broadcast"));
    let bad = quantize::int_quant(&x, &s(1.0), &s(0.0), &s(4.5), true, false, RoundingMode::Round);
    assert!(bad.unwrap_err().contains("integer from 1 to 32"));
}

#[test]
fn trunc_v2_matches_qonnx() {
    let x = a(&[6], &[0.3, -1.7, 5.2, 100.0, -100.0, 2.49]);
    let t =
        quantize::trunc(&x, &s(0.25), &s(0.0), &s(1.0), &s(4.0), true, false, RoundingMode::Floor).unwrap();
    assert_eq!(t.iter().copied().collect::<Vec<_>>(), [0.0, -2.0, 5.0, 7.0, -8.0, 2.0]);
    // Unsigned narrow 3-bit output: 0..=6.
    let t =
        quantize::trunc(&x, &s(0.25), &s(3.0), &s(2.0), &s(3.0), false, true, RoundingMode::Round).unwrap();
    assert_eq!(t.iter().copied().collect::<Vec<_>>(), [-0.75, -0.75, 5.25, 11.25, -0.75, 3.25]);
}

#[test]
fn quantize_linear_rounds_half_to_even_and_saturates() {
    let x = a(&[6], &[-1.0, 0.25, 0.75, 1.25, 300.0, -300.0]);
    let zp = ArrayD::from_elem(IxDyn(&[]), 128i64);
    let q = quantize::quantize_linear(&x, &s(0.5), Some(&zp), 1, QuantIntType::Uint8).unwrap();
    assert_eq!(q.iter().copied().collect::<Vec<_>>(), [126, 128, 130, 130, 255, 0]);
    let q = quantize::quantize_linear(&x, &s(0.5), None, 1, QuantIntType::Int8).unwrap();
    assert_eq!(q.iter().copied().collect::<Vec<_>>(), [-2, 0, 2, 2, 127, -128]);
    let d = quantize::dequantize_linear(&q, &s(0.5), None, 1).unwrap();
    assert_eq!(d.iter().copied().collect::<Vec<_>>(), [-1.0, 0.0, 1.0, 1.0, 63.5, -64.0]);
    let codes = ArrayD::from_shape_vec(IxDyn(&[3]), vec![0i64, 128, 255]).unwrap();
    let d = quantize::dequantize_linear(&codes, &s(0.5), Some(&zp), 0).unwrap();
    assert_eq!(d.iter().copied().collect::<Vec<_>>(), [-64.0, 0.0, 63.5]);
}

#[test]
fn qdq_per_axis() {
    let x = a(&[2, 3], &[1.0, 2.0, 3.0, -1.0, -2.0, -3.0]);
    // Axis 0: one scale per row, int8 zero points.
    let zp = ArrayD::from_shape_vec(IxDyn(&[2]), vec![1i64, -1]).unwrap();
    let q = quantize::quantize_linear(&x, &a(&[2], &[1.0, 0.5]), Some(&zp), 0, QuantIntType::Int8).unwrap();
    assert_eq!(q.iter().copied().collect::<Vec<_>>(), [2, 3, 4, -3, -5, -7]);
    let d = quantize::dequantize_linear(&q, &a(&[2], &[1.0, 0.5]), Some(&zp), 0).unwrap();
    assert_eq!(d, x);
    // Axis -1 (= 1): one scale per column.
    let q = quantize::quantize_linear(&x, &a(&[3], &[1.0, 2.0, 4.0]), None, -1, QuantIntType::Int8).unwrap();
    assert_eq!(q.iter().copied().collect::<Vec<_>>(), [1, 1, 1, -1, -1, -1]);
    let e = quantize::quantize_linear(&x, &a(&[3], &[1.0; 3]), None, 0, QuantIntType::Int8).unwrap_err();
    assert!(e.contains("axis 0"), "{e}");
    let zp2 = ArrayD::from_shape_vec(IxDyn(&[3]), vec![0i64; 3]).unwrap();
    let e =
        quantize::quantize_linear(&x, &a(&[2], &[1.0; 2]), Some(&zp2), 0, QuantIntType::Int8).unwrap_err();
    assert!(e.contains("zero point's shape"), "{e}");
}

#[test]
fn eval_op_reads_node_owned_tensors() {
    let mut w = BTreeMap::new();
    w.insert("q.scale".to_string(), Tensor::F32(s(0.5)));
    w.insert("q.zp".to_string(), Tensor::I64(ArrayD::from_elem(IxDyn(&[]), 3)));
    let x = Tensor::F32(a(&[3], &[0.2, -0.8, 1.0]));
    let op = Op::QuantizeLinear {
        scale: "q.scale".into(),
        zero_point: Some("q.zp".into()),
        axis: 1,
        to: QuantIntType::Int8,
    };
    let codes = eval_op(&op, &[&x], &w).unwrap();
    assert_eq!(codes, Tensor::I64(ArrayD::from_shape_vec(IxDyn(&[3]), vec![3, 1, 5]).unwrap()));
    let op = Op::DequantizeLinear {
        codes: QuantIntType::Int8,
        scale: "q.scale".into(),
        zero_point: Some("q.zp".into()),
        axis: 1,
    };
    assert_eq!(eval_op(&op, &[&codes], &w).unwrap(), Tensor::F32(a(&[3], &[0.0, -1.0, 1.0])));
    let e = eval_op(&op, &[&x], &w).unwrap_err();
    assert!(e.contains("must be integer codes"), "{e}");
}

// ---- import errors -------------------------------------------------------------------------

fn f32_init(name: &str, v: f32) -> TensorProto {
    tensor_to_proto(name, &Tensor::F32(s(v)))
}

fn qonnx_model(nodes: Vec<NodeProto>, inits: Vec<TensorProto>, qonnx_opset: i64) -> Vec<u8> {
    ModelProto {
        ir_version: 8,
        opset_import: vec![
            OperatorSetIdProto { domain: String::new(), version: 13 },
            OperatorSetIdProto { domain: "qonnx.custom_op.general".into(), version: qonnx_opset },
        ],
        producer_name: "test".into(),
        producer_version: String::new(),
        graph: Some(GraphProto {
            node: nodes,
            name: "g".into(),
            initializer: inits,
            input: vec![vi("x", &[2, 3])],
            output: vec![vi("y", &[2, 3])],
            value_info: vec![],
        }),
    }
    .encode_to_vec()
}

fn node(op: &str, domain: &str, inputs: &[&str], attrs: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec!["y".into()],
        name: format!("my_{}", op.to_lowercase()),
        op_type: op.into(),
        domain: domain.into(),
        attribute: attrs,
    }
}

fn int_attr(name: &str, v: i64) -> AttributeProto {
    AttributeProto { name: name.into(), r#type: attr_type::INT, i: Some(v), ..Default::default() }
}
fn str_attr(name: &str, v: &str) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: attr_type::STRING,
        s: v.as_bytes().to_vec(),
        ..Default::default()
    }
}

fn quant_inits(bits: f32) -> Vec<TensorProto> {
    vec![f32_init("s", 0.25), f32_init("z", 0.0), f32_init("b", bits)]
}

fn import_err(bytes: &[u8]) -> String {
    match import_bytes(bytes, "m.onnx", &ImportOptions::default()) {
        Ok(_) => panic!("imported"),
        Err(e) => e.to_string(),
    }
}

const Q: &str = "qonnx.custom_op.general";

#[test]
fn quant_imports_in_every_qonnx_domain_name() {
    for domain in mase_ir::onnx::QONNX_DOMAINS {
        let attrs = vec![int_attr("signed", 1), int_attr("narrow", 0), str_attr("rounding_mode", "half_up")];
        let mut m = ModelProto::decode(
            qonnx_model(vec![node("Quant", domain, &["x", "s", "z", "b"], attrs)], quant_inits(4.0), 2)
                .as_slice(),
        )
        .unwrap();
        m.opset_import[1].domain = domain.to_string();
        let g = import_bytes(&m.encode_to_vec(), "m.onnx", &ImportOptions::default()).unwrap();
        let n = g.nodes().map(|(_, n)| n).find(|n| matches!(n.op, Op::Quant { .. })).unwrap();
        assert!(matches!(
            n.op,
            Op::Quant { signed: true, narrow: false, rounding: RoundingMode::HalfUp, .. }
        ));
        let x = Tensor::F32(a(&[2, 3], &[0.125, -0.125, 0.3, 5.0, -5.0, 0.0]));
        let mut ins = HashMap::new();
        ins.insert("x".to_string(), x);
        let y = interp::run_outputs(&g, &ins).unwrap();
        assert_eq!(y[0], Tensor::F32(a(&[2, 3], &[0.25, -0.25, 0.25, 1.75, -2.0, 0.0])));
    }
}

#[test]
fn unsupported_quant_attributes_are_refused() {
    let base = || vec![int_attr("signed", 1), int_attr("narrow", 0)];
    let mut attrs = base();
    attrs.push(int_attr("foo", 1));
    let e =
        import_err(&qonnx_model(vec![node("Quant", Q, &["x", "s", "z", "b"], attrs)], quant_inits(4.0), 2));
    assert!(e.contains("my_quant") && e.contains("attribute 'foo' is not supported for Quant"), "{e}");
    let mut attrs = base();
    attrs.push(str_attr("rounding_mode", "STOCHASTIC"));
    let e =
        import_err(&qonnx_model(vec![node("Quant", Q, &["x", "s", "z", "b"], attrs)], quant_inits(4.0), 2));
    assert!(e.contains("'rounding_mode' is 'STOCHASTIC'; supported: ROUND, CEIL"), "{e}");
    let e = import_err(&qonnx_model(
        vec![node("Quant", Q, &["x", "s", "z", "b"], vec![int_attr("signed", 1)])],
        quant_inits(4.0),
        2,
    ));
    assert!(e.contains("attribute 'narrow' is required"), "{e}");
    let e =
        import_err(&qonnx_model(vec![node("Quant", Q, &["x", "s", "z", "b"], base())], quant_inits(4.5), 2));
    assert!(e.contains("bit width is 4.5"), "{e}");
    let e =
        import_err(&qonnx_model(vec![node("Quant", Q, &["x", "x", "z", "b"], base())], quant_inits(4.0), 2));
    assert!(e.contains("scale input must be a constant"), "{e}");
}

#[test]
fn unknown_domains_and_qonnx_ops_are_refused() {
    let e = import_err(&qonnx_model(vec![node("FusedGemm", "com.microsoft", &["x"], vec![])], vec![], 2));
    assert!(e.contains("my_fusedgemm") && e.contains("domain 'com.microsoft' is not supported"), "{e}");
    assert!(e.contains("Quant, BipolarQuant, Trunc"), "{e}");
    let e = import_err(&qonnx_model(vec![node("MultiThreshold", Q, &["x"], vec![])], vec![], 2));
    assert!(
        e.contains("op type 'MultiThreshold' of domain 'qonnx.custom_op.general' is not supported"),
        "{e}"
    );
    // A QONNX op name in the default domain is not QONNX's.
    let e =
        import_err(&qonnx_model(vec![node("Quant", "", &["x", "s", "z", "b"], vec![])], quant_inits(4.0), 2));
    assert!(e.contains("op type 'Quant' is not supported"), "{e}");
}

#[test]
fn trunc_v1_is_refused_and_v2_imports() {
    let inits = vec![
        f32_init("s", 0.25),
        f32_init("z", 0.0),
        f32_init("ib", 8.0),
        f32_init("os", 1.0),
        f32_init("ob", 4.0),
    ];
    let v1 = node("Trunc", Q, &["x", "s", "z", "ib", "ob"], vec![str_attr("rounding_mode", "FLOOR")]);
    let e = import_err(&qonnx_model(vec![v1], inits.clone(), 1));
    assert!(e.contains("my_trunc") && e.contains("Trunc version 1") && e.contains("ambiguous"), "{e}");
    let v2 = node("Trunc", Q, &["x", "s", "z", "ib", "os", "ob"], vec![str_attr("rounding_mode", "FLOOR")]);
    let g =
        import_bytes(&qonnx_model(vec![v2], inits.clone(), 2), "m.onnx", &ImportOptions::default()).unwrap();
    let mut ins = HashMap::new();
    ins.insert("x".to_string(), Tensor::F32(a(&[2, 3], &[0.3, -1.7, 5.2, 100.0, -100.0, 2.49])));
    let y = interp::run_outputs(&g, &ins).unwrap();
    assert_eq!(y[0], Tensor::F32(a(&[2, 3], &[0.0, -2.0, 5.0, 7.0, -8.0, 2.0])));
    let short = node("Trunc", Q, &["x", "s", "z", "ib", "ob"], vec![str_attr("rounding_mode", "FLOOR")]);
    let e = import_err(&qonnx_model(vec![short], inits, 2));
    assert!(e.contains("Trunc v2 takes 6 inputs"), "{e}");
}

#[test]
fn qdq_zero_point_types() {
    let int16_zp = TensorProto {
        name: "z".into(),
        data_type: data_type::INT16,
        raw_data: vec![0, 0],
        ..Default::default()
    };
    let mut m = ModelProto::decode(
        qonnx_model(
            vec![node("QuantizeLinear", "", &["x", "s", "z"], vec![])],
            vec![f32_init("s", 0.5), int16_zp],
            2,
        )
        .as_slice(),
    )
    .unwrap();
    m.opset_import.truncate(1);
    let e = import_err(&m.encode_to_vec());
    assert!(e.contains("zero point's type is INT16; supported: INT8, UINT8"), "{e}");
}

// ---- round trips ---------------------------------------------------------------------------

fn eval_rows(g: &MaseGraph) -> Tensor {
    let x = mase_ir::npy::read_npy(fixtures().join("quant/eval.x.npy")).unwrap();
    let x = x.as_f32().unwrap().slice(ndarray::s![0..4, ..]).to_owned().into_dyn();
    let mut ins = HashMap::new();
    ins.insert(g.node(g.input_ids()[0]).name.clone(), Tensor::F32(x));
    interp::run_outputs(g, &ins).unwrap().remove(0)
}

#[test]
fn checkpoints_and_onnx_exports_round_trip() {
    for name in ["brevitas_mlp_po2", "brevitas_mlp_float", "ort_qdq_mlp"] {
        for fold in [true, false] {
            let opts = ImportOptions { fold, raise: fold, ..Default::default() };
            let g =
                mase_ir::onnx::import_file(&fixtures().join(format!("quant/{name}.onnx")), &opts).unwrap();
            let want = eval_rows(&g);
            let dir = tempfile::tempdir().unwrap();
            checkpoint::export(&g, &dir.path().join("m")).unwrap();
            let back = checkpoint::load(&dir.path().join("m")).unwrap();
            assert_eq!(back, g, "{name}: checkpoint");
            let bytes = to_onnx(&g, &ExportOptions::default()).unwrap();
            let again = import_bytes(&bytes, "export.onnx", &opts).unwrap();
            assert!(same_bits(&eval_rows(&again), &want), "{name} (fold {fold}): ONNX export");
        }
    }
}
