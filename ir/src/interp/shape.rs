//! Data-movement kernels with ONNX semantics: reshape, transpose, flatten, unsqueeze, squeeze,
//! concat, slice, gather, gather_nd, expand, cast and shape, and the shape-building range and
//! constant_of_shape. They work on every element type alike (ONNX shape sub-graphs run on i64,
//! masks on bool).

use ndarray::{ArrayD, Axis, IxDyn};

use super::nn::norm_axis;
use crate::each_dtype;
use crate::tensor::{DType, Tensor};

/// Row-major reshape of an array to `shape`, which must have the same number of elements.
fn reshape_arr<T: Clone>(a: &ArrayD<T>, shape: &[usize]) -> Result<ArrayD<T>, String> {
    ArrayD::from_shape_vec(IxDyn(shape), a.iter().cloned().collect())
        .map_err(|e| format!("cannot reshape {:?} to {shape:?}: {e}", a.shape()))
}

/// Product of dimensions, or an error when it overflows.
fn product(what: &str, dims: &[usize]) -> Result<usize, String> {
    dims.iter()
        .try_fold(1usize, |p, &d| p.checked_mul(d))
        .ok_or_else(|| format!("{what}: the element count of shape {dims:?} overflows"))
}

/// The output shape of an ONNX Reshape of `input` to `target`: 0 copies the input dimension at
/// the same position, one -1 is inferred from the element count.
pub fn resolve_reshape(input: &[usize], target: &[i64]) -> Result<Vec<usize>, String> {
    let total = product("reshape", input)?;
    let mut out = Vec::with_capacity(target.len());
    let mut infer = None;
    for (i, &d) in target.iter().enumerate() {
        match d {
            -1 if infer.is_some() => {
                return Err(format!("reshape: target shape {target:?} has more than one -1"));
            }
            -1 => {
                infer = Some(i);
                out.push(1);
            }
            0 => {
                let Some(&d) = input.get(i) else {
                    return Err(format!(
                        "reshape: target shape {target:?} has 0 at position {i}, but the input {input:?} \
                         has no dimension there to copy"
                    ));
                };
                out.push(d);
            }
            d if d < -1 => {
                return Err(format!("reshape: target shape {target:?} has the invalid dimension {d}"));
            }
            d => out.push(usize::try_from(d).map_err(|e| format!("reshape: dimension {d}: {e}"))?),
        }
    }
    let known = product("reshape", &out)?;
    if let Some(i) = infer {
        if known == 0 || total % known != 0 {
            return Err(format!(
                "reshape: cannot infer the -1 in {target:?} for an input of shape {input:?} ({total} elements)"
            ));
        }
        out[i] = total / known;
    } else if known != total {
        return Err(format!(
            "reshape: input shape {input:?} has {total} elements but target shape {target:?} gives {out:?} \
             with {known}"
        ));
    }
    Ok(out)
}

/// ONNX Reshape.
pub fn reshape(x: &Tensor, target: &[i64]) -> Result<Tensor, String> {
    let shape = resolve_reshape(x.shape(), target)?;
    Ok(each_dtype!(x, a => reshape_arr(a, &shape)?))
}

/// Permutes the dimensions (`perm` empty = reverse them, as in ONNX).
pub fn transpose(x: &Tensor, perm: &[usize]) -> Result<Tensor, String> {
    let rank = x.shape().len();
    let perm: Vec<usize> = if perm.is_empty() { (0..rank).rev().collect() } else { perm.to_vec() };
    let mut seen = vec![false; rank];
    let valid =
        perm.len() == rank && perm.iter().all(|&p| p < rank && !std::mem::replace(&mut seen[p], true));
    if !valid {
        return Err(format!(
            "transpose: perm {perm:?} is not a permutation of 0..{rank} (input shape {:?})",
            x.shape()
        ));
    }
    Ok(each_dtype!(x, a => a.view().permuted_axes(IxDyn(&perm)).as_standard_layout().into_owned()))
}

