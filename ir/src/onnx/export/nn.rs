//! The MASE ops written as a few standard ONNX ops: `linear` (MatMul by the transposed weight,
//! then Add), `gelu` before opset 20 (its erf or tanh formula), the masked `softmax` and
//! `layer_norm` (LayerNormalization with scale and bias of the normalized shape). Each is
//! written in the form the importer's raising passes (`raise_linear`, `raise_gelu`,
//! `raise_masked_softmax`) turn back into the one MASE op, so a graph re-imported from its
//! export computes with the same kernels.

use ndarray::{Ix2, IxDyn};

use super::builder::{self, Builder};
use super::ops::{scalar_f32, At};
use crate::error::Result;
use crate::op::GeluApprox;
use crate::tensor::{DType, Tensor};

/// `x · Wᵀ + b`: MatMul by the `[in, out]` transposed weight (an initializer, written once per
/// weight), then Add of the `[out]` bias.
pub(super) fn linear(b: &mut Builder, at: &At, weight: &str, bias: Option<&str>) -> Result<()> {
    let [x] = at.take()?;
    let w = at.weight(weight)?;
    let w2 = w
        .as_f32()
        .and_then(|a| a.view().into_dimensionality::<Ix2>().ok())
        .ok_or_else(|| at.err(format!("the weight '{weight}' must be 2-D float32, it is {:?}", w.shape())))?;
    let wt = b.cached_initializer(format!("transposed:{weight}"), &format!("{weight}_t"), || {
        Tensor::F32(w2.t().as_standard_layout().into_owned().into_dyn())
    });
    let Some(bias) = bias else {
        b.node_to("MatMul", vec![x, wt], at.out.clone(), vec![]);
        return Ok(());
    };
    let bt = at.weight(bias)?;
    let bn = b.cached_initializer(format!("weight:{bias}"), bias, || bt.clone());
    let y = b.node("MatMul", vec![x, wt], &at.base("matmul"), vec![]);
    b.node_to("Add", vec![y, bn], at.out.clone(), vec![]);
    Ok(())
}

/// GELU: the `Gelu` op from opset 20; before it, the formula as the importer's `raise_gelu`
/// reads it: `(x · (1 + erf(x / √2))) · 0.5`, or with `1 + tanh(√(2/π) · (x + 0.044715 ·
/// x³))` for the tanh form.
pub(super) fn gelu(b: &mut Builder, at: &At, approximate: GeluApprox) -> Result<()> {
    let [x] = at.take()?;
    if at.opset >= 20 {
        let attrs = match approximate {
            GeluApprox::None => vec![],
            GeluApprox::Tanh => vec![builder::string("approximate", "tanh")],
        };
        b.node_to("Gelu", vec![x], at.out.clone(), attrs);
        return Ok(());
    }
    let constant = |b: &mut Builder, what: &str, v: f64| b.initializer(&at.base(what), &scalar_f32(v as f32));
    let inner = match approximate {
        GeluApprox::None => {
            let c = constant(b, "sqrt2", std::f64::consts::SQRT_2);
            let t = b.node("Div", vec![x.clone(), c], &at.base("div"), vec![]);
            b.node("Erf", vec![t], &at.base("erf"), vec![])
        }
        GeluApprox::Tanh => {
            let three = constant(b, "three", 3.0);
            let k = constant(b, "k", 0.044_715);
            let c = constant(b, "sqrt_2_over_pi", (2.0 / std::f64::consts::PI).sqrt());
            let cube = b.node("Pow", vec![x.clone(), three], &at.base("pow"), vec![]);
            let scaled = b.node("Mul", vec![cube, k], &at.base("cube"), vec![]);
            let sum = b.node("Add", vec![x.clone(), scaled], &at.base("inner"), vec![]);
            let u = b.node("Mul", vec![sum, c], &at.base("scaled"), vec![]);
            b.node("Tanh", vec![u], &at.base("tanh"), vec![])
        }
    };
    let one = constant(b, "one", 1.0);
    let half = constant(b, "half", 0.5);
    let a = b.node("Add", vec![inner, one], &at.base("plus_one"), vec![]);
    let p = b.node("Mul", vec![x, a], &at.base("product"), vec![]);
    b.node_to("Mul", vec![p, half], at.out.clone(), vec![]);
    Ok(())
}

