//! Normalizing and reducing kernels: softmax, layer normalization and mean. Sums, means and
//! variances are accumulated in f64 and rounded to f32 once per element.

use ndarray::{ArrayD, Axis, IxDyn};

use crate::tensor::Tensor;

/// Resolves an ONNX axis (negative counts from the end) against `rank`; `what` names the op for
/// the message.
pub fn norm_axis(what: &str, axis: i64, rank: usize) -> Result<usize, String> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if a < 0 || a >= r {
        return Err(format!(
            "{what}: axis {axis} is out of range for an input of rank {rank} (valid: {} to {})",
            -r,
            r - 1
        ));
    }
    Ok(a as usize)
}

/// Numerically stable softmax along `axis`: exp(x − max) / Σ exp(x − max).
pub fn softmax(x: &ArrayD<f32>, axis: i64) -> Result<ArrayD<f32>, String> {
    softmax_masked(x, axis, None)
}

/// Softmax along `axis` over the positions `keep` (broadcast to `x`'s shape) marks: a masked
/// position outputs exactly 0 and takes no part in the maximum or the sum; a lane with every
/// position masked is all 0. Without `keep`, every position counts.
pub fn softmax_masked(
    x: &ArrayD<f32>,
    axis: i64,
    keep: Option<&ArrayD<bool>>,
) -> Result<ArrayD<f32>, String> {
    let ax = norm_axis("softmax", axis, x.ndim())?;
    // Without a mask every position counts: a broadcast view of one `true`, nothing allocated.
    let every = ndarray::arr0(true).into_dyn();
    let keep = keep.unwrap_or(&every).broadcast(x.raw_dim()).ok_or_else(|| {
        format!(
            "softmax: the mask of shape {:?} does not broadcast to the input {:?}",
            keep.map_or(&[][..], |k| k.shape()),
            x.shape()
        )
    })?;
    let mut out = x.as_standard_layout().into_owned();
    let mut exps: Vec<f64> = Vec::with_capacity(x.shape()[ax]);
    for (mut lane, k) in out.lanes_mut(Axis(ax)).into_iter().zip(keep.lanes(Axis(ax))) {
        let max = lane.iter().zip(k.iter()).filter(|(_, &k)| k).fold(f32::NEG_INFINITY, |m, (&v, _)| m.max(v))
            as f64;
        exps.clear();
        exps.extend(lane.iter().zip(k.iter()).map(|(&v, &k)| if k { (v as f64 - max).exp() } else { 0.0 }));
        let sum: f64 = exps.iter().sum();
        for (o, e) in lane.iter_mut().zip(&exps) {
            *o = if *e == 0.0 { 0.0 } else { (e / sum) as f32 };
        }
    }
    Ok(out)
}

/// Layer normalization over the dimensions `axis..rank`: (x − mean) / √(var + ε) · γ + β, with
/// the population variance. γ and β, when given, must broadcast to the normalized shape.
pub fn layer_norm(
    x: &ArrayD<f32>,
    axis: i64,
    epsilon: f32,
    gamma: Option<&ArrayD<f32>>,
    beta: Option<&ArrayD<f32>>,
) -> Result<ArrayD<f32>, String> {
    let shape = x.shape();
    let ax = norm_axis("layer_norm", axis, shape.len())?;
    let norm_shape = &shape[ax..];
    let inner: usize = norm_shape.iter().product();
    let affine = |t: Option<&ArrayD<f32>>, what: &str| -> Result<Option<Vec<f64>>, String> {
        let Some(t) = t else { return Ok(None) };
        let b = t.broadcast(IxDyn(norm_shape)).ok_or_else(|| {
            format!(
                "layer_norm: the {what} has shape {:?}, which does not broadcast to the normalized \
                 shape {norm_shape:?} (input {shape:?}, axis {axis})",
                t.shape()
            )
        })?;
        Ok(Some(b.iter().map(|&v| v as f64).collect()))
    };
    let g = affine(gamma, "scale (weight)")?;
    let b = affine(beta, "shift (bias)")?;
    let mut out = x.as_standard_layout().into_owned();
    if inner == 0 {
        return Ok(out);
    }
    let data = out.as_slice_mut().ok_or("layer_norm: internal: the copy is not contiguous")?;
    for row in data.chunks_mut(inner) {
        let mean = row.iter().map(|&v| v as f64).sum::<f64>() / inner as f64;
        let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / inner as f64;
        let inv = 1.0 / (var + epsilon as f64).sqrt();
        for (j, v) in row.iter_mut().enumerate() {
            let mut y = (*v as f64 - mean) * inv;
            if let Some(g) = &g {
                y *= g[j];
            }
            if let Some(b) = &b {
                y += b[j];
            }
            *v = y as f32;
        }
    }
    Ok(out)
}

