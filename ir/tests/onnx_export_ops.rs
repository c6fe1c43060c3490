//! ONNX export of every op kind: for each `OpKind` (an exhaustive match, so a new op without
//! cases does not compile) small graphs with that op are exported at opsets 17 and 20,
//! imported back, and run with the float interpreter on the same inputs: every output equal
//! bit for bit, the first (plain) case of each kind imported back as the same kind, and every
//! export deterministic.
//!
//! With `MASE_EXPORT_DUMP=DIR` set, each case's model, inputs and outputs are also written to
//! DIR/<opset> (`<case>.onnx`, `<case>.in.<input>.npy`, `<case>.out.<k>.npy`) for checking
//! with onnxruntime by hand.

mod onnx_support;

use std::collections::HashMap;

use mase_ir::metadata::TensorMeta;
use mase_ir::onnx::{import_bytes, to_onnx, ExportOptions, ImportOptions};
use mase_ir::op::{CmpOp, GeluApprox, LogicOp, QuantIntType, RoundingMode};
use mase_ir::tensor::DType;
use mase_ir::{interp, MaseGraph, NodeId, Op, OpKind, Tensor};
use ndarray::{ArrayD, IxDyn};
use onnx_support::same_bits;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One graph to round-trip and the inputs to run it on.
struct Case {
    name: String,
    g: MaseGraph,
    inputs: HashMap<String, Tensor>,
}

/// Builds a case: placeholders with their values, constants, weights, nodes.
struct B {
    g: MaseGraph,
    inputs: HashMap<String, Tensor>,
    rng: ChaCha8Rng,
}

impl B {
    fn new(name: &str) -> Self {
        B { g: MaseGraph::new(name), inputs: HashMap::new(), rng: ChaCha8Rng::seed_from_u64(7) }
    }

    /// Floats uniform in `[lo, hi)`.
    fn floats(&mut self, shape: &[usize], lo: f32, hi: f32) -> Tensor {
        let n = shape.iter().product();
        Tensor::from_f32(shape, (0..n).map(|_| self.rng.gen_range(lo..hi)).collect()).unwrap()
    }

    /// A graph input with its value (only its type and shape are recorded in the graph).
    fn input(&mut self, name: &str, t: Tensor) -> NodeId {
        let id = self.g.add_node(name, Op::Placeholder, vec![]).unwrap();
        let meta = TensorMeta::unquantized(t.shape(), t.dtype());
        self.g.node_mut(id).meta.common.results.insert("data_out_0".into(), meta);
        self.inputs.insert(name.to_string(), t);
        id
    }

    /// A float input of `shape`, uniform in [-2, 2).
    fn x(&mut self, name: &str, shape: &[usize]) -> NodeId {
        let t = self.floats(shape, -2.0, 2.0);
        self.input(name, t)
    }

    /// A QDQ node's scale (random, of `shape`: `[]` per tensor, `[n]` per axis) and its zero
    /// point of the same shape (`zp` in every element) when it has one.
    fn qdq_params(&mut self, shape: &[usize], zp: Option<i64>) -> (String, Option<String>) {
        let t = self.floats(shape, 0.01, 0.05);
        let scale = self.weight("q.scale", t);
        let n = shape.iter().product();
        (scale, zp.map(|z| self.weight("q.zero_point", i64s(shape, &vec![z; n]))))
    }

    fn weight(&mut self, key: &str, t: Tensor) -> String {
        self.g.weights.insert(key.to_string(), t);
        key.to_string()
    }

    fn constant(&mut self, name: &str, t: Tensor) -> NodeId {
        let key = self.weight(name, t);
        self.g.add_node(name, Op::Constant { tensor: key }, vec![]).unwrap()
    }

    fn op(&mut self, name: &str, op: Op, inputs: &[NodeId]) -> NodeId {
        self.g.add_node(name, op, inputs.to_vec()).unwrap()
    }

