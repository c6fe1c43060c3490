//! Float interpreter: every kernel against a reference computed independently here (naive
//! loops over multi-indices in f64), broadcasting, ONNX edge cases, errors instead of panics on
//! bad shapes and attributes, and `run_graph` / `run_outputs` on small graphs.

use std::collections::{BTreeMap, HashMap};

use mase_ir::interp::{eval_op, run_graph, run_outputs};
use mase_ir::metadata::TensorMeta;
use mase_ir::op::{CmpOp, GeluApprox, LogicOp};
use mase_ir::tensor::DType;
use mase_ir::{MaseGraph, Op, Tensor};
use ndarray::{ArrayD, IxDyn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

// ---------------------------------------------------------------- helpers

fn rand_vec(n: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen_range(lo..hi)).collect()
}

fn rand_f32(shape: &[usize], seed: u64) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_f32(shape, rand_vec(n, seed, -2.0, 2.0)).unwrap()
}

fn f32s(t: &Tensor) -> &ArrayD<f32> {
    t.as_f32().expect("an f32 tensor")
}

fn i64s(t: &Tensor) -> &ArrayD<i64> {
    t.as_i64().expect("an i64 tensor")
}

fn no_weights() -> BTreeMap<String, Tensor> {
    BTreeMap::new()
}

fn eval(op: Op, inputs: &[&Tensor]) -> Result<Tensor, String> {
    eval_op(&op, inputs, &no_weights())
}

/// Row-major multi-index of linear position `i` in `shape`.
fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = i % shape[d];
        i /= shape[d];
    }
    idx
}

/// Element of `a` at the output index `out_idx`, by numpy broadcasting (right-aligned,
/// size-1 dimensions repeat).
fn bcast_at<T: Copy>(a: &ArrayD<T>, out_idx: &[usize]) -> T {
    let off = out_idx.len() - a.ndim();
    let idx: Vec<usize> =
        a.shape().iter().enumerate().map(|(d, &s)| if s == 1 { 0 } else { out_idx[off + d] }).collect();
    a[IxDyn(&idx)]
}

/// Asserts equal shapes and elements within `tol` (absolute, scaled by max(1, |expected|)).
fn assert_close(got: &ArrayD<f32>, want: &[f64], shape: &[usize], tol: f64, what: &str) {
    assert_eq!(got.shape(), shape, "{what}: shape");
    assert_eq!(got.len(), want.len(), "{what}: element count");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let err = (*g as f64 - w).abs();
        assert!(err <= tol * w.abs().max(1.0), "{what}: element {k}: got {g}, want {w} (err {err})");
    }
}

// ---------------------------------------------------------------- element-wise

fn broadcast_shape_ref(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let r = a.len().max(b.len());
    let pad = |s: &[usize]| -> Vec<usize> {
        std::iter::repeat_n(1, r - s.len()).chain(s.iter().copied()).collect()
    };
    let (pa, pb) = (pad(a), pad(b));
    pa.iter()
        .zip(&pb)
        .map(|(&x, &y)| {
            if x == y || y == 1 {
                Some(x)
            } else if x == 1 {
                Some(y)
            } else {
                None
            }
        })
        .collect()
}

#[test]
fn binary_f32_broadcasting_matches_naive_loops() {
    let cases: &[(&[usize], &[usize])] = &[
        (&[2, 3, 4], &[2, 3, 4]),
        (&[2, 3, 4], &[4]),
        (&[2, 1, 4], &[3, 1]),
        (&[1], &[2, 3]),
        (&[], &[2, 2]),
        (&[5, 1, 1], &[1, 4, 3]),
        (&[3, 1], &[]),
        (&[0, 3], &[1, 3]),
    ];
    type Case = (Op, fn(f64, f64) -> f64);
    let ops: Vec<Case> = vec![
        (Op::Add, |a, b| a + b),
        (Op::Sub, |a, b| a - b),
        (Op::Mul, |a, b| a * b),
        (Op::Div, |a, b| a / b),
        (Op::Pow, |a, b| a.powf(b)),
    ];
    for (k, (sa, sb)) in cases.iter().enumerate() {
        let a = rand_f32(sa, 10 + k as u64);
        // Keep divisors and pow bases away from zero and negative values.
        let b = Tensor::F32(f32s(&rand_f32(sb, 20 + k as u64)).mapv(|v| v.abs() + 0.5));
        let a_pos = Tensor::F32(f32s(&a).mapv(|v| v.abs() + 0.1));
        let out_shape = broadcast_shape_ref(sa, sb).unwrap();
        for (op, f) in &ops {
            let lhs = if matches!(op, Op::Pow) { &a_pos } else { &a };
            let got = eval(op.clone(), &[lhs, &b]).unwrap();
            let n: usize = out_shape.iter().product();
            let want: Vec<f64> = (0..n)
                .map(|i| {
                    let idx = unravel(i, &out_shape);
                    f(bcast_at(f32s(lhs), &idx) as f64, bcast_at(f32s(&b), &idx) as f64)
                })
                .collect();
            assert_close(f32s(&got), &want, &out_shape, 1e-6, &format!("{op:?} {sa:?} {sb:?}"));
        }
    }
}

#[test]
fn binary_shape_mismatch_and_type_mismatch_are_errors() {
    let a = rand_f32(&[2, 3], 1);
    let b = rand_f32(&[4], 2);
    let e = eval(Op::Add, &[&a, &b]).unwrap_err();
    assert!(e.contains("add") && e.contains("[2, 3]") && e.contains("[4]"), "{e}");
    let i = Tensor::from_i64(&[3], vec![1, 2, 3]).unwrap();
    let e = eval(Op::Mul, &[&a, &i]).unwrap_err();
    assert!(e.contains("same element type"), "{e}");
    let e = eval(Op::Add, &[&a]).unwrap_err();
    assert!(e.contains("takes 2 inputs, got 1"), "{e}");
}

#[test]
fn random_shape_pairs_broadcast_exactly_when_numpy_would() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..300 {
        let ra = rng.gen_range(0..4);
        let rb = rng.gen_range(0..4);
        let sa: Vec<usize> = (0..ra).map(|_| rng.gen_range(1..4)).collect();
        let sb: Vec<usize> = (0..rb).map(|_| rng.gen_range(1..4)).collect();
        let a = Tensor::zeros_f32(&sa);
        let b = Tensor::zeros_f32(&sb);
        let got = eval(Op::Sub, &[&a, &b]);
        match broadcast_shape_ref(&sa, &sb) {
            Some(s) => assert_eq!(got.unwrap().shape(), s.as_slice(), "{sa:?} {sb:?}"),
            None => assert!(got.is_err(), "{sa:?} {sb:?} should not broadcast"),
        }
    }
}

