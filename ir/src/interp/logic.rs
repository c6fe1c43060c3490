//! Comparison, boolean and selection kernels with numpy broadcasting: the mask arithmetic of
//! transformer exports (`Equal`, `GreaterOrEqual`, `And`, `Not`, `Where`) and the variadic
//! `Max` / `Min`.

use ndarray::{IxDyn, Zip};

use super::elementwise::{broadcast_shapes, zip_with};
use crate::op::{CmpOp, LogicOp};
use crate::tensor::Tensor;

/// The broadcast shape of several shapes, or an error naming the op and every shape.
pub fn broadcast_all(name: &str, shapes: &[&[usize]]) -> Result<Vec<usize>, String> {
    let mut out: Vec<usize> = Vec::new();
    for s in shapes {
        out = broadcast_shapes(&out, s).ok_or_else(|| {
            format!(
                "{name}: input shapes {shapes:?} do not broadcast (numpy rule: aligned from the right, \
                 each pair of dimensions equal or one of them 1)"
            )
        })?;
    }
    Ok(out)
}

/// The error for two operands `a` (input `i`) and `b` (input `i + 1`) of the wrong types;
/// `need` says what they must be.
fn pair_error(name: &str, i: usize, a: &Tensor, b: &Tensor, need: &str) -> String {
    format!(
        "{name}: input {i} is {} {:?} and input {} is {} {:?}; {need}",
        a.dtype().name(),
        a.shape(),
        i + 1,
        b.dtype().name(),
        b.shape()
    )
}

fn same_type_error(name: &str, a: &Tensor, b: &Tensor) -> String {
    pair_error(name, 0, a, b, "both must have the same element type")
}

/// `a cmp b` element-wise with broadcasting; inputs of one element type, boolean result.
pub fn compare(cmp: CmpOp, a: &Tensor, b: &Tensor) -> Result<Tensor, String> {
    let shape = broadcast_all("compare", &[a.shape(), b.shape()])?;
    fn apply<T: PartialOrd + Copy>(cmp: CmpOp) -> impl Fn(T, T) -> bool {
        move |x, y| match cmp {
            CmpOp::Equal => x == y,
            CmpOp::Less => x < y,
            CmpOp::LessOrEqual => x <= y,
            CmpOp::Greater => x > y,
            CmpOp::GreaterOrEqual => x >= y,
        }
    }
    let out = match (a, b) {
        (Tensor::F32(x), Tensor::F32(y)) => zip_with(x, y, &shape, apply(cmp))?,
        (Tensor::I64(x), Tensor::I64(y)) => zip_with(x, y, &shape, apply(cmp))?,
        (Tensor::I32(x), Tensor::I32(y)) => zip_with(x, y, &shape, apply(cmp))?,
        (Tensor::Bool(x), Tensor::Bool(y)) => zip_with(x, y, &shape, apply(cmp))?,
        _ => return Err(same_type_error("compare", a, b)),
    };
    Ok(Tensor::Bool(out))
}

/// `a op b` on boolean tensors with broadcasting.
pub fn logic(op: LogicOp, a: &Tensor, b: &Tensor) -> Result<Tensor, String> {
    let (Tensor::Bool(x), Tensor::Bool(y)) = (a, b) else {
        return Err(pair_error("logical", 0, a, b, "both must be bool"));
    };
    let shape = broadcast_all("logical", &[a.shape(), b.shape()])?;
    let f: fn(bool, bool) -> bool = match op {
        LogicOp::And => |p, q| p && q,
        LogicOp::Or => |p, q| p || q,
        LogicOp::Xor => |p, q| p ^ q,
    };
    Ok(Tensor::Bool(zip_with(x, y, &shape, f)?))
}

/// Boolean negation.
pub fn not(x: &Tensor) -> Result<Tensor, String> {
    match x {
        Tensor::Bool(a) => Ok(Tensor::Bool(a.mapv(|v| !v))),
        _ => Err(format!("not: input 0 is {} {:?}; it must be bool", x.dtype().name(), x.shape())),
    }
}

/// `x` where `cond` is true, else `y`, with three-way broadcasting; `x` and `y` of one type.
pub fn where_(cond: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor, String> {
    let Tensor::Bool(c) = cond else {
        return Err(format!(
            "where: input 0 (the condition) is {} {:?}; it must be bool",
            cond.dtype().name(),
            cond.shape()
        ));
    };
    let shape = broadcast_all("where", &[cond.shape(), x.shape(), y.shape()])?;
    let cv = c.broadcast(IxDyn(&shape)).ok_or("where: broadcast failed")?;
    macro_rules! pick {
        ($a:expr, $b:expr) => {{
            let av = $a.broadcast(IxDyn(&shape)).ok_or("where: broadcast failed")?;
            let bv = $b.broadcast(IxDyn(&shape)).ok_or("where: broadcast failed")?;
            Zip::from(&cv).and(&av).and(&bv).map_collect(|&k, &p, &q| if k { p } else { q }).into_dyn()
        }};
    }
    Ok(match (x, y) {
        (Tensor::F32(a), Tensor::F32(b)) => Tensor::F32(pick!(a, b)),
        (Tensor::I64(a), Tensor::I64(b)) => Tensor::I64(pick!(a, b)),
        (Tensor::I32(a), Tensor::I32(b)) => Tensor::I32(pick!(a, b)),
        (Tensor::Bool(a), Tensor::Bool(b)) => Tensor::Bool(pick!(a, b)),
        _ => return Err(pair_error("where", 1, x, y, "both must have the same element type")),
    })
}

/// Element-wise maximum (`max = true`) or minimum of one or more numeric inputs of one type,
/// with broadcasting. A NaN operand gives NaN, as numpy's `maximum` does.
pub fn extremum(xs: &[&Tensor], max: bool) -> Result<Tensor, String> {
    let name = if max { "max" } else { "min" };
    let Some(first) = xs.first() else {
        return Err(format!("{name}: needs at least one input"));
    };
    let shapes: Vec<&[usize]> = xs.iter().map(|t| t.shape()).collect();
    let shape = broadcast_all(name, &shapes)?;
    let mut acc = super::shape::expand(first, &shape.iter().map(|&d| d as i64).collect::<Vec<_>>())?;
    for t in &xs[1..] {
        acc = match (&acc, t) {
            (Tensor::F32(a), Tensor::F32(b)) => Tensor::F32(zip_with(a, b, &shape, |p: f32, q: f32| {
                if p.is_nan() || q.is_nan() {
                    f32::NAN
                } else if (p > q) == max {
                    p
                } else {
                    q
                }
            })?),
            (Tensor::I64(a), Tensor::I64(b)) => {
                Tensor::I64(zip_with(a, b, &shape, |p, q| if max { p.max(q) } else { p.min(q) })?)
            }
            (Tensor::I32(a), Tensor::I32(b)) => {
                Tensor::I32(zip_with(a, b, &shape, |p, q| if max { p.max(q) } else { p.min(q) })?)
            }
            _ => return Err(same_type_error(name, first, t)),
        };
    }
    if acc.dtype() == crate::tensor::DType::Bool {
        return Err(format!("{name}: inputs must be numeric, got bool"));
    }
    Ok(acc)
}
