//! `mase info`: a checkpoint as a table (like torch.fx `print_tabular`) or as JSON.

use std::path::Path;

use mase_ir::MaseGraph;
use serde_json::{json, Value};

/// Prints the checkpoint at `prefix`.
pub fn run(prefix: &Path, as_json: bool) -> anyhow::Result<()> {
    let graph = mase_ir::checkpoint::load(prefix)?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&to_json(&graph))?);
    } else {
        print!("{}", table(&graph));
    }
    Ok(())
}

/// Every node's name, kind, MASE type and op, op attributes, input names, shapes and metadata.
pub fn to_json(graph: &MaseGraph) -> Value {
    let nodes: Vec<Value> = graph
        .nodes()
        .map(|(_, n)| {
            let shapes = |m: &indexmap::IndexMap<String, mase_ir::metadata::TensorMeta>| -> Value {
                m.iter().map(|(k, v)| (k.clone(), json!(v.shape))).collect::<serde_json::Map<_, _>>().into()
            };
            json!({
                "name": n.name,
                "op_kind": n.kind,
                "mase_type": n.meta.common.mase_type,
                "mase_op": n.op.mase_op(),
                "op": n.op,
                "args": n.inputs.iter().map(|i| graph.node(*i).name.clone()).collect::<Vec<_>>(),
                "arg_shapes": shapes(&n.meta.common.args),
                "result_shapes": shapes(&n.meta.common.results),
                "quantized_weights": n.op.weight_names().into_iter().filter_map(|(role, key)| {
                    let q = graph.qweights.get(key)?;
                    Some((role.to_string(), json!({ "format": q.format, "channel_frac": q.channel_frac, "affine": q.affine })))
                }).collect::<serde_json::Map<_, _>>(),
                "metadata": n.meta,
            })
        })
        .collect();
    json!({ "name": graph.name, "nodes": nodes })
}

/// The quantized weights of a node, compactly: `weight s8.6`, or for per-channel fractions
/// `weight s8.5..9/ch` (the channels' fraction range), or for codes on an affine grid
/// `weight int8 ×[0.0059..0.0097]/32 zp 0 (32×)`.
fn weight_formats(graph: &MaseGraph, n: &mase_ir::Node) -> String {
    let parts: Vec<String> =
        n.op.weight_names()
            .into_iter()
            .filter_map(|(role, key)| {
                let q = graph.qweights.get(key)?;
                let s = if q.format.signed { "s" } else { "u" };
                if let Some(a) = &q.affine {
                    let zp: Vec<f32> = a.zero_point.iter().map(|&z| z as f32).collect();
                    return Some(format!(
                        "{role} {}int{} ×{} zp {}",
                        if q.format.signed { "" } else { "u" },
                        q.format.width,
                        span(&a.scale),
                        span(&zp)
                    ));
                }
                Some(match &q.channel_frac {
                    Some(f) => {
                        let (lo, hi) =
                            (f.iter().min().copied().unwrap_or(0), f.iter().max().copied().unwrap_or(0));
                        format!("{role} {s}{}.{lo}..{hi}/ch", q.format.width)
                    }
                    None => format!("{role} {s}{}.{}", q.format.width, q.format.frac),
                })
            })
            .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(", ")
    }
}

/// A tensor's values compactly: one value as itself, several as `[min..max]/N` (per channel).
fn values(graph: &MaseGraph, key: &str) -> String {
    let Some(t) = graph.weights.get(key) else { return format!("'{key}' (missing)") };
    span(&t.to_f32().iter().copied().collect::<Vec<f32>>())
}

/// Values compactly: one as itself, several as `[min..max]/N`.
fn span(v: &[f32]) -> String {
    let (lo, hi) = v.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    match v.len() {
        1 => format!("{lo}"),
        n if lo == hi => format!("{lo} ({n}×)"),
        n => format!("[{lo}..{hi}]/{n}"),
    }
}

/// What a node's result holds in numbers: a quantizer's integer type, scale and zero point
/// (`int8 ×0.0425 zp 0 Round`), or the fixed-point format a pass gave the result (`s8.5 RND_CONV
/// SAT`), or `-`.
fn quantization(graph: &MaseGraph, id: mase_ir::NodeId, n: &mase_ir::Node) -> String {
    use mase_ir::op::Op;
    let zp = |z: &Option<String>| z.as_deref().map_or_else(|| "0".to_string(), |z| values(graph, z));
    match &n.op {
        Op::Quant { scale, zero_point, bit_width, signed, narrow, rounding } => format!(
            "{}int{}{} ×{} zp {} {rounding:?}",
            if *signed { "" } else { "u" },
            values(graph, bit_width),
            if *narrow { " narrow" } else { "" },
            values(graph, scale),
            values(graph, zero_point),
        ),
        Op::BipolarQuant { scale } => format!("bipolar ×{}", values(graph, scale)),
        Op::Trunc { output_scale, output_bit_width, .. } => {
            format!("trunc to {} bits ×{}", values(graph, output_bit_width), values(graph, output_scale))
        }
        Op::QuantizeLinear { scale, zero_point, to, .. } => {
            format!("{} ×{} zp {}", to.name(), values(graph, scale), zp(zero_point))
        }
        Op::Qlinear { x_type, x_scale, x_zero_point, y_type, y_scale, y_zero_point, relu, .. } => format!(
            "{}{} ×{y_scale} zp {y_zero_point} from {} ×{x_scale} zp {x_zero_point}",
            if *relu { "relu, " } else { "" },
            y_type.name(),
            x_type.name()
        ),
        Op::DequantizeLinear { scale, zero_point, codes, .. } => {
            format!("from {} ×{} zp {}", codes.name(), values(graph, scale), zp(zero_point))
        }
        _ => mase_ir::quant::result_format(graph, id).map_or_else(|| "-".into(), |f| f.short()),
    }
}

/// The tabular view: opcode, name, target (mase op), args, output shape, the result's
/// quantization, quantized weights.
pub fn table(graph: &MaseGraph) -> String {
    let header = ["opcode", "name", "target", "args", "shape", "quantization", "weights"];
    let rows: Vec<[String; 7]> = graph
        .nodes()
        .map(|(id, n)| {
            let kind = serde_json::to_value(n.kind).ok().and_then(|v| v.as_str().map(String::from));
            let args: Vec<&str> = n.inputs.iter().map(|i| graph.node(*i).name.as_str()).collect();
            let shape = n.out_shape().map(|s| format!("{s:?}")).unwrap_or_else(|| "-".into());
            [
                kind.unwrap_or_default(),
                n.name.clone(),
                n.op.mase_op().into(),
                format!("({})", args.join(", ")),
                shape,
                quantization(graph, id, n),
                weight_formats(graph, n),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| -> String {
        let s: Vec<String> = cells.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
        s.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(header.to_vec());
    out +=
        &line(widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().iter().map(String::as_str).collect());
    for r in &rows {
        out += &line(r.iter().map(String::as_str).collect());
    }
    out
}