#[test]
fn binary_i64_shape_arithmetic() {
    let a = Tensor::from_i64(&[4], vec![7, -7, 12, 0]).unwrap();
    let b = Tensor::from_i64(&[4], vec![2, 2, -5, 3]).unwrap();
    type Case = (Op, fn(i64, i64) -> i64);
    let cases: Vec<Case> = vec![
        (Op::Add, |x, y| x + y),
        (Op::Sub, |x, y| x - y),
        (Op::Mul, |x, y| x * y),
        // ONNX integer Div truncates toward zero, like Rust's `/`.
        (Op::Div, |x, y| x / y),
    ];
    for (op, f) in cases {
        let got = eval(op.clone(), &[&a, &b]).unwrap();
        let want: Vec<i64> = i64s(&a).iter().zip(i64s(&b)).map(|(&x, &y)| f(x, y)).collect();
        assert_eq!(i64s(&got).iter().copied().collect::<Vec<_>>(), want, "{op:?}");
    }
    // Broadcasting a scalar over a shape vector, e.g. Shape * 2.
    let two = Tensor::from_i64(&[], vec![2]).unwrap();
    let got = eval(Op::Mul, &[&a, &two]).unwrap();
    assert_eq!(
        i64s(&got).iter().copied().collect::<Vec<_>>(),
        i64s(&a).iter().map(|x| x * 2).collect::<Vec<_>>()
    );
    let zero = Tensor::from_i64(&[1], vec![0]).unwrap();
    let e = eval(Op::Div, &[&a, &zero]).unwrap_err();
    assert!(e.contains("zero"), "{e}");
    // Overflow wraps instead of panicking.
    let big = Tensor::from_i64(&[1], vec![i64::MAX]).unwrap();
    let got = eval(Op::Add, &[&big, &big]).unwrap();
    assert_eq!(i64s(&got)[[0]], i64::MAX.wrapping_add(i64::MAX));
}

#[test]
fn pow_with_mixed_exponent_types() {
    let base = Tensor::from_f32(&[3], vec![1.5, 2.0, 3.0]).unwrap();
    let e_i = Tensor::from_i64(&[], vec![2]).unwrap();
    let got = eval(Op::Pow, &[&base, &e_i]).unwrap();
    let want: Vec<f64> = f32s(&base).iter().map(|&v| (v as f64).powi(2)).collect();
    assert_close(f32s(&got), &want, &[3], 1e-7, "pow f32^i64");
    let ib = Tensor::from_i64(&[3], vec![2, 3, -4]).unwrap();
    let got = eval(Op::Pow, &[&ib, &e_i]).unwrap();
    assert_eq!(i64s(&got).iter().copied().collect::<Vec<_>>(), vec![4, 9, 16]);
    let neg = Tensor::from_i64(&[], vec![-1]).unwrap();
    assert!(eval(Op::Pow, &[&ib, &neg]).is_err());
}

#[test]
fn unary_ops_match_f64_formulas() {
    let x = Tensor::from_f32(&[2, 50], rand_vec(100, 3, -6.0, 6.0)).unwrap();
    let xs: Vec<f64> = f32s(&x).iter().map(|&v| v as f64).collect();
    let relu = eval(Op::Relu, &[&x]).unwrap();
    assert_close(f32s(&relu), &xs.iter().map(|v| v.max(0.0)).collect::<Vec<_>>(), &[2, 50], 0.0, "relu");
    let tanh = eval(Op::Tanh, &[&x]).unwrap();
    assert_close(f32s(&tanh), &xs.iter().map(|v| v.tanh()).collect::<Vec<_>>(), &[2, 50], 1e-7, "tanh");
    let ax = Tensor::F32(f32s(&x).mapv(f32::abs));
    let sqrt = eval(Op::Sqrt, &[&ax]).unwrap();
    let want: Vec<f64> = xs.iter().map(|v| v.abs().sqrt()).collect();
    assert_close(f32s(&sqrt), &want, &[2, 50], 1e-7, "sqrt");
    let ms = eval(Op::MulScalar { scalar: 0.125 }, &[&x]).unwrap();
    assert_close(f32s(&ms), &xs.iter().map(|v| v * 0.125).collect::<Vec<_>>(), &[2, 50], 0.0, "mul scalar");
    let ri = Tensor::from_i64(&[3], vec![-3, 0, 5]).unwrap();
    assert_eq!(i64s(&eval(Op::Relu, &[&ri]).unwrap()).iter().copied().collect::<Vec<_>>(), vec![0, 0, 5]);
    let mi = eval(Op::MulScalar { scalar: 3.0 }, &[&ri]).unwrap();
    assert_eq!(i64s(&mi).iter().copied().collect::<Vec<_>>(), vec![-9, 0, 15]);
    assert!(eval(Op::MulScalar { scalar: 0.5 }, &[&ri]).is_err());
    let e = eval(Op::Sqrt, &[&ri]).unwrap_err();
    assert!(e.contains("sqrt") && e.contains("float32"), "{e}");
}

/// erf by composite Simpson integration of 2/√π e^(−t²) over [0, x] (independent of the
/// series/continued fraction in the interpreter).
fn erf_simpson(x: f64) -> f64 {
    let n = 4000;
    let h = x / n as f64;
    let f = |t: f64| (-t * t).exp();
    let mut s = f(0.0) + f(x);
    for i in 1..n {
        s += if i % 2 == 1 { 4.0 } else { 2.0 } * f(i as f64 * h);
    }
    s * h / 3.0 * 2.0 / std::f64::consts::PI.sqrt()
}

#[test]
fn erf_is_accurate_to_1e_10_everywhere() {
    let mut worst: f64 = 0.0;
    for k in -800..=800 {
        let x = k as f64 * 0.01;
        let e = mase_ir::interp::erf(x);
        worst = worst.max((e - erf_simpson(x)).abs());
        assert!((e + mase_ir::interp::erf(-x)).abs() < 1e-16, "odd symmetry at {x}");
    }
    assert!(worst < 1e-10, "worst |erf error| {worst}");
    assert_eq!(mase_ir::interp::erf(40.0), 1.0);
    assert_eq!(mase_ir::interp::erf(-40.0), -1.0);
    assert!(mase_ir::interp::erf(f64::NAN).is_nan());
}

