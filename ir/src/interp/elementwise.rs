//! Element-wise kernels: binary arithmetic with numpy broadcasting (f32 and i64) and the unary
//! activations (ReLU, square root, erf, tanh, GELU, multiplication by a scalar).
//!
//! Transcendental functions are evaluated in f64 and rounded to f32 once, so the reference is
//! as close to the exact value as f32 allows.

use ndarray::{ArrayD, IxDyn, Zip};

use crate::op::GeluApprox;
use crate::tensor::Tensor;

/// A binary arithmetic operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    /// a + b.
    Add,
    /// a - b.
    Sub,
    /// a · b.
    Mul,
    /// a / b (integers truncate toward zero, as ONNX Div does).
    Div,
    /// a ^ b (the exponent may have another element type than the base, as in ONNX Pow).
    Pow,
}

impl BinaryOp {
    /// The mase op name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Pow => "pow",
        }
    }
}

/// The numpy broadcast of two shapes (dimensions aligned from the right; each pair equal or one
/// of them 1), or `None` when they do not broadcast.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let rank = a.len().max(b.len());
    let mut out = vec![0; rank];
    for (i, o) in out.iter_mut().enumerate() {
        let da = if i + a.len() >= rank { a[i + a.len() - rank] } else { 1 };
        let db = if i + b.len() >= rank { b[i + b.len() - rank] } else { 1 };
        *o = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some(out)
}

/// Applies `f` to every pair of elements of `a` and `b` broadcast to `shape` (which must be
/// their broadcast shape). The result is in standard (row-major) layout.
pub(crate) fn zip_with<A: Copy, B: Copy, C>(
    a: &ArrayD<A>,
    b: &ArrayD<B>,
    shape: &[usize],
    f: impl Fn(A, B) -> C,
) -> Result<ArrayD<C>, String> {
    let fail = || format!("cannot broadcast {:?} and {:?} to {:?}", a.shape(), b.shape(), shape);
    let av = a.broadcast(IxDyn(shape)).ok_or_else(fail)?;
    let bv = b.broadcast(IxDyn(shape)).ok_or_else(fail)?;
    let data: Vec<C> = Zip::from(&av).and(&bv).map_collect(|&x, &y| f(x, y)).into_iter().collect();
    ArrayD::from_shape_vec(IxDyn(shape), data).map_err(|e| e.to_string())
}

/// `a op b` with numpy broadcasting. Add, Sub, Mul and Div need equal element types (f32 or
/// i64; integer arithmetic wraps on overflow and division by zero is an error); Pow keeps the
/// base's type and accepts an exponent of either type.
pub fn binary(op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Tensor, String> {
    let name = op.name();
    let shape = broadcast_shapes(a.shape(), b.shape()).ok_or_else(|| {
        format!(
            "{name}: input 0 has shape {:?} and input 1 has shape {:?}, which do not broadcast \
             (numpy rule: aligned from the right, each pair of dimensions equal or one of them 1)",
            a.shape(),
            b.shape()
        )
    })?;
    let out = match (op, a, b) {
        (BinaryOp::Pow, Tensor::F32(x), Tensor::F32(y)) => Tensor::F32(zip_with(x, y, &shape, f32::powf)?),
        (BinaryOp::Pow, Tensor::F32(x), Tensor::I64(y)) => {
            Tensor::F32(zip_with(x, y, &shape, |p, q| (p as f64).powf(q as f64) as f32)?)
        }
        (BinaryOp::Pow, Tensor::I64(x), Tensor::F32(y)) => {
            Tensor::I64(zip_with(x, y, &shape, |p, q| (p as f64).powf(q as f64) as i64)?)
        }
        (BinaryOp::Pow, Tensor::I64(x), Tensor::I64(y)) => {
            if y.iter().any(|&q| q < 0) {
                return Err(format!(
                    "pow: input 1 (the exponent) has a negative element; an i64 base needs \
                     non-negative i64 exponents (base shape {:?}, exponent shape {:?})",
                    x.shape(),
                    y.shape()
                ));
            }
            Tensor::I64(zip_with(x, y, &shape, |p, q| p.wrapping_pow(q.min(u32::MAX as i64) as u32))?)
        }
        (_, Tensor::F32(x), Tensor::F32(y)) => {
            let f: fn(f32, f32) -> f32 = match op {
                BinaryOp::Add => |p, q| p + q,
                BinaryOp::Sub => |p, q| p - q,
                BinaryOp::Mul => |p, q| p * q,
                _ => |p, q| p / q,
            };
            Tensor::F32(zip_with(x, y, &shape, f)?)
        }
        (_, Tensor::I64(x), Tensor::I64(y)) => Tensor::I64(int_binary(op, x, y, &shape)?),
        (_, Tensor::I32(x), Tensor::I32(y)) => Tensor::I32(int_binary(op, x, y, &shape)?),
        _ => {
            return Err(format!(
                "{name}: input 0 is {} {:?} and input 1 is {} {:?}; both must have the same \
                 element type (float32, int64 or int32)",
                a.dtype().name(),
                a.shape(),
                b.dtype().name(),
                b.shape()
            ))
        }
    };
    Ok(out)
}

/// Integer arithmetic as ONNX defines it: wrapping, division truncating toward zero.
trait WrapInt: Copy + PartialEq + Default + std::fmt::Debug {
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
}

macro_rules! wrap_int {
    ($t:ty) => {
        impl WrapInt for $t {
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            fn div(self, o: Self) -> Self {
                self.wrapping_div(o)
            }
        }
    };
}
wrap_int!(i64);
wrap_int!(i32);

/// Add, Sub, Mul or Div of two integer arrays broadcast to `shape`; a zero divisor is an error.
fn int_binary<T: WrapInt>(
    op: BinaryOp,
    x: &ArrayD<T>,
    y: &ArrayD<T>,
    shape: &[usize],
) -> Result<ArrayD<T>, String> {
    if op == BinaryOp::Div && y.iter().any(|&q| q == T::default()) {
        return Err(format!("div: input 1 (the integer divisor, shape {:?}) has a zero element", y.shape()));
    }
    let f: fn(T, T) -> T = match op {
        BinaryOp::Add => T::add,
        BinaryOp::Sub => T::sub,
        BinaryOp::Mul => T::mul,
        _ => T::div,
    };
    zip_with(x, y, shape, f)
}

/// A float-only unary function.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UnaryOp {
    /// Square root (NaN for negative input, as in numpy).
    Sqrt,
    /// Error function.
    Erf,
    /// Hyperbolic tangent.
    Tanh,
    /// GELU in the given form.
    Gelu(GeluApprox),
}