/// ONNX Flatten: `[d0 · … · d(axis−1), d(axis) · … · d(r−1)]`; `axis` in `−r..=r`.
pub fn flatten(x: &Tensor, axis: i64) -> Result<Tensor, String> {
    let shape = x.shape();
    let r = shape.len() as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if !(0..=r).contains(&a) {
        return Err(format!("flatten: axis {axis} is out of range for rank {r} (valid: {} to {r})", -r));
    }
    let a = a as usize;
    let out = [product("flatten", &shape[..a])?, product("flatten", &shape[a..])?];
    Ok(each_dtype!(x, t => reshape_arr(t, &out)?))
}

/// Inserts size-1 dimensions at `axes`, which index the output (rank + `axes.len()`).
pub fn unsqueeze(x: &Tensor, axes: &[i64]) -> Result<Tensor, String> {
    let shape = x.shape();
    let out_rank = shape.len() + axes.len();
    let mut ones = vec![false; out_rank];
    for &a in axes {
        let i = norm_axis("unsqueeze", a, out_rank)?;
        if std::mem::replace(&mut ones[i], true) {
            return Err(format!("unsqueeze: axes {axes:?} name output dimension {i} twice"));
        }
    }
    let mut dims = shape.iter();
    let out: Vec<usize> = ones.iter().map(|&one| if one { 1 } else { *dims.next().unwrap_or(&1) }).collect();
    Ok(each_dtype!(x, t => reshape_arr(t, &out)?))
}

/// Removes the size-1 dimensions at `axes` (empty = every size-1 dimension).
pub fn squeeze(x: &Tensor, axes: &[i64]) -> Result<Tensor, String> {
    let shape = x.shape();
    let mut drop = vec![false; shape.len()];
    if axes.is_empty() {
        for (d, &s) in drop.iter_mut().zip(shape) {
            *d = s == 1;
        }
    }
    for &a in axes {
        let i = norm_axis("squeeze", a, shape.len())?;
        if shape[i] != 1 {
            return Err(format!("squeeze: axis {a} of shape {shape:?} has size {}, not 1", shape[i]));
        }
        drop[i] = true;
    }
    let out: Vec<usize> = shape.iter().zip(&drop).filter(|(_, &d)| !d).map(|(&s, _)| s).collect();
    Ok(each_dtype!(x, t => reshape_arr(t, &out)?))
}

/// Concatenates along `axis`; every input has the same element type and rank, and equal
/// dimensions except along `axis`.
pub fn concat(xs: &[&Tensor], axis: i64) -> Result<Tensor, String> {
    let Some(first) = xs.first() else {
        return Err("cat: needs at least one input".into());
    };
    let shape0 = first.shape();
    let ax = norm_axis("cat", axis, shape0.len())?;
    for (i, t) in xs.iter().enumerate().skip(1) {
        let s = t.shape();
        let same =
            s.len() == shape0.len() && s.iter().zip(shape0).enumerate().all(|(d, (a, b))| d == ax || a == b);
        if t.dtype() != first.dtype() || !same {
            return Err(format!(
                "cat: input {i} is {:?} {s:?} but input 0 is {:?} {shape0:?}; inputs need the same type, \
                 rank and dimensions except along axis {axis}",
                t.dtype(),
                first.dtype()
            ));
        }
    }
    macro_rules! join {
        ($v:ident) => {{
            let views: Vec<_> =
                xs.iter().filter_map(|t| if let Tensor::$v(a) = t { Some(a.view()) } else { None }).collect();
            Tensor::$v(ndarray::concatenate(Axis(ax), &views).map_err(|e| format!("cat: {e}"))?)
        }};
    }
    Ok(match first {
        Tensor::F32(_) => join!(F32),
        Tensor::I64(_) => join!(I64),
        Tensor::I32(_) => join!(I32),
        Tensor::Bool(_) => join!(Bool),
    })
}