    fn finish(mut self, outs: &[NodeId]) -> Case {
        self.g.add_node("output", Op::Output, outs.to_vec()).unwrap();
        self.g.validate().unwrap();
        Case { name: self.g.name.clone(), g: self.g, inputs: self.inputs }
    }
}

fn i64s(shape: &[usize], v: &[i64]) -> Tensor {
    Tensor::from_i64(shape, v.to_vec()).unwrap()
}

fn i32s(shape: &[usize], v: &[i32]) -> Tensor {
    Tensor::I32(ArrayD::from_shape_vec(IxDyn(shape), v.to_vec()).unwrap())
}

fn bools(shape: &[usize], v: &[bool]) -> Tensor {
    Tensor::Bool(ArrayD::from_shape_vec(IxDyn(shape), v.to_vec()).unwrap())
}

/// `x [2, 3, 4] → op → output`.
fn unary(name: &str, op: Op) -> Case {
    let mut b = B::new(name);
    let x = b.x("x", &[2, 3, 4]);
    let y = b.op("y", op, &[x]);
    b.finish(&[y])
}

/// `op(inputs…) → output` on the given input tensors, named `a`, `b`, `c`, ….
fn on(name: &str, op: Op, ins: Vec<Tensor>) -> Case {
    let mut b = B::new(name);
    let ids: Vec<NodeId> = ins
        .into_iter()
        .enumerate()
        .map(|(k, t)| b.input(&((b'a' + k as u8) as char).to_string(), t))
        .collect();
    let y = b.op("y", op, &ids);
    b.finish(&[y])
}

/// `a [2, 3] op b [3]` on floats (b positive, for Div and Pow).
fn binary(name: &str, op: Op) -> Case {
    let mut b = B::new(name);
    let x = b.x("a", &[2, 3]);
    let t = b.floats(&[3], 0.5, 2.0);
    let y = b.input("b", t);
    let z = b.op("y", op, &[x, y]);
    b.finish(&[z])
}