/// Resolves reduction axes (empty = every axis) to sorted, distinct dimensions.
fn reduce_axes(axes: &[i64], rank: usize) -> Result<Vec<usize>, String> {
    let mut out: Vec<usize> = if axes.is_empty() {
        (0..rank).collect()
    } else {
        axes.iter().map(|&a| norm_axis("mean", a, rank)).collect::<Result<_, _>>()?
    };
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The shape after reducing `axes` (sorted, distinct) with or without keeping them as size 1.
fn reduced_shape(shape: &[usize], axes: &[usize], keepdims: bool) -> Vec<usize> {
    shape
        .iter()
        .enumerate()
        .filter_map(|(i, &d)| match (axes.contains(&i), keepdims) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect()
}

/// `acc` summed over the axes `ax` (ascending, as `reduce_axes` gives them; removed last first,
/// so the earlier indices stay valid).
fn sum_axes<T: ndarray::LinalgScalar>(mut acc: ArrayD<T>, ax: &[usize]) -> ArrayD<T> {
    for &a in ax.iter().rev() {
        acc = acc.sum_axis(Axis(a));
    }
    acc
}

/// Mean over `axes` (ONNX ReduceMean; empty axes reduce everything), accumulated in f64.
pub fn reduce_mean_f32(x: &ArrayD<f32>, axes: &[i64], keepdims: bool) -> Result<ArrayD<f32>, String> {
    let ax = reduce_axes(axes, x.ndim())?;
    let count: usize = ax.iter().map(|&a| x.shape()[a]).product();
    let acc = sum_axes(x.mapv(|v| v as f64), &ax);
    let shape = reduced_shape(x.shape(), &ax, keepdims);
    let data: Vec<f32> = acc.iter().map(|&s| (s / count as f64) as f32).collect();
    ArrayD::from_shape_vec(IxDyn(&shape), data).map_err(|e| format!("mean: result: {e}"))
}

/// Mean over `axes` of an i64 tensor, truncated toward zero. Errors on an empty reduction.
pub fn reduce_mean_i64(x: &ArrayD<i64>, axes: &[i64], keepdims: bool) -> Result<ArrayD<i64>, String> {
    let ax = reduce_axes(axes, x.ndim())?;
    let count: usize = ax.iter().map(|&a| x.shape()[a]).product();
    if count == 0 {
        return Err(format!(
            "mean: reducing axes {axes:?} of the i64 shape {:?} averages no elements",
            x.shape()
        ));
    }
    let acc = sum_axes(x.mapv(|v| v as i128), &ax);
    let shape = reduced_shape(x.shape(), &ax, keepdims);
    let data: Vec<i64> = acc.iter().map(|&s| (s / count as i128) as i64).collect();
    ArrayD::from_shape_vec(IxDyn(&shape), data).map_err(|e| format!("mean: result: {e}"))
}

/// Sum over `axes` (ONNX ReduceSum; empty axes reduce everything): floats accumulated in f64
/// and rounded once, integers exactly (wrapping into the element type).
pub fn reduce_sum(x: &Tensor, axes: &[i64], keepdims: bool) -> Result<Tensor, String> {
    let ax = reduce_axes(axes, x.shape().len())?;
    let shape = reduced_shape(x.shape(), &ax, keepdims);
    let sum = |mut acc: ArrayD<f64>| {
        for &a in ax.iter().rev() {
            acc = acc.sum_axis(Axis(a));
        }
        acc
    };
    let isum = |mut acc: ArrayD<i128>| {
        for &a in ax.iter().rev() {
            acc = acc.sum_axis(Axis(a));
        }
        acc
    };
    let bad = |e: ndarray::ShapeError| format!("sum: result: {e}");
    Ok(match x {
        Tensor::F32(a) => Tensor::F32(
            ArrayD::from_shape_vec(IxDyn(&shape), sum(a.mapv(f64::from)).iter().map(|&v| v as f32).collect())
                .map_err(bad)?,
        ),
        Tensor::I64(a) => Tensor::I64(
            ArrayD::from_shape_vec(
                IxDyn(&shape),
                isum(a.mapv(i128::from)).iter().map(|&v| v as i64).collect(),
            )
            .map_err(bad)?,
        ),
        Tensor::I32(a) => Tensor::I32(
            ArrayD::from_shape_vec(
                IxDyn(&shape),
                isum(a.mapv(i128::from)).iter().map(|&v| v as i32).collect(),
            )
            .map_err(bad)?,
        ),
        Tensor::Bool(_) => return Err(format!("sum: input 0 is bool {:?}; it must be numeric", x.shape())),
    })
}