#[test]
fn erf_and_gelu_nodes_match_the_formulas() {
    let x = Tensor::from_f32(&[64], rand_vec(64, 5, -5.0, 5.0)).unwrap();
    let xs: Vec<f64> = f32s(&x).iter().map(|&v| v as f64).collect();
    let erf = eval(Op::Erf, &[&x]).unwrap();
    assert_close(f32s(&erf), &xs.iter().map(|&v| erf_simpson(v)).collect::<Vec<_>>(), &[64], 1e-7, "erf");
    let g = eval(Op::Gelu { approximate: GeluApprox::None }, &[&x]).unwrap();
    let want: Vec<f64> = xs.iter().map(|&v| 0.5 * v * (1.0 + erf_simpson(v / 2f64.sqrt()))).collect();
    assert_close(f32s(&g), &want, &[64], 1e-7, "gelu erf");
    let g = eval(Op::Gelu { approximate: GeluApprox::Tanh }, &[&x]).unwrap();
    let c = (2.0 / std::f64::consts::PI).sqrt();
    let want: Vec<f64> =
        xs.iter().map(|&v| 0.5 * v * (1.0 + (c * (v + 0.044715 * v.powi(3))).tanh())).collect();
    assert_close(f32s(&g), &want, &[64], 1e-7, "gelu tanh");
}

// ---------------------------------------------------------------- linear algebra

/// Naive numpy matmul on shapes already promoted to rank >= 2 with equal rank.
fn matmul_ref(a: &ArrayD<f32>, b: &ArrayD<f32>) -> (Vec<usize>, Vec<f64>) {
    let (sa, sb) = (a.shape().to_vec(), b.shape().to_vec());
    let a2: Vec<usize> = if sa.len() == 1 { vec![1, sa[0]] } else { sa.clone() };
    let b2: Vec<usize> = if sb.len() == 1 { vec![sb[0], 1] } else { sb.clone() };
    let a = a.view().into_shape_with_order(IxDyn(&a2)).unwrap();
    let b = b.view().into_shape_with_order(IxDyn(&b2)).unwrap();
    let batch = broadcast_shape_ref(&a2[..a2.len() - 2], &b2[..b2.len() - 2]).unwrap();
    let (m, k, n) = (a2[a2.len() - 2], a2[a2.len() - 1], b2[b2.len() - 1]);
    let nb: usize = batch.iter().product();
    let mut out = Vec::new();
    for t in 0..nb {
        let bi = unravel(t, &batch);
        for i in 0..m {
            for j in 0..n {
                let mut s = 0.0f64;
                for p in 0..k {
                    let mut ia: Vec<usize> = bi[bi.len() + 2 - a2.len()..].to_vec();
                    for (d, v) in ia.iter_mut().enumerate() {
                        if a2[d] == 1 {
                            *v = 0;
                        }
                    }
                    ia.extend([i, p]);
                    let mut ib: Vec<usize> = bi[bi.len() + 2 - b2.len()..].to_vec();
                    for (d, v) in ib.iter_mut().enumerate() {
                        if b2[d] == 1 {
                            *v = 0;
                        }
                    }
                    ib.extend([p, j]);
                    s += a[IxDyn(&ia)] as f64 * b[IxDyn(&ib)] as f64;
                }
                out.push(s);
            }
        }
    }
    let mut shape = batch;
    if sa.len() > 1 {
        shape.push(m);
    }
    if sb.len() > 1 {
        shape.push(n);
    }
    (shape, out)
}

#[test]
fn matmul_matches_naive_including_batched_broadcast_and_1d() {
    let cases: &[(&[usize], &[usize])] = &[
        (&[3, 4], &[4, 5]),
        (&[2, 3, 4, 5], &[2, 3, 5, 6]),
        (&[3, 1, 4, 5], &[2, 5, 6]),
        (&[4, 5], &[2, 5, 3]),
        (&[4], &[4, 3]),
        (&[2, 3, 4], &[4]),
        (&[6], &[6]),
        (&[1, 2, 0], &[0, 3]),
    ];
    for (k, (sa, sb)) in cases.iter().enumerate() {
        let a = rand_f32(sa, 100 + k as u64);
        let b = rand_f32(sb, 200 + k as u64);
        let got = eval(Op::Matmul, &[&a, &b]).unwrap();
        let (shape, want) = matmul_ref(f32s(&a), f32s(&b));
        assert_close(f32s(&got), &want, &shape, 1e-5, &format!("matmul {sa:?} x {sb:?}"));
    }
}

#[test]
fn matmul_errors_name_the_shapes() {
    let a = rand_f32(&[2, 3], 1);
    let b = rand_f32(&[4, 5], 2);
    let e = eval(Op::Matmul, &[&a, &b]).unwrap_err();
    assert!(e.contains("[2, 3]") && e.contains("[4, 5]"), "{e}");
    let s = rand_f32(&[], 3);
    assert!(eval(Op::Matmul, &[&s, &b]).is_err());
    let c = rand_f32(&[2, 2, 3], 4);
    let d = rand_f32(&[3, 3, 1], 5);
    let e = eval(Op::Matmul, &[&c, &d]).unwrap_err();
    assert!(e.contains("batch"), "{e}");
    let i = Tensor::from_i64(&[3, 1], vec![1, 2, 3]).unwrap();
    assert!(eval(Op::Matmul, &[&i, &i]).is_err());
}

fn linear_weights(out_f: usize, in_f: usize, bias: bool) -> BTreeMap<String, Tensor> {
    let mut w = BTreeMap::new();
    w.insert("w".to_string(), rand_f32(&[out_f, in_f], 31));
    if bias {
        w.insert("b".to_string(), rand_f32(&[out_f], 32));
    }
    w
}

#[test]
fn linear_matches_naive_with_and_without_bias() {
    for (shape, bias) in
        [(vec![2usize, 3, 8], true), (vec![5, 8], false), (vec![8], true), (vec![0, 8], true)]
    {
        let weights = linear_weights(5, 8, bias);
        let op = Op::Linear { weight: "w".into(), bias: bias.then(|| "b".to_string()) };
        let x = rand_f32(&shape, 33);
        let got = eval_op(&op, &[&x], &weights).unwrap();
        let w = f32s(&weights["w"]);
        let rows: usize = shape[..shape.len() - 1].iter().product();
        let xv: Vec<f32> = f32s(&x).iter().copied().collect();
        let mut want = Vec::new();
        for r in 0..rows {
            for o in 0..5 {
                let mut s: f64 = if bias { f32s(&weights["b"])[[o]] as f64 } else { 0.0 };
                for i in 0..8 {
                    s += xv[r * 8 + i] as f64 * w[[o, i]] as f64;
                }
                want.push(s);
            }
        }
        let mut out_shape = shape.clone();
        *out_shape.last_mut().unwrap() = 5;
        assert_close(f32s(&got), &want, &out_shape, 1e-5, &format!("linear {shape:?}"));
    }
}