/// The cases of one op kind; the first is the plain form, which imports back as the same kind.
fn cases(kind: OpKind) -> Vec<Case> {
    match kind {
        OpKind::Placeholder => {
            // The graph returns its input: output and input share the name.
            let mut b = B::new("placeholder");
            let x = b.x("x", &[2, 3]);
            vec![b.finish(&[x])]
        }
        OpKind::Output => {
            // One value returned twice and an input returned as well.
            let mut b = B::new("output");
            let x = b.x("x", &[2, 3]);
            let r = b.op("r", Op::Relu, &[x]);
            vec![b.finish(&[r, x, r])]
        }
        OpKind::Constant => {
            let mut b = B::new("constant");
            let x = b.x("x", &[2, 3]);
            let t = b.floats(&[3], -1.0, 1.0);
            let c = b.constant("c", t);
            let y = b.op("y", Op::Add, &[x, c]);
            let flags = bools(&[2], &[true, false]);
            let f = b.constant("flags", flags);
            vec![b.finish(&[y, c, f])]
        }
        OpKind::Linear => {
            let mut v = Vec::new();
            for bias in [true, false] {
                let mut b = B::new(if bias { "linear" } else { "linear_no_bias" });
                let x = b.x("x", &[2, 3, 4]);
                let t = b.floats(&[5, 4], -1.0, 1.0);
                let w = b.weight("fc.weight", t);
                let t = b.floats(&[5], -1.0, 1.0);
                let bk = bias.then(|| b.weight("fc.bias", t));
                let y = b.op("fc", Op::Linear { weight: w, bias: bk }, &[x]);
                v.push(b.finish(&[y]));
            }
            // Two nodes sharing one weight, and a 1-D input.
            let mut b = B::new("linear_shared");
            let x = b.x("x", &[4]);
            let t = b.floats(&[4, 4], -1.0, 1.0);
            let w = b.weight("w", t);
            let y = b.op("l1", Op::Linear { weight: w.clone(), bias: None }, &[x]);
            let z = b.op("l2", Op::Linear { weight: w, bias: None }, &[y]);
            v.push(b.finish(&[z]));
            v
        }
        OpKind::Matmul => {
            let mut b = B::new("matmul");
            let x = b.x("a", &[2, 3, 4]);
            let y = b.x("b", &[4, 5]);
            let z = b.op("y", Op::Matmul, &[x, y]);
            vec![b.finish(&[z])]
        }
        OpKind::Relu => {
            vec![unary("relu", Op::Relu), on("relu_i64", Op::Relu, vec![i64s(&[4], &[-3, 0, 2, -1])])]
        }
        OpKind::Gelu => vec![
            unary("gelu", Op::Gelu { approximate: GeluApprox::None }),
            unary("gelu_tanh", Op::Gelu { approximate: GeluApprox::Tanh }),
        ],
        OpKind::Softmax => {
            let mut v = vec![
                unary("softmax", Op::Softmax { axis: -1 }),
                unary("softmax_axis1", Op::Softmax { axis: 1 }),
            ];
            // A key-padding mask with the second sentence fully masked: its rows are all 0.
            let mut b = B::new("softmax_masked");
            let x = b.x("x", &[2, 3, 4]);
            let keep =
                b.input("keep", bools(&[2, 1, 4], &[true, true, false, true, false, false, false, false]));
            let y = b.op("y", Op::Softmax { axis: -1 }, &[x, keep]);
            v.push(b.finish(&[y]));
            v
        }
        OpKind::LayerNorm => {
            let mut v = Vec::new();
            for (name, axis, w_shape, b_shape) in [
                ("layer_norm", -1, Some(vec![4]), Some(vec![4])),
                ("layer_norm_no_affine", -1, None, None),
                ("layer_norm_scale_only", 2, Some(vec![4]), None),
                ("layer_norm_bias_only", -1, None, Some(vec![4])),
                // Over the last two axes with a scale and bias that broadcast to [3, 4].
                ("layer_norm_axis1", 1, Some(vec![4]), Some(vec![1, 4])),
            ] {
                let mut b = B::new(name);
                let x = b.x("x", &[2, 3, 4]);
                let weight = w_shape.map(|s| {
                    let t = b.floats(&s, 0.5, 1.5);
                    b.weight("ln.weight", t)
                });
                let bias = b_shape.map(|s| {
                    let t = b.floats(&s, -0.5, 0.5);
                    b.weight("ln.bias", t)
                });
                let y = b.op("ln", Op::LayerNorm { axis, epsilon: 1e-5, weight, bias }, &[x]);
                v.push(b.finish(&[y]));
            }
            v
        }
        OpKind::Add => vec![
            binary("add", Op::Add),
            on("add_i64", Op::Add, vec![i64s(&[3], &[1, -2, 3]), i64s(&[1], &[5])]),
        ],
        OpKind::Sub => vec![
            binary("sub", Op::Sub),
            on("sub_i32", Op::Sub, vec![i32s(&[2], &[7, 1]), i32s(&[2], &[3, 4])]),
        ],
        OpKind::Mul => vec![binary("mul", Op::Mul)],
        OpKind::Div => {
            // An integer divisor is a constant: shape inference runs on zero inputs.
            let mut b = B::new("div_i64");
            let x = b.input("a", i64s(&[3], &[7, -7, 9]));
            let d = b.constant("d", i64s(&[3], &[2, 2, -4]));
            let y = b.op("y", Op::Div, &[x, d]);
            vec![binary("div", Op::Div), b.finish(&[y])]
        }
        OpKind::Pow => {
            let mut b = B::new("pow");
            let t = b.floats(&[2, 3], 0.5, 2.0);
            let x = b.input("a", t);
            let e = b.x("b", &[3]);
            let y = b.op("y", Op::Pow, &[x, e]);
            vec![b.finish(&[y])]
        }
        OpKind::MulScalar => vec![
            unary("mul_scalar", Op::MulScalar { scalar: 0.125 }),
            unary("mul_scalar_inexact", Op::MulScalar { scalar: 1.0 / 3.0 }),
            on("mul_scalar_i64", Op::MulScalar { scalar: 3.0 }, vec![i64s(&[3], &[1, -2, 5])]),
        ],
        OpKind::Sqrt => {
            let mut b = B::new("sqrt");
            let t = b.floats(&[2, 3], 0.0, 4.0);
            let x = b.input("x", t);
            let y = b.op("y", Op::Sqrt, &[x]);
            vec![b.finish(&[y])]
        }
        OpKind::Erf => vec![unary("erf", Op::Erf)],
        OpKind::Tanh => vec![unary("tanh", Op::Tanh)],
        OpKind::ReduceMean => vec![
            unary("reduce_mean", Op::ReduceMean { axes: vec![1], keepdims: true }),
            unary("reduce_mean_all", Op::ReduceMean { axes: vec![], keepdims: false }),
            unary("reduce_mean_two_axes", Op::ReduceMean { axes: vec![-1, 0, 2], keepdims: false }),
            on(
                "reduce_mean_i64",
                Op::ReduceMean { axes: vec![0], keepdims: false },
                vec![i64s(&[2, 2], &[1, 2, 4, -7])],
            ),
            on(
                "reduce_mean_i32",
                Op::ReduceMean { axes: vec![1], keepdims: true },
                vec![i32s(&[2, 2], &[1, 2, 4, -7])],
            ),
        ],
        OpKind::ReduceSum => vec![
            unary("reduce_sum", Op::ReduceSum { axes: vec![1, -1], keepdims: false }),
            unary("reduce_sum_all", Op::ReduceSum { axes: vec![], keepdims: true }),
            on(
                "reduce_sum_i32",
                Op::ReduceSum { axes: vec![0], keepdims: false },
                vec![i32s(&[2, 2], &[1, 2, 4, -7])],
            ),
        ],
        OpKind::Reshape => vec![unary("reshape", Op::Reshape { shape: vec![0, -1] })],
        OpKind::Transpose => vec![
            unary("transpose", Op::Transpose { perm: vec![2, 0, 1] }),
            unary("transpose_reverse", Op::Transpose { perm: vec![] }),
        ],
        OpKind::Flatten => {
            vec![unary("flatten", Op::Flatten { axis: 1 }), unary("flatten_neg", Op::Flatten { axis: -1 })]
        }
        OpKind::Dropout => vec![
            unary("dropout", Op::Dropout { ratio: 0.1 }),
            on("dropout_i64", Op::Dropout { ratio: 0.5 }, vec![i64s(&[2], &[4, 5])]),
        ],
        OpKind::Identity => vec![unary("identity", Op::Identity)],
        OpKind::Unsqueeze => vec![unary("unsqueeze", Op::Unsqueeze { axes: vec![0, -1] })],
        OpKind::Squeeze => {
            let mut v = Vec::new();
            for (name, axes) in [("squeeze", vec![1]), ("squeeze_all", vec![])] {
                let mut b = B::new(name);
                let x = b.x("x", &[2, 1, 3, 1]);
                let y = b.op("y", Op::Squeeze { axes }, &[x]);
                v.push(b.finish(&[y]));
            }
            v
        }
        OpKind::Concat => {
            let mut b = B::new("concat");
            let x = b.x("a", &[2, 1, 3]);
            let y = b.x("b", &[2, 2, 3]);
            let z = b.op("y", Op::Concat { axis: 1 }, &[x, y, x]);
            vec![b.finish(&[z])]
        }
        OpKind::Slice => vec![
            unary(
                "slice",
                Op::Slice {
                    starts: vec![1, 0],
                    ends: vec![3, i64::MAX],
                    axes: vec![-1, 0],
                    steps: vec![1, 2],
                },
            ),
            unary(
                "slice_backwards",
                Op::Slice { starts: vec![-1], ends: vec![-10], axes: vec![2], steps: vec![-2] },
            ),
            unary(
                "slice_defaults",
                Op::Slice { starts: vec![1], ends: vec![2], axes: vec![], steps: vec![] },
            ),
        ],
        OpKind::Gather => {
            let mut v = Vec::new();
            for (name, idx) in
                [("gather", i64s(&[2, 2], &[0, -1, 2, 1])), ("gather_i32", i32s(&[3], &[2, 0, 2]))]
            {
                let mut b = B::new(name);
                let x = b.x("x", &[2, 3, 4]);
                let i = b.input("idx", idx);
                let y = b.op("y", Op::Gather { axis: 1 }, &[x, i]);
                v.push(b.finish(&[y]));
            }
            v
        }
        OpKind::Embedding => {
            let mut b = B::new("embedding");
            let t = b.floats(&[10, 4], -1.0, 1.0);
            let table = b.weight("emb.weight", t);
            let ids = b.input("ids", i64s(&[2, 3], &[0, 9, 3, 3, 1, 7]));
            let y = b.op("emb", Op::Embedding { table }, &[ids]);
            vec![b.finish(&[y])]
        }
        OpKind::GatherNd => {
            let mut v = Vec::new();
            for (name, batch_dims, idx) in [
                ("gather_nd", 0, i64s(&[2, 2], &[0, 1, 1, 2])),
                ("gather_nd_batch", 1, i64s(&[2, 1], &[2, 0])),
                ("gather_nd_i32", 0, i32s(&[1, 3], &[1, 2, 3])),
            ] {
                let mut b = B::new(name);
                let x = b.x("x", &[2, 3, 4]);
                let i = b.input("idx", idx);
                let y = b.op("y", Op::GatherNd { batch_dims }, &[x, i]);
                v.push(b.finish(&[y]));
            }
            v
        }
        OpKind::Compare => {
            let mut v = Vec::new();
            for cmp in [CmpOp::Less, CmpOp::Equal, CmpOp::LessOrEqual, CmpOp::Greater, CmpOp::GreaterOrEqual]
            {
                let mut b = B::new(&format!("compare_{cmp:?}").to_lowercase());
                let x = b.x("a", &[2, 3]);
                // Rounded, so some pairs are equal.
                let t = Tensor::F32(b.floats(&[3], -2.0, 2.0).as_f32().unwrap().mapv(f32::round));
                let y = b.input("b", t);
                let z = b.op("y", Op::Compare { cmp }, &[x, y]);
                v.push(b.finish(&[z]));
            }
            let (p, q) = (bools(&[4], &[false, false, true, true]), bools(&[4], &[false, true, false, true]));
            v.push(on("compare_bool_less", Op::Compare { cmp: CmpOp::Less }, vec![p.clone(), q.clone()]));
            v.push(on("compare_bool_equal", Op::Compare { cmp: CmpOp::Equal }, vec![p, q]));
            v.push(on(
                "compare_i64",
                Op::Compare { cmp: CmpOp::GreaterOrEqual },
                vec![i64s(&[3], &[1, 2, 3]), i64s(&[1], &[2])],
            ));
            v
        }
        OpKind::Logic => [LogicOp::And, LogicOp::Or, LogicOp::Xor]
            .into_iter()
            .map(|logic| {
                let ins =
                    vec![bools(&[4], &[false, false, true, true]), bools(&[4], &[false, true, false, true])];
                on(&format!("logic_{logic:?}").to_lowercase(), Op::Logic { logic }, ins)
            })
            .collect(),
        OpKind::Not => vec![on("not", Op::Not, vec![bools(&[3], &[true, false, true])])],
        OpKind::Where => {
            let mut b = B::new("where");
            let c = b.input("cond", bools(&[2, 1], &[true, false]));
            let x = b.x("a", &[2, 3]);
            let y = b.x("b", &[3]);
            let z = b.op("y", Op::Where, &[c, x, y]);
            vec![b.finish(&[z])]
        }
        OpKind::Max | OpKind::Min => {
            let (name, op) = if kind == OpKind::Max { ("max", Op::Max) } else { ("min", Op::Min) };
            let mut b = B::new(name);
            let x = b.x("a", &[2, 3]);
            let y = b.x("b", &[3]);
            let z = b.x("c", &[2, 1]);
            let m = b.op("y", op.clone(), &[x, y, z]);
            let mut v = vec![b.finish(&[m])];
            v.push(on(&format!("{name}_one"), op.clone(), vec![i64s(&[2], &[3, -4])]));
            v.push(on(&format!("{name}_i64"), op, vec![i64s(&[2], &[3, -4]), i64s(&[2], &[1, 5])]));
            v
        }
        OpKind::Expand => {
            let mut b = B::new("expand");
            let x = b.x("x", &[3, 1]);
            let y = b.op("y", Op::Expand { shape: vec![2, 1, 4] }, &[x]);
            vec![b.finish(&[y])]
        }
        OpKind::Range => {
            let mut v = Vec::new();
            let sets: [(&str, [Tensor; 3]); 3] = [
                ("range", [i64s(&[], &[1]), i64s(&[], &[8]), i64s(&[], &[2])]),
                (
                    "range_f32",
                    [
                        Tensor::from_f32(&[], vec![0.5]).unwrap(),
                        Tensor::from_f32(&[], vec![-1.0]).unwrap(),
                        Tensor::from_f32(&[], vec![-0.25]).unwrap(),
                    ],
                ),
                // One-element 1-D operands, which the interpreter takes and ONNX does not.
                ("range_rank1", [i64s(&[1], &[0]), i64s(&[1], &[3]), i64s(&[1], &[1])]),
            ];
            for (name, [s, l, d]) in sets {
                let mut b = B::new(name);
                let x = b.x("x", &[2]);
                let s = b.constant("start", s);
                let l = b.constant("limit", l);
                let d = b.constant("delta", d);
                let r = b.op("y", Op::Range, &[s, l, d]);
                v.push(b.finish(&[r, x]));
            }
            v
        }
        OpKind::ConstantOfShape => {
            let mut v = Vec::new();
            for (name, value, dtype, shape) in [
                ("constant_of_shape", 1.5, DType::F32, i64s(&[2], &[2, 3])),
                ("constant_of_shape_i64", 7.0, DType::I64, i64s(&[1], &[4])),
                ("constant_of_shape_bool", 1.0, DType::Bool, i64s(&[2], &[1, 2])),
                ("constant_of_shape_i32_shape", -2.0, DType::I32, i32s(&[2], &[3, 1])),
            ] {
                let mut b = B::new(name);
                let x = b.x("x", &[2]);
                let s = b.constant("dims", shape);
                let y = b.op("y", Op::ConstantOfShape { value, dtype }, &[s]);
                v.push(b.finish(&[y, x]));
            }
            v
        }
        OpKind::Cast => vec![
            unary("cast", Op::Cast { to: DType::I64 }),
            unary("cast_bool", Op::Cast { to: DType::Bool }),
            on("cast_i64_f32", Op::Cast { to: DType::F32 }, vec![i64s(&[2], &[3, -9])]),
            on("cast_bool_i32", Op::Cast { to: DType::I32 }, vec![bools(&[2], &[true, false])]),
        ],
        OpKind::Shape => vec![
            unary("shape", Op::Shape { start: 1, end: None }),
            unary("shape_end", Op::Shape { start: 0, end: Some(-1) }),
        ],
        OpKind::Quant => {
            let mut v = Vec::new();
            for (name, scale, bits, signed, narrow, rounding) in [
                ("quant", vec![1, 3, 1], 4.0, true, true, RoundingMode::HalfUp),
                ("quant_unsigned", vec![], 8.0, false, false, RoundingMode::Round),
                ("quant_1bit", vec![], 1.0, true, false, RoundingMode::Round),
                ("quant_floor", vec![4], 3.0, true, false, RoundingMode::Floor),
            ] {
                let mut b = B::new(name);
                let x = b.x("x", &[2, 3, 4]);
                let t = b.floats(&scale, 0.1, 0.5);
                let scale = b.weight("q.scale", t);
                let zero_point = b.weight("q.zero_point", Tensor::from_f32(&[], vec![0.0]).unwrap());
                let bit_width = b.weight("q.bit_width", Tensor::from_f32(&[], vec![bits]).unwrap());
                let op = Op::Quant { scale, zero_point, bit_width, signed, narrow, rounding };
                let y = b.op("y", op, &[x]);
                v.push(b.finish(&[y]));
            }
            v
        }
        OpKind::BipolarQuant => {
            let mut b = B::new("bipolar_quant");
            let x = b.x("x", &[2, 3, 4]);
            let scale = b.weight("q.scale", Tensor::from_f32(&[], vec![0.5]).unwrap());
            let y = b.op("y", Op::BipolarQuant { scale }, &[x]);
            vec![b.finish(&[y])]
        }
        OpKind::Trunc => {
            let mut b = B::new("trunc");
            let x = b.x("x", &[2, 3, 4]);
            let f = |v: f32| Tensor::from_f32(&[], vec![v]).unwrap();
            let op = Op::Trunc {
                scale: b.weight("t.scale", f(0.25)),
                zero_point: b.weight("t.zero_point", f(0.0)),
                input_bit_width: b.weight("t.input_bit_width", f(8.0)),
                output_scale: b.weight("t.output_scale", f(1.0)),
                output_bit_width: b.weight("t.output_bit_width", f(4.0)),
                signed: true,
                narrow: false,
                rounding: RoundingMode::Floor,
            };
            let y = b.op("y", op, &[x]);
            vec![b.finish(&[y])]
        }
        OpKind::QuantizeLinear => {
            let mut v = Vec::new();
            for (name, axis, scale, zp, to) in [
                ("quantize_linear", 1, vec![], Some(128), QuantIntType::Uint8),
                ("quantize_linear_axis", 1, vec![3], Some(-3), QuantIntType::Int8),
                ("quantize_linear_no_zp", -1, vec![4], None, QuantIntType::Int8),
            ] {
                let mut b = B::new(name);
                let x = b.x("x", &[2, 3, 4]);
                let (scale, zero_point) = b.qdq_params(&scale, zp);
                let y = b.op("y", Op::QuantizeLinear { scale, zero_point, axis, to }, &[x]);
                v.push(b.finish(&[y]));
            }
            v
        }
        OpKind::DequantizeLinear => {
            let mut v = Vec::new();
            for (name, axis, scale, zp, codes, values) in [
                ("dequantize_linear", 0, vec![2], Some(-1), QuantIntType::Int8, [-128, 0, 5, 127, 2, 100]),
                (
                    "dequantize_linear_u8",
                    1,
                    vec![],
                    Some(128),
                    QuantIntType::Uint8,
                    [0, 128, 255, 3, 77, 200],
                ),
                (
                    "dequantize_linear_i32",
                    1,
                    vec![3],
                    None,
                    QuantIntType::Int32,
                    [-100000, 0, 5, 70000, 2, 100],
                ),
            ] {
                let mut b = B::new(name);
                let x = b.input("x", i64s(&[2, 3], &values));
                let (scale, zero_point) = b.qdq_params(&scale, zp);
                let y = b.op("y", Op::DequantizeLinear { codes, scale, zero_point, axis }, &[x]);
                v.push(b.finish(&[y]));
            }
            v
        }
        OpKind::Qlinear => {
            let mut v = Vec::new();
            for (name, relu, bias, x_type, y_type) in [
                ("qlinear", true, true, QuantIntType::Uint8, QuantIntType::Uint8),
                ("qlinear_signed_no_bias", false, false, QuantIntType::Int8, QuantIntType::Int8),
            ] {
                let mut b = B::new(name);
                let codes: Vec<i64> = (0..24)
                    .map(|i| (i * 37 % 256) - if x_type == QuantIntType::Int8 { 128 } else { 0 })
                    .collect();
                let x = b.input("x", i64s(&[2, 3, 4], &codes));
                let t = b.floats(&[5, 4], -1.0, 1.0);
                let weight = b.weight("fc.weight", t);
                let t = b.floats(&[5], -1.0, 1.0);
                let bias = bias.then(|| b.weight("fc.bias", t));
                let op = Op::Qlinear {
                    weight,
                    bias,
                    x_type,
                    x_scale: 0.0371,
                    x_zero_point: if x_type == QuantIntType::Uint8 { 140 } else { -3 },
                    y_scale: 0.173,
                    y_zero_point: if y_type == QuantIntType::Uint8 { 113 } else { 2 },
                    y_type,
                    relu,
                };
                let y = b.op("y", op, &[x]);
                v.push(b.finish(&[y]));
            }
            v
        }
    }
}