/// The indices an ONNX slice `start:end:step` selects from a dimension of size `dim`, after the
/// ONNX clamping rules (negative start/end count from the end; for a positive step start and
/// end are clamped to `0..=dim`, for a negative step start to `0..=dim−1` and end to
/// `−1..=dim−1`).
pub fn slice_indices(dim: usize, start: i64, end: i64, step: i64) -> Vec<usize> {
    let d = dim as i64;
    let s = if start < 0 { start.saturating_add(d) } else { start };
    let e = if end < 0 { end.saturating_add(d) } else { end };
    let mut out = Vec::new();
    if step > 0 {
        let (s, e) = (s.clamp(0, d), e.clamp(0, d));
        let mut i = s;
        while i < e {
            out.push(i as usize);
            i = i.saturating_add(step);
        }
    } else if step < 0 {
        let (s, e) = (s.clamp(0, (d - 1).max(0)), e.clamp(-1, d - 1));
        let mut i = s;
        while i > e && d > 0 {
            out.push(i as usize);
            i = i.saturating_add(step);
        }
    }
    out
}

/// ONNX Slice. `axes` empty means `0..starts.len()`, `steps` empty means all 1.
pub fn slice(
    x: &Tensor,
    starts: &[i64],
    ends: &[i64],
    axes: &[i64],
    steps: &[i64],
) -> Result<Tensor, String> {
    let shape = x.shape();
    let n = starts.len();
    if ends.len() != n || (!axes.is_empty() && axes.len() != n) || (!steps.is_empty() && steps.len() != n) {
        return Err(format!(
            "slice: starts {starts:?}, ends {ends:?}, axes {axes:?} and steps {steps:?} must have the same \
             length (axes and steps may be empty)"
        ));
    }
    let mut picks: Vec<Option<Vec<usize>>> = vec![None; shape.len()];
    for k in 0..n {
        let ax = norm_axis("slice", axes.get(k).copied().unwrap_or(k as i64), shape.len())?;
        let step = steps.get(k).copied().unwrap_or(1);
        if step == 0 {
            return Err(format!("slice: step 0 for axis {ax} (steps {steps:?})"));
        }
        if picks[ax].is_some() {
            return Err(format!("slice: axis {ax} is sliced twice (axes {axes:?})"));
        }
        picks[ax] = Some(slice_indices(shape[ax], starts[k], ends[k], step));
    }
    let mut out = x.clone();
    for (ax, idx) in picks.iter().enumerate() {
        if let Some(idx) = idx {
            out = each_dtype!(&out, a => a.select(Axis(ax), idx));
        }
    }
    Ok(out)
}

/// The integer indices of an index input (i64 or i32), or an error naming the op.
pub fn index_values(name: &str, t: &Tensor) -> Result<ArrayD<i64>, String> {
    t.int_values().ok_or_else(|| {
        format!("{name}: the indices are {} {:?}; they must be int64 or int32", t.dtype().name(), t.shape())
    })
}

/// ONNX Gather along `axis` at `indices` (negative indices count from the end): the output
/// shape is `data[..axis] + indices + data[axis+1..]`.
pub fn gather(x: &Tensor, indices: &ArrayD<i64>, axis: i64) -> Result<Tensor, String> {
    let shape = x.shape();
    let ax = norm_axis("gather", axis, shape.len())?;
    let dim = shape[ax] as i64;
    let mut idx = Vec::with_capacity(indices.len());
    for &i in indices.iter() {
        let j = if i < 0 { i + dim } else { i };
        if j < 0 || j >= dim {
            return Err(format!(
                "gather: index {i} is out of range for axis {axis} of size {dim} (data shape {shape:?})"
            ));
        }
        idx.push(j as usize);
    }
    let mut out_shape = shape[..ax].to_vec();
    out_shape.extend_from_slice(indices.shape());
    out_shape.extend_from_slice(&shape[ax + 1..]);
    Ok(each_dtype!(x, a => reshape_arr(&a.select(Axis(ax), &idx), &out_shape)?))
}