/// Softmax along `axis`. With a boolean keep mask (input 1): `Where(keep, 0, −FLT_MAX)` added
/// to the scores (what `raise_masked_softmax` raises back), so a masked position's
/// exponential is exactly 0 and it takes no part in the sum, then `Where(keep, ·, 0)`: a
/// masked position is exactly 0 even in a row with every position masked, which the
/// interpreter makes all 0 (the sum alone would spread such a row evenly).
pub(super) fn softmax(b: &mut Builder, at: &At, axis: i64) -> Result<()> {
    let attrs = vec![builder::int("axis", axis)];
    if at.ins.len() == 1 {
        b.node_to("Softmax", at.ins.clone(), at.out.clone(), attrs);
        return Ok(());
    }
    let [x, keep] = at.take()?;
    if at.in_types[1].dtype != DType::Bool {
        return Err(
            at.err(format!("input 1 (the keep mask) is {}; it must be bool", at.in_types[1].dtype.name()))
        );
    }
    let zero = b.initializer(&at.base("zero"), &scalar_f32(0.0));
    let lowest = b.initializer(&at.base("lowest"), &scalar_f32(f32::MIN));
    let mask = b.node("Where", vec![keep.clone(), zero.clone(), lowest], &at.base("mask"), vec![]);
    let masked = b.node("Add", vec![x, mask], &at.base("masked"), vec![]);
    let p = b.node("Softmax", vec![masked], &at.base("softmax"), attrs);
    b.node_to("Where", vec![keep, p, zero], at.out.clone(), vec![]);
    Ok(())
}

/// LayerNormalization over `axis..rank`. ONNX needs a scale and takes scale and bias of the
/// normalized shape, so an absent scale is written as ones (multiplying by 1 changes nothing)
/// and a scale or bias that broadcasts to the normalized shape is written broadcast.
pub(super) fn layer_norm(
    b: &mut Builder,
    at: &At,
    axis: i64,
    epsilon: f32,
    weight: Option<&str>,
    bias: Option<&str>,
) -> Result<()> {
    let [x] = at.take()?;
    let shape = &at.in_types[0].shape;
    let ax = crate::interp::nn::norm_axis("layer_norm", axis, shape.len()).map_err(|m| at.err(m))?;
    let norm = &shape[ax..];
    // An affine tensor (by key, or ones when absent) at the normalized shape, written once.
    let affine = |b: &mut Builder, key: Option<&str>, what: &str| -> Result<String> {
        let Some(key) = key else {
            let ones = Tensor::F32(ndarray::ArrayD::from_elem(IxDyn(norm), 1.0));
            return Ok(b.initializer(&at.base(what), &ones));
        };
        let t = at.weight(key)?;
        let a = t.as_f32().ok_or_else(|| at.err(format!("the {what} '{key}' must be float32")))?;
        if a.shape() == norm {
            return Ok(b.cached_initializer(format!("weight:{key}"), key, || t.clone()));
        }
        let wide = a.broadcast(IxDyn(norm)).ok_or_else(|| {
            at.err(format!(
                "the {what} '{key}' of shape {:?} does not broadcast to the normalized shape {norm:?}",
                a.shape()
            ))
        })?;
        let wide = Tensor::F32(wide.as_standard_layout().into_owned());
        Ok(b.cached_initializer(format!("broadcast:{key}:{norm:?}"), key, || wide))
    };
    let scale = affine(b, weight, "scale")?;
    let mut ins = vec![x, scale];
    if bias.is_some() {
        ins.push(affine(b, bias, "bias")?);
    }
    let attrs = vec![builder::int("axis", axis), builder::float("epsilon", epsilon)];
    b.node_to("LayerNormalization", ins, at.out.clone(), attrs);
    Ok(())
}