/// Applies a float unary function element-wise. Errors on an i64 input.
pub fn unary(op: UnaryOp, x: &Tensor) -> Result<Tensor, String> {
    let (name, f): (&str, fn(f64) -> f64) = match op {
        UnaryOp::Sqrt => ("sqrt", f64::sqrt),
        UnaryOp::Erf => ("erf", erf),
        UnaryOp::Tanh => ("tanh", f64::tanh),
        UnaryOp::Gelu(GeluApprox::None) => ("gelu", gelu_erf),
        UnaryOp::Gelu(GeluApprox::Tanh) => ("gelu", gelu_tanh),
    };
    match x {
        Tensor::F32(a) => Ok(Tensor::F32(a.mapv(|v| f(v as f64) as f32))),
        _ => Err(format!("{name}: input 0 is {} {:?}; {name} needs float32", x.dtype().name(), x.shape())),
    }
}

/// max(x, 0), for numeric tensors.
pub fn relu(x: &Tensor) -> Result<Tensor, String> {
    match x {
        Tensor::F32(a) => Ok(Tensor::F32(a.mapv(|v| if v > 0.0 { v } else { 0.0 }))),
        Tensor::I64(a) => Ok(Tensor::I64(a.mapv(|v| v.max(0)))),
        Tensor::I32(a) => Ok(Tensor::I32(a.mapv(|v| v.max(0)))),
        Tensor::Bool(_) => Err(format!("relu: input 0 is bool {:?}; it must be numeric", x.shape())),
    }
}

/// x · scalar. An i64 input stays i64 when the scalar is an integer and is an error otherwise
/// (the product would not be an integer).
pub fn mul_scalar(x: &Tensor, scalar: f32) -> Result<Tensor, String> {
    match x {
        Tensor::F32(a) => Ok(Tensor::F32(a.mapv(|v| v * scalar))),
        Tensor::I64(a) if scalar.fract() == 0.0 && scalar.abs() < 9.0e18 => {
            let s = scalar as i64;
            Ok(Tensor::I64(a.mapv(|v| v.wrapping_mul(s))))
        }
        _ => Err(format!(
            "mul: input 0 is {} {:?}; multiplying it by the scalar {scalar} needs float32 (or int64 and an integer scalar)",
            x.dtype().name(),
            x.shape()
        )),
    }
}

/// GELU, erf form: x/2 · (1 + erf(x/√2)).
pub fn gelu_erf(x: f64) -> f64 {
    0.5 * x * (1.0 + erf(x * std::f64::consts::FRAC_1_SQRT_2))
}

/// GELU, tanh form: x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³))).
pub fn gelu_tanh(x: f64) -> f64 {
    let c = (2.0 / std::f64::consts::PI).sqrt();
    0.5 * x * (1.0 + (c * (x + 0.044715 * x * x * x)).tanh())
}

/// The error function erf(x) = 2/√π ∫₀ˣ e^(−t²) dt, to about 1e-15 absolute.
///
/// For |x| < 3 it sums the series erf(x) = 2/√π · e^(−x²) · Σₙ 2ⁿ x^(2n+1) / (1·3·…·(2n+1)),
/// whose terms are all positive (no cancellation). For larger |x| it evaluates the continued
/// fraction erfc(x) = e^(−x²)/√π · 1/(x + (1/2)/(x + (2/2)/(x + (3/2)/(x + …)))) from a fixed
/// depth; beyond 6, erfc is below 1e-16 and erf is ±1.
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let sign = if x < 0.0 { -1.0 } else { 1.0 };
    let a = x.abs();
    let two_over_sqrt_pi = 2.0 / std::f64::consts::PI.sqrt();
    if a < 3.0 {
        let x2 = a * a;
        let mut term = a;
        let mut sum = a;
        let mut n = 0.0;
        while term > sum * 1e-17 {
            n += 1.0;
            term *= 2.0 * x2 / (2.0 * n + 1.0);
            sum += term;
        }
        sign * two_over_sqrt_pi * (-x2).exp() * sum
    } else if a < 6.0 {
        let mut t = a;
        for n in (1..=60).rev() {
            t = a + (n as f64 / 2.0) / t;
        }
        let erfc = (-a * a).exp() / (std::f64::consts::PI.sqrt() * t);
        sign * (1.0 - erfc)
    } else {
        sign
    }
}
