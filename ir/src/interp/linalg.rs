//! Matrix kernels: numpy `matmul` (1-D operands, broadcast batch dimensions) and `linear`
//! (x · Wᵀ + b over the innermost dimension). Each 2-D product goes through ndarray's
//! blocked matrix multiply.

use ndarray::linalg::general_mat_mul;
use ndarray::{Array2, ArrayD, ArrayView2, ArrayViewD, Axis, Ix2, IxDyn};

use super::elementwise::broadcast_shapes;

/// Row-major `[rows, cols]` view of a standard-layout array whose shape has `rows · cols`
/// elements.
fn as_2d<'a>(a: ArrayViewD<'a, f32>, rows: usize, cols: usize) -> Result<ArrayView2<'a, f32>, String> {
    let shape = a.shape().to_vec();
    a.into_shape_with_order(Ix2(rows, cols))
        .map_err(|e| format!("cannot view shape {shape:?} as [{rows}, {cols}]: {e}"))
}

/// Product of dimensions, or an error when it overflows.
fn product(dims: &[usize]) -> Result<usize, String> {
    dims.iter()
        .try_fold(1usize, |p, &d| p.checked_mul(d))
        .ok_or_else(|| format!("the element count of shape {dims:?} overflows"))
}

/// numpy `matmul`: `[..., m, k] · [..., k, n] -> [..., m, n]` with broadcast batch dimensions;
/// a 1-D first operand is a row vector and a 1-D second operand a column vector, and the added
/// dimension is removed from the result (two 1-D operands give a 0-d dot product).
pub fn matmul(a: &ArrayD<f32>, b: &ArrayD<f32>) -> Result<ArrayD<f32>, String> {
    let (sa, sb) = (a.shape(), b.shape());
    if sa.is_empty() || sb.is_empty() {
        return Err(format!("matmul: needs inputs of rank >= 1, got shapes {sa:?} and {sb:?}"));
    }
    let a_shape: Vec<usize> = if sa.len() == 1 { vec![1, sa[0]] } else { sa.to_vec() };
    let b_shape: Vec<usize> = if sb.len() == 1 { vec![sb[0], 1] } else { sb.to_vec() };
    let (ra, rb) = (a_shape.len(), b_shape.len());
    let (m, k) = (a_shape[ra - 2], a_shape[ra - 1]);
    let (k2, n) = (b_shape[rb - 2], b_shape[rb - 1]);
    if k != k2 {
        return Err(format!(
            "matmul: inner dimensions differ: input 0 has shape {sa:?} (k = {k}) and input 1 has \
             shape {sb:?} (k = {k2})"
        ));
    }
    let (ba, bb) = (&a_shape[..ra - 2], &b_shape[..rb - 2]);
    let batch = broadcast_shapes(ba, bb).ok_or_else(|| {
        format!("matmul: batch dimensions of input 0 {sa:?} and input 1 {sb:?} do not broadcast")
    })?;
    let nbatch = product(&batch)?;
    product(&[nbatch, m, n])?;
    let a_std = a.as_standard_layout();
    let b_std = b.as_standard_layout();
    let a3 = a_std
        .view()
        .into_shape_with_order(IxDyn(&[product(ba)?, m, k]))
        .map_err(|e| format!("matmul: input 0 {sa:?}: {e}"))?;
    let b3 = b_std
        .view()
        .into_shape_with_order(IxDyn(&[product(bb)?, k, n]))
        .map_err(|e| format!("matmul: input 1 {sb:?}: {e}"))?;
    let mut out = ndarray::Array3::<f32>::zeros((nbatch, m, n));
    for t in 0..nbatch {
        let (ia, ib) = (batch_index(t, &batch, ba), batch_index(t, &batch, bb));
        let av = a3.index_axis(Axis(0), ia).into_dimensionality::<Ix2>().map_err(|e| e.to_string())?;
        let bv = b3.index_axis(Axis(0), ib).into_dimensionality::<Ix2>().map_err(|e| e.to_string())?;
        let mut ov = out.index_axis_mut(Axis(0), t);
        general_mat_mul(1.0, &av, &bv, 0.0, &mut ov);
    }
    let mut out_shape = batch;
    if sa.len() > 1 {
        out_shape.push(m);
    }
    if sb.len() > 1 {
        out_shape.push(n);
    }
    out.into_shape_with_order(IxDyn(&out_shape)).map_err(|e| format!("matmul: result: {e}"))
}

/// The linear index, within an operand whose batch dimensions are `own` (aligned from the
/// right with `batch`, size-1 dimensions broadcast), of the `t`-th index of the broadcast
/// batch shape `batch`.
fn batch_index(mut t: usize, batch: &[usize], own: &[usize]) -> usize {
    let offset = batch.len() - own.len();
    let mut idx = 0;
    let mut stride = 1;
    for i in (0..batch.len()).rev() {
        let coord = t % batch[i].max(1);
        t /= batch[i].max(1);
        if i >= offset {
            let d = own[i - offset];
            if d != 1 {
                idx += coord * stride;
            }
            stride *= d;
        }
    }
    idx
}

/// `x · Wᵀ + b` over the innermost dimension of `x`: `[..., in]` with `weight` `[out, in]` and
/// `bias` `[out]` gives `[..., out]`.
pub fn linear(
    x: &ArrayD<f32>,
    weight: &ArrayD<f32>,
    bias: Option<&ArrayD<f32>>,
) -> Result<ArrayD<f32>, String> {
    let xs = x.shape();
    let ws = weight.shape();
    if ws.len() != 2 {
        return Err(format!("linear: the weight must be 2-D [out, in], it has shape {ws:?}"));
    }
    let (out_f, in_f) = (ws[0], ws[1]);
    if xs.is_empty() || xs[xs.len() - 1] != in_f {
        return Err(format!(
            "linear: input 0 has shape {xs:?} but the weight {ws:?} needs the last dimension to be {in_f}"
        ));
    }
    if let Some(b) = bias {
        if b.len() != out_f || b.ndim() != 1 {
            return Err(format!("linear: the bias has shape {:?}, expected [{out_f}]", b.shape()));
        }
    }
    let rows = product(&xs[..xs.len() - 1])?;
    let x_std = x.as_standard_layout();
    let x2 = as_2d(x_std.view(), rows, in_f)?;
    let w_std = weight.as_standard_layout();
    let w2 = as_2d(w_std.view(), out_f, in_f)?;
    let mut y = Array2::<f32>::zeros((rows, out_f));
    general_mat_mul(1.0, &x2, &w2.t(), 0.0, &mut y);
    if let Some(b) = bias {
        let bv = b.view().into_shape_with_order(out_f).map_err(|e| e.to_string())?;
        y += &bv;
    }
    let mut out_shape = xs.to_vec();
    *out_shape.last_mut().expect("rank checked above") = out_f;
    y.into_shape_with_order(IxDyn(&out_shape)).map_err(|e| format!("linear: result: {e}"))
}