#[test]
fn linear_errors() {
    let weights = linear_weights(5, 8, true);
    let op = Op::Linear { weight: "w".into(), bias: Some("b".into()) };
    let e = eval_op(&op, &[&rand_f32(&[2, 7], 1)], &weights).unwrap_err();
    assert!(e.contains("[2, 7]") && e.contains("[5, 8]"), "{e}");
    let missing = Op::Linear { weight: "nope".into(), bias: None };
    let e = eval_op(&missing, &[&rand_f32(&[2, 8], 1)], &weights).unwrap_err();
    assert!(e.contains("'nope'") && e.contains("missing"), "{e}");
    let mut bad_bias = weights.clone();
    bad_bias.insert("b".into(), rand_f32(&[4], 2));
    assert!(eval_op(&op, &[&rand_f32(&[2, 8], 1)], &bad_bias).is_err());
    assert!(eval_op(&op, &[&rand_f32(&[], 1)], &weights).is_err());
}

/// Run with `cargo test --release -p mase-ir --test interp -- --ignored`: a 16x384 by 384x1536
/// linear layer (a BERT FFN up-projection) takes well under 10 ms.
#[test]
#[ignore = "timing; meaningful in release builds only"]
fn linear_16x384x1536_is_fast() {
    let mut weights = BTreeMap::new();
    weights.insert("w".to_string(), rand_f32(&[1536, 384], 1));
    weights.insert("b".to_string(), rand_f32(&[1536], 2));
    let op = Op::Linear { weight: "w".into(), bias: Some("b".into()) };
    let x = rand_f32(&[16, 384], 3);
    eval_op(&op, &[&x], &weights).unwrap();
    let reps = 20;
    let t = std::time::Instant::now();
    for _ in 0..reps {
        let y = eval_op(&op, &[&x], &weights).unwrap();
        assert_eq!(y.shape(), &[16, 1536]);
    }
    let ms = t.elapsed().as_secs_f64() * 1e3 / reps as f64;
    println!("linear 16x384 -> 1536: {ms:.3} ms per call");
    assert!(ms < 10.0, "{ms} ms");
}

// ---------------------------------------------------------------- normalization and reduction

/// Calls `f(outer_index, lane)` for every lane of `shape` along `axis`, where a lane is the
/// list of linear positions of its elements.
fn lanes(shape: &[usize], axis: usize) -> Vec<Vec<usize>> {
    let n: usize = shape.iter().product();
    let mut groups: BTreeMap<Vec<usize>, Vec<usize>> = BTreeMap::new();
    for i in 0..n {
        let mut idx = unravel(i, shape);
        idx[axis] = 0;
        groups.entry(idx).or_default().push(i);
    }
    groups.into_values().collect()
}

#[test]
fn softmax_matches_naive_and_is_stable() {
    for (shape, axis) in [(vec![2usize, 3, 5], -1i64), (vec![2, 3, 5], 0), (vec![4, 6], 1), (vec![7], 0)] {
        let x = rand_f32(&shape, 41);
        let got = eval(Op::Softmax { axis }, &[&x]).unwrap();
        let ax = if axis < 0 { axis + shape.len() as i64 } else { axis } as usize;
        let xv: Vec<f64> = f32s(&x).iter().map(|&v| v as f64).collect();
        let mut want = vec![0.0; xv.len()];
        for lane in lanes(&shape, ax) {
            let s: f64 = lane.iter().map(|&i| xv[i].exp()).sum();
            for &i in &lane {
                want[i] = xv[i].exp() / s;
            }
        }
        assert_close(f32s(&got), &want, &shape, 1e-6, &format!("softmax {shape:?} axis {axis}"));
    }
    let big = Tensor::from_f32(&[3], vec![1000.0, 1001.0, 999.0]).unwrap();
    let got = eval(Op::Softmax { axis: 0 }, &[&big]).unwrap();
    let e: Vec<f64> = [0.0f64, 1.0, -1.0].iter().map(|v| v.exp()).collect();
    let s: f64 = e.iter().sum();
    assert_close(f32s(&got), &e.iter().map(|v| v / s).collect::<Vec<_>>(), &[3], 1e-6, "softmax large");
    let e = eval(Op::Softmax { axis: 3 }, &[&big]).unwrap_err();
    assert!(e.contains("axis 3") && e.contains("rank 1"), "{e}");
}

fn layer_norm_ref(
    x: &[f64],
    shape: &[usize],
    axis: usize,
    eps: f64,
    g: Option<&[f64]>,
    b: Option<&[f64]>,
) -> Vec<f64> {
    let inner: usize = shape[axis..].iter().product();
    let mut out = Vec::new();
    for row in x.chunks(inner) {
        let mean = row.iter().sum::<f64>() / inner as f64;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / inner as f64;
        for (j, v) in row.iter().enumerate() {
            let y = (v - mean) / (var + eps).sqrt();
            out.push(y * g.map_or(1.0, |g| g[j]) + b.map_or(0.0, |b| b[j]));
        }
    }
    out
}

#[test]
fn layer_norm_matches_naive_over_one_and_two_axes() {
    let x = rand_f32(&[2, 3, 8], 51);
    let xv: Vec<f64> = f32s(&x).iter().map(|&v| v as f64).collect();
    for (axis, norm) in [(-1i64, vec![8usize]), (1, vec![3, 8])] {
        let n: usize = norm.iter().product();
        let mut weights = BTreeMap::new();
        weights.insert("g".to_string(), rand_f32(&norm, 52));
        weights.insert("b".to_string(), rand_f32(&norm, 53));
        let gv: Vec<f64> = f32s(&weights["g"]).iter().map(|&v| v as f64).collect();
        let bv: Vec<f64> = f32s(&weights["b"]).iter().map(|&v| v as f64).collect();
        let ax = if axis < 0 { 2 } else { axis as usize };
        let op = Op::LayerNorm { axis, epsilon: 1e-5, weight: Some("g".into()), bias: Some("b".into()) };
        let got = eval_op(&op, &[&x], &weights).unwrap();
        let want = layer_norm_ref(&xv, &[2, 3, 8], ax, 1e-5f32 as f64, Some(&gv), Some(&bv));
        assert_close(f32s(&got), &want, &[2, 3, 8], 1e-5, &format!("layer_norm axis {axis}"));
        assert_eq!(gv.len(), n);
        let plain = Op::LayerNorm { axis, epsilon: 1e-5, weight: None, bias: None };
        let got = eval_op(&plain, &[&x], &weights).unwrap();
        let want = layer_norm_ref(&xv, &[2, 3, 8], ax, 1e-5f32 as f64, None, None);
        assert_close(f32s(&got), &want, &[2, 3, 8], 1e-5, &format!("layer_norm plain axis {axis}"));
    }
    let mut bad = BTreeMap::new();
    bad.insert("g".to_string(), rand_f32(&[5], 1));
    let op = Op::LayerNorm { axis: -1, epsilon: 1e-5, weight: Some("g".into()), bias: None };
    let e = eval_op(&op, &[&x], &bad).unwrap_err();
    assert!(e.contains("[5]") && e.contains("[8]"), "{e}");
}

