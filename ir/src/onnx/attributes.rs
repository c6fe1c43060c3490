//! Typed access to the attributes of one ONNX node; errors name the node and the attribute.

use super::proto::{attr_type, AttributeProto};
use super::{tensor_from_proto, Ctx};
use crate::error::Result;
use crate::tensor::Tensor;

/// Attribute access for one node, with type checks and error messages naming the attribute.
pub(super) struct Attrs<'a> {
    pub(super) a: &'a [AttributeProto],
    pub(super) ctx: &'a Ctx<'a>,
}

impl Attrs<'_> {
    /// Errors on an attribute not in `known`.
    pub(super) fn check(&self, known: &[&str]) -> Result<()> {
        for a in self.a {
            if !a.ref_attr_name.is_empty() {
                return Err(self
                    .ctx
                    .err(format!("attribute '{}' refers to a function attribute; not supported", a.name)));
            }
            if !known.contains(&a.name.as_str()) {
                let sup = if known.is_empty() { "none".to_string() } else { known.join(", ") };
                return Err(self.ctx.err(format!(
                    "attribute '{}' is not supported for {}; supported attributes: {sup}",
                    a.name, self.ctx.op_type
                )));
            }
        }
        Ok(())
    }

    pub(super) fn get(&self, name: &str, ty: i32, ty_name: &str) -> Result<Option<&AttributeProto>> {
        match self.a.iter().find(|a| a.name == name) {
            None => Ok(None),
            Some(a) if a.r#type == ty => Ok(Some(a)),
            Some(a) => Err(self.ctx.err(format!(
                "attribute '{name}' must be of type {ty_name}, it has type number {}",
                a.r#type
            ))),
        }
    }

    pub(super) fn int(&self, name: &str) -> Result<Option<i64>> {
        Ok(self.get(name, attr_type::INT, "INT")?.map(|a| a.i.unwrap_or_default()))
    }
    pub(super) fn float(&self, name: &str) -> Result<Option<f32>> {
        Ok(self.get(name, attr_type::FLOAT, "FLOAT")?.map(|a| a.f.unwrap_or_default()))
    }
    pub(super) fn ints(&self, name: &str) -> Result<Option<Vec<i64>>> {
        Ok(self.get(name, attr_type::INTS, "INTS")?.map(|a| a.ints.clone()))
    }
    pub(super) fn string(&self, name: &str) -> Result<Option<String>> {
        match self.get(name, attr_type::STRING, "STRING")? {
            None => Ok(None),
            Some(a) => String::from_utf8(a.s.clone())
                .map(Some)
                .map_err(|_| self.ctx.err(format!("attribute '{name}' is not valid UTF-8"))),
        }
    }

    /// The value of a Constant node.
    pub(super) fn constant_value(&self) -> Result<Tensor> {
        if self.a.len() != 1 {
            return Err(self
                .ctx
                .err(format!("Constant needs exactly one value attribute, it has {}", self.a.len())));
        }
        let a = &self.a[0];
        let bad = |m: String| self.ctx.err(m);
        match (a.name.as_str(), a.r#type) {
            ("value", attr_type::TENSOR) => {
                let t = a.t.as_ref().ok_or_else(|| bad("attribute 'value' has no tensor".into()))?;
                tensor_from_proto(t).map_err(|m| bad(format!("attribute 'value': {m}")))
            }
            ("value_float", attr_type::FLOAT) => Ok(Tensor::F32(ndarray::arr0(a.f.unwrap_or_default()).into_dyn())),
            ("value_int", attr_type::INT) => Ok(Tensor::I64(ndarray::arr0(a.i.unwrap_or_default()).into_dyn())),
            ("value_floats", attr_type::FLOATS) => {
                Tensor::from_f32(&[a.floats.len()], a.floats.clone()).ok_or_else(|| bad("bad value_floats".into()))
            }
            ("value_ints", attr_type::INTS) => {
                Tensor::from_i64(&[a.ints.len()], a.ints.clone()).ok_or_else(|| bad("bad value_ints".into()))
            }
            (name, ty) => Err(bad(format!(
                "attribute '{name}' of type number {ty} is not supported; supported: value (TENSOR), value_float(s), value_int(s)"
            ))),
        }
    }
}