/// ONNX GatherND with `batch_dims` leading dimensions shared by data and indices: the last
/// axis of `indices` holds index tuples into the following dimensions of `x`.
pub fn gather_nd(x: &Tensor, indices: &ArrayD<i64>, batch_dims: i64) -> Result<Tensor, String> {
    let (ds, is) = (x.shape(), indices.shape());
    let b =
        usize::try_from(batch_dims).map_err(|_| format!("gather_nd: batch_dims {batch_dims} is negative"))?;
    let Some(&k) = is.last() else {
        return Err("gather_nd: the indices must have rank at least 1".into());
    };
    if b >= is.len() || b + k > ds.len() || ds[..b] != is[..b] {
        return Err(format!(
            "gather_nd: data {ds:?} and indices {is:?} do not fit batch_dims {b} (the first {b} \
             dimensions must be equal and the index tuples of length {k} must fit the data's rank)"
        ));
    }
    let batch: usize = ds[..b].iter().product();
    let tuples_per_batch: usize = is[b..is.len() - 1].iter().product();
    let slice_shape = &ds[b + k..];
    let slice_len: usize = slice_shape.iter().product();
    let block: usize = ds[b..].iter().product();
    let flat_idx: Vec<i64> = indices.iter().copied().collect();
    let mut picks = Vec::with_capacity(batch * tuples_per_batch);
    for bi in 0..batch {
        for t in 0..tuples_per_batch {
            let tuple = &flat_idx[(bi * tuples_per_batch + t) * k..][..k];
            let mut off = 0usize;
            for (j, &i) in tuple.iter().enumerate() {
                let dim = ds[b + j] as i64;
                let v = if i < 0 { i + dim } else { i };
                if v < 0 || v >= dim {
                    return Err(format!(
                        "gather_nd: index {i} is out of range for dimension {} of size {dim} (data {ds:?})",
                        b + j
                    ));
                }
                off = off * ds[b + j] + v as usize;
            }
            picks.push(bi * block + off * slice_len);
        }
    }
    let mut out_shape = is[..is.len() - 1].to_vec();
    out_shape.extend_from_slice(slice_shape);
    Ok(each_dtype!(x, a => {
        let flat: Vec<_> = a.iter().cloned().collect();
        let mut v = Vec::with_capacity(picks.len() * slice_len);
        for &p in &picks {
            v.extend_from_slice(&flat[p..p + slice_len]);
        }
        ArrayD::from_shape_vec(IxDyn(&out_shape), v).map_err(|e| format!("gather_nd: {e}"))?
    }))
}

/// ONNX Expand: broadcasts `x` and `shape` together (a 1 in either keeps the other's size).
pub fn expand(x: &Tensor, shape: &[i64]) -> Result<Tensor, String> {
    let target: Vec<usize> = shape
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| format!("expand: shape {shape:?} has a negative dimension")))
        .collect::<Result<_, _>>()?;
    let out = super::elementwise::broadcast_shapes(x.shape(), &target).ok_or_else(|| {
        format!("expand: input shape {:?} does not broadcast with shape {shape:?}", x.shape())
    })?;
    product("expand", &out)?;
    let fail = || format!("expand: cannot broadcast {:?} to {out:?}", x.shape());
    Ok(each_dtype!(x, a => a.broadcast(IxDyn(&out)).ok_or_else(fail)?.to_owned()))
}

/// ONNX Range: `start, start + delta, …` while below `limit` (above, for a negative delta);
/// three scalars of one numeric type.
pub fn range(start: &Tensor, limit: &Tensor, delta: &Tensor) -> Result<Tensor, String> {
    for (i, t) in [start, limit, delta].iter().enumerate() {
        if t.len() != 1 {
            return Err(format!("range: input {i} must be a scalar, it has shape {:?}", t.shape()));
        }
    }
    let n = |t: &Tensor| t.to_f64().iter().next().copied().unwrap_or(0.0);
    let (s, l, d) = (n(start), n(limit), n(delta));
    if d == 0.0 {
        return Err("range: delta is 0".into());
    }
    let count = ((l - s) / d).ceil().max(0.0);
    if !count.is_finite() || count > crate::onnx::MAX_TENSOR_ELEMENTS as f64 {
        return Err(format!("range: start {s}, limit {l}, delta {d} give too many elements"));
    }
    let count = count as usize;
    let out = match (start, limit, delta) {
        (Tensor::F32(_), Tensor::F32(_), Tensor::F32(_)) => {
            let (s, d) = (s as f32, d as f32);
            Tensor::F32(ArrayD::from_shape_fn(IxDyn(&[count]), |i| s + i[0] as f32 * d))
        }
        (Tensor::I64(a), Tensor::I64(_), Tensor::I64(c)) => {
            let (s, d) = (a.iter().next().copied().unwrap_or(0), c.iter().next().copied().unwrap_or(1));
            Tensor::I64(ArrayD::from_shape_fn(IxDyn(&[count]), |i| s + i[0] as i64 * d))
        }
        (Tensor::I32(a), Tensor::I32(_), Tensor::I32(c)) => {
            let (s, d) = (a.iter().next().copied().unwrap_or(0), c.iter().next().copied().unwrap_or(1));
            Tensor::I32(ArrayD::from_shape_fn(IxDyn(&[count]), |i| {
                s.wrapping_add((i[0] as i32).wrapping_mul(d))
            }))
        }
        _ => {
            return Err(format!(
                "range: start, limit and delta must have one numeric type, got {}, {}, {}",
                start.dtype().name(),
                limit.dtype().name(),
                delta.dtype().name()
            ))
        }
    };
    Ok(out)
}