#[test]
fn reduce_mean_matches_naive() {
    let shape = [2usize, 3, 4];
    let x = rand_f32(&shape, 61);
    let xv: Vec<f64> = f32s(&x).iter().map(|&v| v as f64).collect();
    for (axes, keep) in [
        (vec![1i64], true),
        (vec![1], false),
        (vec![-1, 0], true),
        (vec![-1, 0], false),
        (vec![], false),
        (vec![], true),
    ] {
        let got = eval(Op::ReduceMean { axes: axes.clone(), keepdims: keep }, &[&x]).unwrap();
        let red: Vec<usize> = if axes.is_empty() {
            vec![0, 1, 2]
        } else {
            axes.iter().map(|&a| if a < 0 { (a + 3) as usize } else { a as usize }).collect()
        };
        let mut sums: BTreeMap<Vec<usize>, (f64, usize)> = BTreeMap::new();
        for (i, v) in xv.iter().enumerate() {
            let idx: Vec<usize> = unravel(i, &shape)
                .into_iter()
                .enumerate()
                .map(|(d, c)| if red.contains(&d) { 0 } else { c })
                .collect();
            let e = sums.entry(idx).or_insert((0.0, 0));
            e.0 += v;
            e.1 += 1;
        }
        let want: Vec<f64> = sums.values().map(|(s, c)| s / *c as f64).collect();
        let out_shape: Vec<usize> = shape
            .iter()
            .enumerate()
            .filter_map(|(d, &s)| if red.contains(&d) { keep.then_some(1) } else { Some(s) })
            .collect();
        assert_close(f32s(&got), &want, &out_shape, 1e-6, &format!("mean {axes:?} keepdims {keep}"));
    }
    let i = Tensor::from_i64(&[2, 2], vec![1, 4, -3, 8]).unwrap();
    let got = eval(Op::ReduceMean { axes: vec![1], keepdims: false }, &[&i]).unwrap();
    assert_eq!(i64s(&got).iter().copied().collect::<Vec<_>>(), vec![(1 + 4) / 2, (-3 + 8) / 2]);
    assert!(eval(Op::ReduceMean { axes: vec![3], keepdims: true }, &[&x]).is_err());
}

// ---------------------------------------------------------------- shape ops

fn seq_f32(shape: &[usize]) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_f32(shape, (0..n).map(|v| v as f32).collect()).unwrap()
}

fn flat(t: &Tensor) -> Vec<f64> {
    t.to_f32().iter().map(|&v| v as f64).collect()
}

#[test]
fn reshape_onnx_zero_and_minus_one() {
    let x = seq_f32(&[2, 3, 4]);
    let got = eval(Op::Reshape { shape: vec![0, -1] }, &[&x]).unwrap();
    assert_eq!(got.shape(), &[2, 12]);
    assert_eq!(flat(&got), flat(&x));
    let got = eval(Op::Reshape { shape: vec![0, 0, 2, 2] }, &[&x]).unwrap();
    assert_eq!(got.shape(), &[2, 3, 2, 2]);
    let got = eval(Op::Reshape { shape: vec![-1] }, &[&x]).unwrap();
    assert_eq!(got.shape(), &[24]);
    let i = Tensor::from_i64(&[2, 2], vec![1, 2, 3, 4]).unwrap();
    assert_eq!(eval(Op::Reshape { shape: vec![4] }, &[&i]).unwrap().shape(), &[4]);
    for bad in
        [vec![-1, -1], vec![5, -1], vec![7], vec![0, 0, 0, 0, 0], vec![-2, 12], vec![i64::MAX, i64::MAX]]
    {
        let e = eval(Op::Reshape { shape: bad.clone() }, &[&x]).unwrap_err();
        assert!(e.contains("reshape"), "{bad:?}: {e}");
    }
}

#[test]
fn transpose_matches_index_permutation() {
    let shape = [2usize, 3, 4];
    let x = seq_f32(&shape);
    for perm in [vec![0usize, 2, 1], vec![2, 0, 1], vec![]] {
        let got = eval(Op::Transpose { perm: perm.clone() }, &[&x]).unwrap();
        let p = if perm.is_empty() { vec![2, 1, 0] } else { perm.clone() };
        let out_shape: Vec<usize> = p.iter().map(|&d| shape[d]).collect();
        let n = 24;
        let want: Vec<f64> = (0..n)
            .map(|i| {
                let oi = unravel(i, &out_shape);
                let mut ii = [0usize; 3];
                for (k, &d) in p.iter().enumerate() {
                    ii[d] = oi[k];
                }
                f32s(&x)[IxDyn(&ii)] as f64
            })
            .collect();
        assert_close(f32s(&got), &want, &out_shape, 0.0, &format!("transpose {perm:?}"));
    }
    for bad in [vec![0usize, 1], vec![0, 1, 1], vec![0, 1, 3]] {
        assert!(eval(Op::Transpose { perm: bad }, &[&x]).is_err());
    }
}

#[test]
fn flatten_unsqueeze_squeeze() {
    let x = seq_f32(&[2, 3, 4]);
    for (axis, want) in [(0i64, [1usize, 24]), (1, [2, 12]), (-1, [6, 4]), (3, [24, 1])] {
        let got = eval(Op::Flatten { axis }, &[&x]).unwrap();
        assert_eq!(got.shape(), &want, "flatten {axis}");
        assert_eq!(flat(&got), flat(&x));
    }
    assert!(eval(Op::Flatten { axis: 4 }, &[&x]).is_err());
    let got = eval(Op::Unsqueeze { axes: vec![0, -1] }, &[&x]).unwrap();
    assert_eq!(got.shape(), &[1, 2, 3, 4, 1]);
    let got = eval(Op::Unsqueeze { axes: vec![2] }, &[&x]).unwrap();
    assert_eq!(got.shape(), &[2, 3, 1, 4]);
    assert_eq!(flat(&got), flat(&x));
    assert!(eval(Op::Unsqueeze { axes: vec![1, 1] }, &[&x]).is_err());
    assert!(eval(Op::Unsqueeze { axes: vec![9] }, &[&x]).is_err());
    let y = seq_f32(&[1, 3, 1, 2]);
    assert_eq!(eval(Op::Squeeze { axes: vec![] }, &[&y]).unwrap().shape(), &[3, 2]);
    assert_eq!(eval(Op::Squeeze { axes: vec![-2] }, &[&y]).unwrap().shape(), &[1, 3, 2]);
    let e = eval(Op::Squeeze { axes: vec![1] }, &[&y]).unwrap_err();
    assert!(e.contains("size 3"), "{e}");
    let s = Tensor::from_i64(&[1], vec![5]).unwrap();
    let got = eval(Op::Squeeze { axes: vec![0] }, &[&s]).unwrap();
    assert_eq!(got.shape(), &[] as &[usize]);
    assert_eq!(i64s(&got)[IxDyn(&[])], 5);
}

