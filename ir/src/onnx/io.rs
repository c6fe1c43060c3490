//! Graph inputs and outputs: initializers become constants, other inputs placeholders with fully
//! known shapes (dynamic dimensions fixed by [`ImportOptions::input_shapes`]), and the graph
//! outputs one `output` node, their names [`crate::MaseGraph::output_names`].

use super::proto::{self, data_type, ValueInfoProto};
use super::{
    checked_elements, sanitize, tensor_from_proto, Ctx, ImportOptions, Importer, Val, MAX_ACTIVATION_ELEMENTS,
};
use crate::error::{Error, Result};
use crate::metadata::TensorMeta;
use crate::op::Op;
use crate::tensor::DType;

impl Importer {
    /// Initializers become constants; the other inputs become placeholders.
    pub(super) fn inputs(&mut self, g: &proto::GraphProto, opts: &ImportOptions) -> Result<()> {
        for t in &g.initializer {
            if t.name.is_empty() {
                return Err(Error::Unsupported("an initializer has no name".into()));
            }
            let tensor = tensor_from_proto(t)
                .map_err(|m| Error::Unsupported(format!("initializer '{}': {m}", t.name)))?;
            let v = self.constant(tensor, t.name.clone());
            self.values.insert(t.name.clone(), v);
            self.elem_types.insert(t.name.clone(), t.data_type);
        }
        let real: Vec<&ValueInfoProto> =
            g.input.iter().filter(|i| !self.values.contains_key(&i.name)).collect();
        for name in opts.input_shapes.keys() {
            if !real.iter().any(|i| &i.name == name) {
                let names: Vec<&str> = real.iter().map(|i| i.name.as_str()).collect();
                return Err(Error::Config(format!(
                    "--input-shape names '{name}', which is not an input of the model; its inputs are: {}",
                    names.join(", ")
                )));
            }
        }
        for vi in real {
            let (shape, dtype) = input_shape(vi, opts.input_shapes.get(&vi.name))?;
            if checked_elements(&shape).is_none_or(|n| n > MAX_ACTIVATION_ELEMENTS) {
                return Err(Error::Unsupported(format!(
                    "input '{}' has shape {shape:?}, more than {MAX_ACTIVATION_ELEMENTS} elements",
                    vi.name
                )));
            }
            let name = self.graph.fresh_name(&sanitize(&vi.name));
            let id = self.graph.add_node(name, Op::Placeholder, vec![])?;
            let node = self.graph.node_mut(id);
            node.meta.common.results.insert("data_out_0".into(), TensorMeta::unquantized(&shape, dtype));
            node.origin = Some(vi.name.clone());
            self.values.insert(vi.name.clone(), Val::Node { id, shape, dtype, known: None });
        }
        Ok(())
    }

    /// The output node, with one input per graph output, and the graph output names.
    pub(super) fn outputs(&mut self, outs: &[ValueInfoProto]) -> Result<()> {
        if outs.is_empty() {
            return Err(Error::Unsupported("the graph has no outputs".into()));
        }
        let mut ids = Vec::new();
        for o in outs {
            let ctx = Ctx { name: sanitize(&o.name), op_type: "graph output", origin: o.name.clone() };
            let v = self.value(&ctx, &o.name)?;
            ids.push(self.materialize(&ctx, &v)?);
        }
        let name = self.graph.fresh_name("output");
        self.graph.add_node(name, Op::Output, ids)?;
        // Kept as written (not sanitized): they are the names users and exporters know.
        self.graph.output_names = outs.iter().map(|o| o.name.clone()).collect();
        Ok(())
    }
}

/// The shape of a graph input, with dynamic dimensions fixed by the user, and its element type.
fn input_shape(vi: &ValueInfoProto, given: Option<&Vec<usize>>) -> Result<(Vec<usize>, DType)> {
    let tt = vi.r#type.as_ref().and_then(|t| t.tensor_type.as_ref()).ok_or_else(|| {
        Error::Unsupported(format!("input '{}' is not a tensor; only tensor inputs are supported", vi.name))
    })?;
    let dtype = match tt.elem_type {
        // Double and half inputs are computed in float32, like every float tensor.
        data_type::FLOAT | data_type::DOUBLE | data_type::FLOAT16 => DType::F32,
        data_type::INT64 => DType::I64,
        data_type::INT32 => DType::I32,
        data_type::BOOL => DType::Bool,
        other => {
            return Err(Error::Unsupported(format!(
            "input '{}' has element type {}; supported input types: FLOAT (DOUBLE and FLOAT16 are computed \
                 as FLOAT), INT64, INT32, BOOL",
            vi.name,
            data_type::name(other)
        )))
        }
    };
    input_dims(vi, tt, given).map(|s| (s, dtype))
}

/// The dimensions of a graph input, dynamic ones fixed by the user.
fn input_dims(
    vi: &ValueInfoProto,
    tt: &proto::TypeProtoTensor,
    given: Option<&Vec<usize>>,
) -> Result<Vec<usize>> {
    let Some(shape) = tt.shape.as_ref() else {
        return given.cloned().ok_or_else(|| {
            Error::Unsupported(format!(
                "input '{}' has no shape in the model; give it with --input-shape {}=1x8x128 (your dimensions)",
                vi.name, vi.name
            ))
        });
    };
    let dims: Vec<Option<i64>> = shape
        .dim
        .iter()
        .map(|d| match &d.value {
            Some(proto::DimValue::DimValue(v)) if *v >= 0 => Some(*v),
            _ => None,
        })
        .collect();
    let hint = || {
        dims.iter()
            .zip(&shape.dim)
            .map(|(v, d)| match (v, &d.value) {
                (Some(v), _) => v.to_string(),
                (None, Some(proto::DimValue::DimParam(p))) if !p.is_empty() => format!("<{p}>"),
                _ => "<N>".to_string(),
            })
            .collect::<Vec<_>>()
            .join("x")
    };
    if let Some(g) = given {
        if g.len() != dims.len() {
            return Err(Error::Config(format!(
                "--input-shape for '{}' has {} dimensions but the model's input has {} ({})",
                vi.name,
                g.len(),
                dims.len(),
                hint()
            )));
        }
        for (k, (want, got)) in dims.iter().zip(g).enumerate() {
            if let Some(w) = want {
                if *w as u64 != *got as u64 {
                    return Err(Error::Config(format!(
                        "--input-shape for '{}' gives dimension {k} = {got} but the model fixes it to {w} ({})",
                        vi.name,
                        hint()
                    )));
                }
            }
        }
        return Ok(g.clone());
    }
    let mut out = Vec::with_capacity(dims.len());
    for (k, (d, pd)) in dims.iter().zip(&shape.dim).enumerate() {
        match d {
            Some(v) => out.push(usize::try_from(*v).map_err(|_| {
                Error::Unsupported(format!("input '{}' dimension {k} = {v} is too large", vi.name))
            })?),
            None => {
                let what = match &pd.value {
                    Some(proto::DimValue::DimParam(p)) if !p.is_empty() => format!(" ('{p}')"),
                    _ => String::new(),
                };
                return Err(Error::Unsupported(format!(
                    "input '{}' dimension {k}{what} is dynamic; fix it with --input-shape {}={} (your sizes in place of <…>, e.g. 1x8x128)",
                    vi.name,
                    vi.name,
                    hint()
                )));
            }
        }
    }
    Ok(out)
}