/// ONNX ConstantOfShape: a tensor of the shape held by the 1-D integer `shape`, every element
/// `value` of type `dtype`.
pub fn constant_of_shape(shape: &Tensor, value: f64, dtype: DType) -> Result<Tensor, String> {
    let dims = index_values("constant_of_shape", shape)?;
    if dims.ndim() > 1 {
        return Err(format!("constant_of_shape: the shape input must be 1-D, it is {:?}", dims.shape()));
    }
    let dims: Vec<usize> = dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| format!("constant_of_shape: negative dimension {d}")))
        .collect::<Result<_, _>>()?;
    if product("constant_of_shape", &dims)? > crate::onnx::MAX_TENSOR_ELEMENTS {
        return Err(format!("constant_of_shape: shape {dims:?} is too large"));
    }
    let fill = match dtype {
        DType::F32 => Tensor::F32(ArrayD::from_elem(IxDyn(&dims), value as f32)),
        DType::I64 => Tensor::I64(ArrayD::from_elem(IxDyn(&dims), value as i64)),
        DType::I32 => Tensor::I32(ArrayD::from_elem(IxDyn(&dims), value as i32)),
        DType::Bool => Tensor::Bool(ArrayD::from_elem(IxDyn(&dims), value != 0.0)),
    };
    Ok(fill)
}

/// Converts the element type as ONNX Cast does: float to integer truncates toward zero (NaN
/// becomes 0 and values out of range saturate), integer narrowing wraps, anything to bool is
/// `x != 0`, bool to a number is 0 or 1.
pub fn cast(x: &Tensor, to: DType) -> Tensor {
    match to {
        DType::F32 => Tensor::F32(x.to_f32()),
        DType::I64 => Tensor::I64(x.to_i64()),
        DType::I32 => Tensor::I32(match x {
            Tensor::F32(a) => a.mapv(|v| v as i32),
            Tensor::I64(a) => a.mapv(|v| v as i32),
            Tensor::I32(a) => a.clone(),
            Tensor::Bool(a) => a.mapv(i32::from),
        }),
        DType::Bool => Tensor::Bool(match x {
            Tensor::F32(a) => a.mapv(|v| v != 0.0),
            Tensor::I64(a) => a.mapv(|v| v != 0),
            Tensor::I32(a) => a.mapv(|v| v != 0),
            Tensor::Bool(a) => a.clone(),
        }),
    }
}

/// ONNX Shape: dimensions `start..end` of the input as a 1-D i64 tensor (negative values count
/// from the end; both are clamped to `0..=rank`).
pub fn shape_of(x: &Tensor, start: i64, end: Option<i64>) -> Tensor {
    dims_tensor(x.shape(), start, end)
}

/// Dimensions `start..end` of `shape` as a 1-D i64 tensor, with ONNX Shape's clamping.
pub fn dims_tensor(shape: &[usize], start: i64, end: Option<i64>) -> Tensor {
    let r = shape.len() as i64;
    let clamp = |v: i64| (if v < 0 { v.saturating_add(r) } else { v }).clamp(0, r) as usize;
    let (s, e) = (clamp(start), clamp(end.unwrap_or(r)));
    let dims: Vec<i64> = if s < e { shape[s..e].iter().map(|&d| d as i64).collect() } else { Vec::new() };
    Tensor::I64(ArrayD::from_shape_vec(IxDyn(&[dims.len()]), dims).expect("1-D shape matches its data"))
}