#[test]
fn concat_matches_naive() {
    let a = rand_f32(&[2, 3, 4], 71);
    let b = rand_f32(&[2, 1, 4], 72);
    let c = rand_f32(&[2, 2, 4], 73);
    let got = eval(Op::Concat { axis: -2 }, &[&a, &b, &c]).unwrap();
    let mut want = Vec::new();
    for i in 0..2 {
        for t in [&a, &b, &c] {
            for j in 0..t.shape()[1] {
                for k in 0..4 {
                    want.push(f32s(t)[[i, j, k]] as f64);
                }
            }
        }
    }
    assert_close(f32s(&got), &want, &[2, 6, 4], 0.0, "concat");
    let s1 = Tensor::from_i64(&[2], vec![1, 8]).unwrap();
    let s2 = Tensor::from_i64(&[1], vec![-1]).unwrap();
    let got = eval(Op::Concat { axis: 0 }, &[&s1, &s2]).unwrap();
    assert_eq!(i64s(&got).iter().copied().collect::<Vec<_>>(), vec![1, 8, -1]);
    let e = eval(Op::Concat { axis: 0 }, &[&a, &b]).unwrap_err();
    assert!(e.contains("[2, 1, 4]") && e.contains("[2, 3, 4]"), "{e}");
    assert!(eval(Op::Concat { axis: 0 }, &[&a, &s1]).is_err());
    assert!(eval(Op::Concat { axis: 0 }, &[]).is_err());
}

/// ONNX Slice on one axis, written from the spec: adjust negatives, clamp, then enumerate the
/// indices that satisfy the bounds and the stride.
fn slice_ref(dim: i64, start: i64, end: i64, step: i64) -> Vec<usize> {
    let adj = |v: i64| if v < 0 { v.saturating_add(dim) } else { v };
    let (s, e) = (adj(start), adj(end));
    if step > 0 {
        let (s, e) = (s.clamp(0, dim), e.clamp(0, dim));
        (0..dim).filter(|&i| i >= s && i < e && (i - s) % step == 0).map(|i| i as usize).collect()
    } else {
        let (s, e) = (s.clamp(0, (dim - 1).max(0)), e.clamp(-1, dim - 1));
        (0..dim).rev().filter(|&i| i <= s && i > e && (s - i) % -step == 0).map(|i| i as usize).collect()
    }
}

#[test]
fn slice_follows_onnx_clamping_and_negative_steps() {
    let shape = [4usize, 7];
    let x = seq_f32(&shape);
    let specials = [i64::MIN, -100, -8, -7, -3, -1, 0, 1, 3, 6, 7, 8, 100, i64::MAX];
    for &start in &specials {
        for &end in &specials {
            for step in [-3i64, -2, -1, 1, 2, 5] {
                let op =
                    Op::Slice { starts: vec![start], ends: vec![end], axes: vec![-1], steps: vec![step] };
                let got = eval(op, &[&x]).unwrap();
                let cols = slice_ref(7, start, end, step);
                let want: Vec<f64> =
                    (0..4).flat_map(|r| cols.iter().map(move |&c| (r * 7 + c) as f64)).collect();
                assert_close(
                    f32s(&got),
                    &want,
                    &[4, cols.len()],
                    0.0,
                    &format!("slice {start}:{end}:{step}"),
                );
            }
        }
    }
    // Reversal and two axes at once, with default axes and steps.
    let rev =
        eval(Op::Slice { starts: vec![-1], ends: vec![i64::MIN], axes: vec![0], steps: vec![-1] }, &[&x])
            .unwrap();
    let want: Vec<f64> = (0..4).rev().flat_map(|r| (0..7).map(move |c| (r * 7 + c) as f64)).collect();
    assert_close(f32s(&rev), &want, &[4, 7], 0.0, "reverse rows");
    let two =
        eval(Op::Slice { starts: vec![1, 2], ends: vec![3, 5], axes: vec![], steps: vec![] }, &[&x]).unwrap();
    let want: Vec<f64> = (1..3).flat_map(|r| (2..5).map(move |c| (r * 7 + c) as f64)).collect();
    assert_close(f32s(&two), &want, &[2, 3], 0.0, "two axes");
    let s = Tensor::from_i64(&[4], vec![1, 8, 2, 64]).unwrap();
    let got = eval(Op::Slice { starts: vec![-2], ends: vec![i64::MAX], axes: vec![0], steps: vec![] }, &[&s])
        .unwrap();
    assert_eq!(i64s(&got).iter().copied().collect::<Vec<_>>(), vec![2, 64]);
    for bad in [
        Op::Slice { starts: vec![0], ends: vec![1], axes: vec![0], steps: vec![0] },
        Op::Slice { starts: vec![0], ends: vec![], axes: vec![], steps: vec![] },
        Op::Slice { starts: vec![0], ends: vec![1], axes: vec![2], steps: vec![] },
        Op::Slice { starts: vec![0, 0], ends: vec![1, 1], axes: vec![0, -2], steps: vec![] },
    ] {
        assert!(eval(bad.clone(), &[&x]).is_err(), "{bad:?}");
    }
}

