//! The op-specific part of the import: each supported ONNX op type becomes MASE ops (or a folded
//! constant), with the helpers that read required inputs and constant operands.

use super::attributes::Attrs;
use super::proto::data_type;
use super::{Ctx, Importer, Val, SUPPORTED_OPS};
use crate::error::Result;
use crate::op::{GeluApprox, Op};
use crate::tensor::{DType, Tensor};

impl Importer {
    /// The op-specific part of a node: returns its outputs.
    pub(super) fn convert(
        &mut self,
        ctx: &Ctx,
        base: &str,
        at: &Attrs,
        ins: &[Option<Val>],
    ) -> Result<Vec<Val>> {
        let op_type = ctx.op_type;
        let max_inputs = match op_type {
            "Gemm" | "LayerNormalization" | "Dropout" => 3,
            "Slice" => 5,
            "ReduceMean" | "Squeeze" | "Unsqueeze" => 2,
            _ => usize::MAX,
        };
        if ins.len() > max_inputs {
            return Err(ctx.err(format!("expects at most {max_inputs} inputs, got {}", ins.len())));
        }
        let unary = |op: Op| (op, 1usize);
        let simple = match op_type {
            "Relu" => Some(unary(Op::Relu)),
            "Erf" => Some(unary(Op::Erf)),
            "Tanh" => Some(unary(Op::Tanh)),
            "Sqrt" => Some(unary(Op::Sqrt)),
            "Identity" => Some(unary(Op::Identity)),
            "Add" => Some((Op::Add, 2)),
            "Sub" => Some((Op::Sub, 2)),
            "Mul" => Some((Op::Mul, 2)),
            "Div" => Some((Op::Div, 2)),
            "Pow" => Some((Op::Pow, 2)),
            "MatMul" => Some((Op::Matmul, 2)),
            _ => None,
        };
        if let Some((op, n)) = simple {
            at.check(&[])?;
            let v = req_inputs(ctx, ins, n)?;
            return Ok(vec![self.emit(ctx, base, op, &v)?]);
        }
        match op_type {
            "Gemm" => self.gemm(ctx, base, at, ins),
            "Gelu" => {
                if self.opset < 20 {
                    return Err(
                        ctx.err(format!("Gelu is an opset 20 op; this model uses opset {}", self.opset))
                    );
                }
                at.check(&["approximate"])?;
                let approximate = match at.string("approximate")?.as_deref() {
                    None | Some("none") => GeluApprox::None,
                    Some("tanh") => GeluApprox::Tanh,
                    Some(other) => {
                        return Err(ctx
                            .err(format!("attribute 'approximate' is '{other}'; supported: 'none', 'tanh'")))
                    }
                };
                let v = req_inputs(ctx, ins, 1)?;
                Ok(vec![self.emit(ctx, base, Op::Gelu { approximate }, &v)?])
            }
            "Softmax" => {
                at.check(&["axis"])?;
                let v = req_inputs(ctx, ins, 1)?;
                Ok(vec![self.emit(ctx, base, Op::Softmax { axis: at.int("axis")?.unwrap_or(-1) }, &v)?])
            }
            "LayerNormalization" => self.layer_norm(ctx, base, at, ins),
            "ReduceMean" => {
                let keepdims = at.int("keepdims")?.unwrap_or(1) != 0;
                let (axes, noop) = if self.opset < 18 {
                    at.check(&["axes", "keepdims"])?;
                    (at.ints("axes")?.unwrap_or_default(), false)
                } else {
                    at.check(&["keepdims", "noop_with_empty_axes"])?;
                    let axes = match ins.get(1).cloned().flatten() {
                        Some(v) => const_ints(ctx, &v, "axes")?,
                        None => vec![],
                    };
                    (axes, at.int("noop_with_empty_axes")?.unwrap_or(0) != 0)
                };
                let x = req_first(ctx, ins)?;
                if noop && axes.is_empty() {
                    return Ok(vec![self.emit(ctx, base, Op::Identity, &[x])?]);
                }
                Ok(vec![self.emit(ctx, base, Op::ReduceMean { axes, keepdims }, &[x])?])
            }
            "Reshape" => {
                at.check(&["allowzero"])?;
                let v = req_inputs(ctx, ins, 2)?;
                let shape = const_ints(ctx, &v[1], "shape")?;
                if at.int("allowzero")?.unwrap_or(0) != 0 && shape.contains(&0) {
                    return Err(ctx.err(
                        "allowzero = 1 with a 0 in the target shape makes an empty tensor; empty tensors are not supported",
                    ));
                }
                Ok(vec![self.emit(ctx, base, Op::Reshape { shape }, &v[..1])?])
            }
            "Transpose" => {
                at.check(&["perm"])?;
                let x = req_first(ctx, ins)?;
                let rank = x.shape().len();
                let perm = match at.ints("perm")? {
                    Some(p) => p
                        .iter()
                        .map(|&a| {
                            usize::try_from(a)
                                .map_err(|_| ctx.err(format!("attribute 'perm' has a negative entry {a}")))
                        })
                        .collect::<Result<Vec<_>>>()?,
                    None => (0..rank).rev().collect(),
                };
                Ok(vec![self.emit(ctx, base, Op::Transpose { perm }, &[x])?])
            }
            "Flatten" => {
                at.check(&["axis"])?;
                let x = req_first(ctx, ins)?;
                Ok(vec![self.emit(ctx, base, Op::Flatten { axis: at.int("axis")?.unwrap_or(1) }, &[x])?])
            }
            "Dropout" => {
                at.check(&["seed"])?;
                let x = req_first(ctx, ins)?;
                let ratio = match ins.get(1).cloned().flatten() {
                    Some(v) => const_scalar(ctx, &v, "ratio")? as f32,
                    None => 0.5,
                };
                if let Some(t) = ins.get(2).cloned().flatten() {
                    if const_scalar(ctx, &t, "training_mode")? != 0.0 {
                        return Err(ctx.err(
                            "training_mode is true; only inference (training_mode = false) is supported",
                        ));
                    }
                }
                let y = self.emit(ctx, base, Op::Dropout { ratio }, &[x])?;
                Ok(vec![y, Val::Unusable("the Dropout mask output is not supported".into())])
            }
            "Constant" => {
                at.check(&["value", "value_float", "value_floats", "value_int", "value_ints"])?;
                if !ins.is_empty() {
                    return Err(ctx.err("Constant takes no inputs"));
                }
                Ok(vec![self.constant(at.constant_value()?, base.to_string())])
            }
            "Shape" => {
                at.check(&["start", "end"])?;
                let x = req_first(ctx, ins)?;
                let dims = x.shape();
                let rank = dims.len() as i64;
                let clamp = |v: i64| if v < 0 { (v + rank).max(0) } else { v.min(rank) };
                let start = clamp(at.int("start")?.unwrap_or(0));
                let end = clamp(at.int("end")?.unwrap_or(rank));
                let sel: Vec<i64> = if start < end {
                    dims[start as usize..end as usize].iter().map(|&d| d as i64).collect()
                } else {
                    vec![]
                };
                let n = sel.len();
                let t = Tensor::from_i64(&[n], sel).ok_or_else(|| ctx.err("internal: shape tensor"))?;
                Ok(vec![self.constant(t, base.to_string())])
            }
            "Gather" => {
                at.check(&["axis"])?;
                let v = req_inputs(ctx, ins, 2)?;
                let idx = v[1]
                    .as_const()
                    .ok_or_else(|| ctx.err("the indices (input 1) must be constant; gathering at computed indices is not supported"))?;
                if idx.dtype() != DType::I64 {
                    return Err(ctx.err("the indices (input 1) must be integers"));
                }
                let key = format!("{}.indices", self.graph.fresh_name(base));
                let key = (0..)
                    .map(|i| if i == 0 { key.clone() } else { format!("{key}{i}") })
                    .find(|k| !self.graph.weights.contains_key(k))
                    .unwrap_or(key);
                self.graph.weights.insert(key.clone(), idx.clone());
                let op = Op::Gather { axis: at.int("axis")?.unwrap_or(0), indices: key };
                Ok(vec![self.emit(ctx, base, op, &v[..1])?])
            }
            "Unsqueeze" | "Squeeze" => {
                at.check(&[])?;
                let x = req_first(ctx, ins)?;
                let axes = match ins.get(1).cloned().flatten() {
                    Some(v) => const_ints(ctx, &v, "axes")?,
                    None if op_type == "Unsqueeze" => {
                        return Err(ctx.err("the axes input (input 1) is required"))
                    }
                    None => vec![],
                };
                let op = if op_type == "Unsqueeze" { Op::Unsqueeze { axes } } else { Op::Squeeze { axes } };
                Ok(vec![self.emit(ctx, base, op, &[x])?])
            }
            "Concat" => {
                at.check(&["axis"])?;
                let axis = at.int("axis")?.ok_or_else(|| ctx.err("attribute 'axis' is required"))?;
                if ins.is_empty() || ins.iter().any(|i| i.is_none()) {
                    return Err(ctx.err("Concat needs at least one input and no empty input names"));
                }
                let v: Vec<Val> = ins.iter().flatten().cloned().collect();
                Ok(vec![self.emit(ctx, base, Op::Concat { axis }, &v)?])
            }
            "Slice" => {
                at.check(&[])?;
                let x = req_first(ctx, ins)?;
                let get = |i: usize, what: &str| -> Result<Option<Vec<i64>>> {
                    ins.get(i).cloned().flatten().map(|v| const_ints(ctx, &v, what)).transpose()
                };
                let starts =
                    get(1, "starts")?.ok_or_else(|| ctx.err("the starts input (input 1) is required"))?;
                let ends = get(2, "ends")?.ok_or_else(|| ctx.err("the ends input (input 2) is required"))?;
                let axes = get(3, "axes")?.unwrap_or_else(|| (0..starts.len() as i64).collect());
                let steps = get(4, "steps")?.unwrap_or_else(|| vec![1; starts.len()]);
                if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
                    return Err(ctx.err(format!(
                        "starts, ends, axes and steps must have the same length, got {}, {}, {}, {}",
                        starts.len(),
                        ends.len(),
                        axes.len(),
                        steps.len()
                    )));
                }
                if steps.contains(&0) {
                    return Err(ctx.err("a step of 0 is not allowed"));
                }
                Ok(vec![self.emit(ctx, base, Op::Slice { starts, ends, axes, steps }, &[x])?])
            }
            "Cast" => {
                at.check(&["to", "saturate"])?;
                let to = at.int("to")?.ok_or_else(|| ctx.err("attribute 'to' is required"))?;
                let to = match i32::try_from(to).unwrap_or(-1) {
                    data_type::FLOAT | data_type::DOUBLE | data_type::FLOAT16 => DType::F32,
                    data_type::INT64 | data_type::INT32 | data_type::INT16 | data_type::INT8 | data_type::UINT8 => DType::I64,
                    other => {
                        return Err(ctx.err(format!(
                            "attribute 'to' is {} ({to}); supported: FLOAT, DOUBLE, FLOAT16 (as f32) and INT8..INT64, UINT8 (as i64)",
                            data_type::name(other)
                        )))
                    }
                };
                let x = req_first(ctx, ins)?;
                Ok(vec![self.emit(ctx, base, Op::Cast { to }, &[x])?])
            }
            other => Err(ctx.err(format!(
                "op type '{other}' is not supported; supported ops: {}",
                SUPPORTED_OPS.join(", ")
            ))),
        }
    }

    /// Gemm: Y = alpha · A' · B' + beta · C, as Transpose / MatMul / Add with alpha and beta
    /// multiplied into B and C (folded when they are constants).
    fn gemm(&mut self, ctx: &Ctx, base: &str, at: &Attrs, ins: &[Option<Val>]) -> Result<Vec<Val>> {
        at.check(&["alpha", "beta", "transA", "transB"])?;
        let v = req_inputs(ctx, &ins[..ins.len().min(2)], 2)?;
        let (mut a, mut b) = (v[0].clone(), v[1].clone());
        for (what, x) in [("A", &a), ("B", &b)] {
            if x.shape().len() != 2 {
                return Err(ctx.err(format!("input {what} must be 2-D, it has shape {:?}", x.shape())));
            }
        }
        let alpha = at.float("alpha")?.unwrap_or(1.0);
        let beta = at.float("beta")?.unwrap_or(1.0);
        if at.int("transA")?.unwrap_or(0) != 0 {
            a = self.emit(ctx, &format!("{base}_transpose_a"), Op::Transpose { perm: vec![1, 0] }, &[a])?;
        }
        if at.int("transB")?.unwrap_or(0) != 0 {
            b = self.emit(ctx, &format!("{base}_transpose_b"), Op::Transpose { perm: vec![1, 0] }, &[b])?;
        }
        if alpha != 1.0 {
            let s = self.constant(Tensor::F32(ndarray::arr0(alpha).into_dyn()), format!("{base}_alpha"));
            b = self.emit(ctx, &format!("{base}_alpha"), Op::Mul, &[b, s])?;
        }
        let mut y = self.emit(ctx, &format!("{base}_matmul"), Op::Matmul, &[a, b])?;
        if let Some(mut c) = ins.get(2).cloned().flatten() {
            if beta != 1.0 {
                let s = self.constant(Tensor::F32(ndarray::arr0(beta).into_dyn()), format!("{base}_beta"));
                c = self.emit(ctx, &format!("{base}_beta"), Op::Mul, &[c, s])?;
            }
            y = self.emit(ctx, &format!("{base}_add"), Op::Add, &[y, c])?;
        }
        Ok(vec![y])
    }

    /// LayerNormalization (opset 17+): scale and bias must be constants.
    fn layer_norm(&mut self, ctx: &Ctx, base: &str, at: &Attrs, ins: &[Option<Val>]) -> Result<Vec<Val>> {
        if self.opset < 17 {
            return Err(ctx
                .err(format!("LayerNormalization is an opset 17 op; this model uses opset {}", self.opset)));
        }
        at.check(&["axis", "epsilon", "stash_type"])?;
        if at.int("stash_type")?.unwrap_or(1) != 1 {
            return Err(ctx.err("attribute 'stash_type' must be 1 (FLOAT)"));
        }
        let v = req_inputs(ctx, &ins[..ins.len().min(2)], 2)?;
        let name = self.graph.fresh_name(base);
        let key_of = |imp: &mut Importer, v: &Val, role: &str| -> Result<String> {
            let t = v.as_const().ok_or_else(|| {
                ctx.err(format!("the {role} input must be a constant (an initializer); a computed {role} is not supported"))
            })?;
            if t.dtype() != DType::F32 {
                return Err(ctx.err(format!("the {role} input must be float")));
            }
            let key = format!("{name}.{role}");
            imp.graph.weights.insert(key.clone(), t.clone());
            Ok(key)
        };
        let weight = Some(key_of(self, &v[1], "weight")?);
        let bias = match ins.get(2).cloned().flatten() {
            Some(b) => Some(key_of(self, &b, "bias")?),
            None => None,
        };
        let op = Op::LayerNorm {
            axis: at.int("axis")?.unwrap_or(-1),
            epsilon: at.float("epsilon")?.unwrap_or(1e-5),
            weight,
            bias,
        };
        let y = self.emit(ctx, &name, op, &v[..1])?;
        let extra = "the Mean and InvStdDev outputs of LayerNormalization are not supported";
        Ok(vec![y, Val::Unusable(extra.into()), Val::Unusable(extra.into())])
    }
}