/// The graph exported at `opset`, checked deterministic.
fn export(c: &Case, opset: i64) -> Vec<u8> {
    let opts = ExportOptions { opset, ..Default::default() };
    let bytes = to_onnx(&c.g, &opts).unwrap_or_else(|e| panic!("{}: {e}", c.name));
    assert_eq!(to_onnx(&c.g, &opts).unwrap(), bytes, "{}: two exports differ", c.name);
    bytes
}

#[test]
fn every_op_kind_round_trips_bit_for_bit() {
    let dump = std::env::var_os("MASE_EXPORT_DUMP").map(std::path::PathBuf::from);
    let mut count = 0;
    for &kind in OpKind::ALL {
        let cs = cases(kind);
        assert!(!cs.is_empty(), "{kind:?} has no export case");
        for (k, c) in cs.iter().enumerate() {
            assert!(c.g.nodes().any(|(_, n)| n.op.kind() == kind), "case {} has no {kind:?} node", c.name);
            let want = interp::run_outputs(&c.g, &c.inputs).unwrap_or_else(|e| panic!("{}: {e}", c.name));
            for opset in [17, 20] {
                let bytes = export(c, opset);
                // Without folding, nodes on constants (Range, ConstantOfShape) stay nodes.
                let opts = ImportOptions { fold: false, ..Default::default() };
                let back = import_bytes(&bytes, &c.name, &opts)
                    .unwrap_or_else(|e| panic!("{} at {opset}: {e}", c.name));
                let got = interp::run_outputs(&back, &c.inputs)
                    .unwrap_or_else(|e| panic!("{} at {opset}: {e}", c.name));
                assert_eq!(got.len(), want.len(), "{}", c.name);
                for (j, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!(same_bits(g, w), "{} at opset {opset}, output {j}: {g:?} != {w:?}", c.name);
                }
                if k == 0 {
                    assert!(
                        back.nodes().any(|(_, n)| n.op.kind() == kind),
                        "{} at opset {opset}: no {kind:?} node after import: {:?}",
                        c.name,
                        back.nodes().map(|(_, n)| n.op.mase_op()).collect::<Vec<_>>()
                    );
                }
                if let Some(dir) = &dump {
                    let dir = dir.join(opset.to_string());
                    std::fs::create_dir_all(&dir).unwrap();
                    std::fs::write(dir.join(format!("{}.onnx", c.name)), &bytes).unwrap();
                    for (name, t) in &c.inputs {
                        mase_ir::npy::write_npy(dir.join(format!("{}.in.{name}.npy", c.name)), t).unwrap();
                    }
                    for (j, t) in want.iter().enumerate() {
                        mase_ir::npy::write_npy(dir.join(format!("{}.out.{j}.npy", c.name)), t).unwrap();
                    }
                }
            }
            count += 1;
        }
    }
    assert!(count > OpKind::ALL.len(), "{count} cases");
}