#[test]
fn gather_with_negative_and_multi_dimensional_indices() {
    let shape = [3usize, 4];
    let x = rand_f32(&shape, 81);
    for (axis, idx_shape, idx) in
        [(0i64, vec![2usize], vec![2i64, -3]), (1, vec![2, 2], vec![0, -1, 3, 1]), (-1, vec![], vec![-2])]
    {
        let it = Tensor::from_i64(&idx_shape, idx.clone()).unwrap();
        let got = eval(Op::Gather { axis }, &[&x, &it]).unwrap();
        let ax = if axis < 0 { 1 } else { axis as usize };
        let mut out_shape = shape[..ax].to_vec();
        out_shape.extend(&idx_shape);
        out_shape.extend(&shape[ax + 1..]);
        let n: usize = out_shape.iter().product();
        let want: Vec<f64> = (0..n)
            .map(|i| {
                let oi = unravel(i, &out_shape);
                let ii_lin: usize = {
                    let k = &oi[ax..ax + idx_shape.len()];
                    let mut l = 0;
                    for (d, &c) in k.iter().enumerate() {
                        l = l * idx_shape[d] + c;
                    }
                    l
                };
                let j = idx[ii_lin];
                let j = if j < 0 { j + shape[ax] as i64 } else { j } as usize;
                let mut src: Vec<usize> = oi[..ax].to_vec();
                src.push(j);
                src.extend(&oi[ax + idx_shape.len()..]);
                f32s(&x)[IxDyn(&src)] as f64
            })
            .collect();
        assert_close(f32s(&got), &want, &out_shape, 0.0, &format!("gather axis {axis}"));
    }
    let four = Tensor::from_i64(&[1], vec![4]).unwrap();
    let e = eval(Op::Gather { axis: 1 }, &[&x, &four]).unwrap_err();
    assert!(e.contains("index 4") && e.contains("size 4"), "{e}");
    let e = eval(Op::Gather { axis: 0 }, &[&x, &rand_f32(&[1], 1)]).unwrap_err();
    assert!(e.contains("int64 or int32"), "{e}");
    // A shape vector gathered at a scalar index (the ONNX shape sub-graph idiom).
    let zero = Tensor::from_i64(&[], vec![0]).unwrap();
    let s = Tensor::from_i64(&[3], vec![1, 8, 128]).unwrap();
    let got = eval(Op::Gather { axis: 0 }, &[&s, &zero]).unwrap();
    assert_eq!(got, Tensor::from_i64(&[], vec![1]).unwrap());
    // An embedding lookup: int32 token ids into a float table.
    let ids = Tensor::I32(ArrayD::from_shape_vec(IxDyn(&[2]), vec![2, 0]).unwrap());
    let rows = eval(Op::Gather { axis: 0 }, &[&x, &ids]).unwrap();
    assert_eq!(rows.shape(), &[2, 4]);
    assert_eq!(f32s(&rows)[[0, 1]], f32s(&x)[[2, 1]]);
}

#[test]
fn cast_shape_constant_and_passthrough() {
    let x = Tensor::from_f32(&[4], vec![-1.7, -0.2, 0.9, 2.5]).unwrap();
    let got = eval(Op::Cast { to: DType::I64 }, &[&x]).unwrap();
    let want: Vec<i64> = f32s(&x).iter().map(|v| v.trunc() as i64).collect();
    assert_eq!(i64s(&got).iter().copied().collect::<Vec<_>>(), want);
    let back = eval(Op::Cast { to: DType::F32 }, &[&got]).unwrap();
    assert_eq!(flat(&back), want.iter().map(|&v| v as f64).collect::<Vec<_>>());
    assert_eq!(eval(Op::Cast { to: DType::F32 }, &[&x]).unwrap(), x);

    let y = Tensor::zeros_f32(&[2, 3, 5, 7]);
    for (start, end, want) in [
        (0i64, None, vec![2i64, 3, 5, 7]),
        (1, Some(3), vec![3, 5]),
        (-1, None, vec![7]),
        (-10, Some(-2), vec![2, 3]),
        (3, Some(1), vec![]),
        (0, Some(100), vec![2, 3, 5, 7]),
    ] {
        let got = eval(Op::Shape { start, end }, &[&y]).unwrap();
        assert_eq!(got, Tensor::from_i64(&[want.len()], want.clone()).unwrap(), "shape {start}..{end:?}");
    }

    let mut weights = BTreeMap::new();
    weights.insert("c".to_string(), rand_f32(&[2, 2], 9));
    let got = eval_op(&Op::Constant { tensor: "c".into() }, &[], &weights).unwrap();
    assert_eq!(got, weights["c"]);
    let e = eval_op(&Op::Constant { tensor: "d".into() }, &[], &weights).unwrap_err();
    assert!(e.contains("'d'"), "{e}");

    for op in [Op::Identity, Op::Dropout { ratio: 0.1 }] {
        assert_eq!(eval(op.clone(), &[&x]).unwrap(), x, "{op:?}");
        assert!(eval(op, &[&x, &x]).is_err());
    }
    assert!(eval(Op::Placeholder, &[]).is_err());
    assert_eq!(eval(Op::Output, &[&x, &y]).unwrap(), x);
}

