//! Neural-network ops with a MASE op of their own: `Gelu` (opset 20), `Softmax`,
//! `LayerNormalization` (opset 17) and `Dropout` (inference only).

use super::{const_scalar, OnnxNode, OnnxOp};
use crate::error::Result;
use crate::onnx::{Importer, Val};
use crate::op::{GeluApprox, Op};
use crate::tensor::DType;

/// The family's op types.
pub(super) const OPS: &[OnnxOp] = &[
    OnnxOp { name: "Gelu", max_inputs: 1, convert: gelu },
    OnnxOp { name: "Softmax", max_inputs: 1, convert: softmax },
    OnnxOp { name: "LayerNormalization", max_inputs: 3, convert: layer_norm },
    OnnxOp { name: "Dropout", max_inputs: 3, convert: dropout },
];

fn gelu(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    if imp.opset < 20 {
        return Err(n.ctx.err(format!("Gelu is an opset 20 op; this model uses opset {}", imp.opset)));
    }
    n.at.check(&["approximate"])?;
    let approximate = match n.at.string("approximate")?.as_deref() {
        None | Some("none") => GeluApprox::None,
        Some("tanh") => GeluApprox::Tanh,
        Some(other) => {
            return Err(n.ctx.err(format!("attribute 'approximate' is '{other}'; supported: 'none', 'tanh'")))
        }
    };
    let v = n.inputs(1)?;
    Ok(vec![imp.emit(n.ctx, n.base, Op::Gelu { approximate }, &v)?])
}

fn softmax(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&["axis"])?;
    let v = n.inputs(1)?;
    Ok(vec![imp.emit(n.ctx, n.base, Op::Softmax { axis: n.at.int("axis")?.unwrap_or(-1) }, &v)?])
}

/// LayerNormalization (opset 17+): scale and bias must be constants. `stash_type` 1 (float
/// statistics) is what the interpreter computes (in f64, rounded once), so it is accepted.
fn layer_norm(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    let ctx = n.ctx;
    if imp.opset < 17 {
        return Err(
            ctx.err(format!("LayerNormalization is an opset 17 op; this model uses opset {}", imp.opset))
        );
    }
    n.at.check(&["axis", "epsilon", "stash_type"])?;
    if n.at.int("stash_type")?.unwrap_or(1) != 1 {
        return Err(ctx.err("attribute 'stash_type' must be 1 (FLOAT)"));
    }
    let (Some(x), Some(scale)) = (n.opt(0), n.opt(1)) else {
        return Err(ctx.err("inputs X and Scale are required"));
    };
    let name = imp.graph.fresh_name(n.base);
    let key_of = |imp: &mut Importer, v: &Val, role: &str| -> Result<String> {
        let t = v.known().ok_or_else(|| {
            ctx.err(format!(
                "the {role} input must be a constant (an initializer); a computed {role} is not supported"
            ))
        })?;
        if t.dtype() != DType::F32 {
            return Err(ctx.err(format!("the {role} input must be float")));
        }
        let key = format!("{name}.{role}");
        imp.graph.weights.insert(key.clone(), t.clone());
        Ok(key)
    };
    let weight = Some(key_of(imp, &scale, "weight")?);
    let bias = match n.opt(2) {
        Some(b) => Some(key_of(imp, &b, "bias")?),
        None => None,
    };
    let op = Op::LayerNorm {
        axis: n.at.int("axis")?.unwrap_or(-1),
        epsilon: n.at.float("epsilon")?.unwrap_or(1e-5),
        weight,
        bias,
    };
    let y = imp.emit(ctx, &name, op, &[x])?;
    let extra = "the Mean and InvStdDev outputs of LayerNormalization are not supported";
    Ok(vec![y, Val::Unusable(extra.into()), Val::Unusable(extra.into())])
}

fn dropout(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&["seed"])?;
    let x = n.first()?;
    let ratio = match n.opt(1) {
        Some(v) => const_scalar(n.ctx, &v, "ratio")? as f32,
        None => 0.5,
    };
    if let Some(t) = n.opt(2) {
        if const_scalar(n.ctx, &t, "training_mode")? != 0.0 {
            return Err(n
                .ctx
                .err("training_mode is true; only inference (training_mode = false) is supported"));
        }
    }
    let y = imp.emit(n.ctx, n.base, Op::Dropout { ratio }, &[x])?;
    Ok(vec![y, Val::Unusable("the Dropout mask output is not supported".into())])
}