/// The first `n` inputs, all required.
fn req_inputs(ctx: &Ctx, ins: &[Option<Val>], n: usize) -> Result<Vec<Val>> {
    if ins.len() < n || ins.len() > n {
        return Err(ctx.err(format!("expects {n} input(s), got {}", ins.len())));
    }
    ins.iter()
        .enumerate()
        .map(|(i, v)| v.clone().ok_or_else(|| ctx.err(format!("input {i} is required but empty"))))
        .collect()
}

/// The first input, required (further optional inputs are read by the caller).
fn req_first(ctx: &Ctx, ins: &[Option<Val>]) -> Result<Val> {
    ins.first().cloned().flatten().ok_or_else(|| ctx.err("input 0 is required"))
}

/// A constant integer list (shape, axes, starts…).
fn const_ints(ctx: &Ctx, v: &Val, what: &str) -> Result<Vec<i64>> {
    let t = v.as_const().ok_or_else(|| {
        ctx.err(format!(
            "the '{what}' input must be a constant or fold to one; it is computed from activations at run time, which is not supported"
        ))
    })?;
    match t {
        Tensor::I64(a) if a.ndim() <= 1 => Ok(a.iter().copied().collect()),
        _ => Err(ctx.err(format!(
            "the '{what}' input must be a 1-D integer tensor, got {:?} {:?}",
            t.dtype(),
            t.shape()
        ))),
    }
}

/// A constant single-element value.
fn const_scalar(ctx: &Ctx, v: &Val, what: &str) -> Result<f64> {
    let t = v.as_const().ok_or_else(|| ctx.err(format!("the '{what}' input must be a constant")))?;
    if t.len() != 1 {
        return Err(
            ctx.err(format!("the '{what}' input must have one element, it has shape {:?}", t.shape()))
        );
    }
    Ok(match t {
        Tensor::F32(a) => a.iter().next().copied().unwrap_or(0.0) as f64,
        Tensor::I64(a) => a.iter().next().copied().unwrap_or(0) as f64,
    })
}