/// Every op with random (often invalid) attributes on random small inputs: each call returns
/// Ok or Err, never panics.
#[test]
fn random_ops_and_attributes_never_panic() {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let mut weights = BTreeMap::new();
    weights.insert("w".to_string(), rand_f32(&[3, 2], 1));
    weights.insert("b".to_string(), rand_f32(&[3], 2));
    weights.insert("i".to_string(), Tensor::from_i64(&[2], vec![1, -5]).unwrap());
    let mut ok = 0;
    for round in 0..3000 {
        let ax = |r: &mut ChaCha8Rng| r.gen_range(-5i64..5);
        let axes =
            |r: &mut ChaCha8Rng| (0..r.gen_range(0..3)).map(|_| r.gen_range(-5i64..5)).collect::<Vec<_>>();
        let op = match rng.gen_range(0..42) {
            0 => Op::Linear { weight: "w".into(), bias: Some("b".into()) },
            1 => Op::Matmul,
            2 => Op::Relu,
            3 => Op::Gelu { approximate: GeluApprox::Tanh },
            4 => Op::Softmax { axis: ax(&mut rng) },
            5 => Op::LayerNorm { axis: ax(&mut rng), epsilon: 1e-5, weight: Some("b".into()), bias: None },
            6 => Op::Add,
            7 => Op::Sub,
            8 => Op::Mul,
            9 => Op::Div,
            10 => Op::Pow,
            11 => Op::MulScalar { scalar: 1.5 },
            12 => Op::Sqrt,
            13 => Op::Erf,
            14 => Op::Tanh,
            15 => Op::ReduceMean { axes: axes(&mut rng), keepdims: rng.gen() },
            16 => Op::Reshape { shape: axes(&mut rng) },
            17 => Op::Transpose { perm: (0..rng.gen_range(0..4)).map(|_| rng.gen_range(0..4)).collect() },
            18 => Op::Flatten { axis: ax(&mut rng) },
            19 => Op::Dropout { ratio: 0.5 },
            20 => Op::Identity,
            21 => Op::Unsqueeze { axes: axes(&mut rng) },
            22 => Op::Squeeze { axes: axes(&mut rng) },
            23 => Op::Concat { axis: ax(&mut rng) },
            24 => Op::Slice {
                starts: axes(&mut rng),
                ends: axes(&mut rng),
                axes: axes(&mut rng),
                steps: axes(&mut rng),
            },
            25 => Op::Gather { axis: ax(&mut rng) },
            26 => Op::Cast { to: DType::I64 },
            27 => Op::Shape { start: ax(&mut rng), end: Some(ax(&mut rng)) },
            28 => Op::Constant { tensor: "w".into() },
            29 => Op::Embedding { table: "w".into() },
            30 => Op::GatherNd { batch_dims: ax(&mut rng) },
            31 => Op::Compare { cmp: CmpOp::GreaterOrEqual },
            32 => Op::Logic { logic: LogicOp::And },
            33 => Op::Not,
            34 => Op::Where,
            35 => Op::Max,
            36 => Op::Min,
            37 => Op::ReduceSum { axes: axes(&mut rng), keepdims: rng.gen() },
            38 => Op::Expand { shape: axes(&mut rng) },
            39 => Op::Range,
            40 => Op::ConstantOfShape { value: -3.5, dtype: DType::I32 },
            _ => Op::Output,
        };
        let ninputs = rng.gen_range(0..4);
        let inputs: Vec<Tensor> = (0..ninputs)
            .map(|k| {
                let shape: Vec<usize> = (0..rng.gen_range(0..4)).map(|_| rng.gen_range(0..4)).collect();
                let t = rand_f32(&shape, round * 7 + k);
                match rng.gen_range(0..10) {
                    0 | 1 => Tensor::I64(t.to_i64()),
                    2 => mase_ir::interp::shape::cast(&t, DType::I32),
                    3 => mase_ir::interp::shape::cast(&t, DType::Bool),
                    _ => t,
                }
            })
            .collect();
        let refs: Vec<&Tensor> = inputs.iter().collect();
        let r = std::panic::catch_unwind(|| eval_op(&op, &refs, &weights));
        match r {
            Ok(res) => ok += res.is_ok() as usize,
            Err(_) => panic!("{op:?} on {:?} panicked", refs.iter().map(|t| t.shape()).collect::<Vec<_>>()),
        }
    }
    assert!(ok > 300, "only {ok} of the random calls succeeded; the generator is too narrow");
}

// ---------------------------------------------------------------- graphs

fn set_shape(g: &mut MaseGraph, id: mase_ir::NodeId, shape: &[usize]) {
    g.node_mut(id)
        .meta
        .common
        .results
        .insert("data_out_0".into(), TensorMeta { shape: shape.to_vec(), ..Default::default() });
}

/// x [2, 4] -> linear(3) -> relu -> (output 0); x -> softmax -> (output 1).
fn small_graph() -> MaseGraph {
    let mut g = MaseGraph::new("small");
    g.weights.insert("fc.weight".into(), rand_f32(&[3, 4], 11));
    g.weights.insert("fc.bias".into(), rand_f32(&[3], 12));
    let x = g.add_node("x", Op::Placeholder, vec![]).unwrap();
    set_shape(&mut g, x, &[2, 4]);
    let fc = g
        .add_node("fc", Op::Linear { weight: "fc.weight".into(), bias: Some("fc.bias".into()) }, vec![x])
        .unwrap();
    let r = g.add_node("relu", Op::Relu, vec![fc]).unwrap();
    let s = g.add_node("softmax", Op::Softmax { axis: -1 }, vec![x]).unwrap();
    g.add_node("output", Op::Output, vec![r, s]).unwrap();
    g.validate().unwrap();
    g
}

#[test]
fn run_graph_evaluates_every_node_in_order() {
    let g = small_graph();
    let x = rand_f32(&[2, 4], 13);
    let inputs: HashMap<String, Tensor> = [("x".to_string(), x.clone())].into();
    let values = run_graph(&g, &inputs).unwrap();
    assert_eq!(values.len(), g.len());
    let fc = eval_op(&g.node(g.find("fc").unwrap()).op, &[&x], &g.weights).unwrap();
    let relu = eval(Op::Relu, &[&fc]).unwrap();
    let sm = eval(Op::Softmax { axis: -1 }, &[&x]).unwrap();
    assert_eq!(values[g.find("x").unwrap().0], x);
    assert_eq!(values[g.find("fc").unwrap().0], fc);
    assert_eq!(values[g.find("relu").unwrap().0], relu);
    assert_eq!(values[g.find("output").unwrap().0], relu);
    let outs = run_outputs(&g, &inputs).unwrap();
    assert_eq!(outs, vec![relu, sm]);
}

#[test]
fn run_graph_input_errors_name_the_inputs_and_shapes() {
    let g = small_graph();
    let e = run_graph(&g, &HashMap::new()).unwrap_err().to_string();
    assert!(e.contains("'x'") && e.contains("inputs are: x"), "{e}");
    let wrong: HashMap<String, Tensor> = [("x".to_string(), rand_f32(&[3, 4], 1))].into();
    let e = run_graph(&g, &wrong).unwrap_err().to_string();
    assert!(e.contains("[3, 4]") && e.contains("[2, 4]"), "{e}");
    let extra: HashMap<String, Tensor> =
        [("x".to_string(), rand_f32(&[2, 4], 1)), ("y".to_string(), rand_f32(&[1], 1))].into();
    let e = run_graph(&g, &extra).unwrap_err().to_string();
    assert!(e.contains("y") && e.contains("inputs are: x"), "{e}");
}

#[test]
fn run_graph_locates_kernel_errors_at_the_node() {
    let mut g = MaseGraph::new("bad");
    let x = g.add_node("x", Op::Placeholder, vec![]).unwrap();
    let y = g.add_node("y", Op::Placeholder, vec![]).unwrap();
    let a = g.add_node("the_add", Op::Add, vec![x, y]).unwrap();
    g.add_node("output", Op::Output, vec![a]).unwrap();
    let inputs: HashMap<String, Tensor> =
        [("x".to_string(), rand_f32(&[2, 3], 1)), ("y".to_string(), rand_f32(&[5], 2))].into();
    let e = run_outputs(&g, &inputs).unwrap_err().to_string();
    assert!(e.contains("the_add") && e.contains("[2, 3]") && e.contains("[5]"), "{e}");
    let no_out = MaseGraph::new("empty");
    assert!(run_outputs(&no_out, &HashMap::new()).is_err());
}
