//! Conversions between Python values and the crates' types: numpy arrays ↔ [`Tensor`], Python
//! dicts ↔ TOML tables (pass arguments, flow configurations), JSON values (metadata, info maps,
//! reports) → Python objects.

use std::collections::HashMap;

use mase_ir::tensor::DType;
use mase_ir::{MaseGraph, Tensor};
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::error::mase_err;

/// The shape and elements of `obj` as a contiguous numpy array of `dtype` (`"float32"`,
/// `"int64"`), from anything `numpy.asarray` accepts.
fn numpy_elements<T: numpy::Element + Clone>(
    obj: &Bound<'_, PyAny>,
    what: &str,
    dtype: &str,
) -> PyResult<(Vec<usize>, Vec<T>)> {
    let np = obj.py().import("numpy")?;
    let arr = np
        .call_method1("ascontiguousarray", (obj, dtype))
        .map_err(|e| mase_err(format!("{what}: not convertible to a {dtype} array: {e}")))?;
    let arr = arr.cast_into::<PyArrayDyn<T>>().map_err(|e| mase_err(format!("{what}: {e}")))?;
    let ro = arr.readonly();
    let data = ro.as_slice().map_err(|e| mase_err(format!("{what}: {e}")))?.to_vec();
    Ok((ro.shape().to_vec(), data))
}

/// A float32 tensor from anything `numpy.asarray` accepts (arrays, lists, scalars).
pub fn tensor_from_py(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Tensor> {
    let (shape, data) = numpy_elements::<f32>(obj, what, "float32")?;
    Tensor::from_f32(&shape, data)
        .ok_or_else(|| mase_err(format!("{what}: shape {shape:?} does not match its data")))
}

/// An int64 array of `shape` from anything `numpy.asarray` accepts.
pub fn i64_from_py(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<(Vec<usize>, Vec<i64>)> {
    numpy_elements(obj, what, "int64")
}

/// A tensor of element type `dtype` (a graph input's) from anything `numpy.asarray` accepts.
/// Integer and boolean inputs take integer or boolean arrays only (a float array of token ids is
/// refused rather than truncated); float inputs must be finite.
pub fn tensor_from_py_as(obj: &Bound<'_, PyAny>, what: &str, dtype: DType) -> PyResult<Tensor> {
    if dtype == DType::F32 {
        let t = tensor_from_py(obj, what)?;
        if let Some(i) = t.first_non_finite() {
            return Err(mase_err(format!("{what}: element {i} (row-major) is not finite (NaN or infinity)")));
        }
        return Ok(t);
    }
    let py = obj.py();
    let arr = py.import("numpy")?.call_method1("asarray", (obj,))?;
    let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
    if !matches!(kind.as_str(), "i" | "u" | "b") {
        let name: String = arr.getattr("dtype")?.getattr("name")?.extract()?;
        return Err(mase_err(format!(
            "{what}: the graph input is {}, got a {name} array; pass integers (e.g. x.astype(np.int64))",
            dtype.name()
        )));
    }
    let (shape, data) = i64_from_py(&arr, what)?;
    let t = Tensor::from_i64(&shape, data).ok_or_else(|| mase_err(format!("{what}: shape {shape:?}")))?;
    if dtype == DType::Bool {
        if let Some(v) = t.to_i64().iter().find(|&&v| v != 0 && v != 1) {
            return Err(mase_err(format!("{what}: a boolean input takes 0 and 1 only, got {v}")));
        }
    }
    if dtype == DType::I32 {
        if let Some(v) = t.to_i64().iter().find(|&&v| i32::try_from(v).is_err()) {
            return Err(mase_err(format!("{what}: {v} is outside the int32 range")));
        }
    }
    Ok(mase_ir::interp::shape::cast(&t, dtype))
}

/// A numpy array (float32, int64, int32 or bool) of a tensor.
pub fn tensor_to_py<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    Ok(match t {
        Tensor::F32(a) => f32_array(py, a.shape(), a.iter().copied().collect())?,
        Tensor::I64(a) => i64_array(py, a.shape(), a.iter().copied().collect())?,
        Tensor::I32(a) => {
            numpy::PyArray1::from_vec(py, a.iter().copied().collect()).reshape(a.shape().to_vec())?.into_any()
        }
        Tensor::Bool(a) => {
            numpy::PyArray1::from_vec(py, a.iter().copied().collect()).reshape(a.shape().to_vec())?.into_any()
        }
    })
}

/// A float32 numpy array of `shape`.
pub fn f32_array<'py>(py: Python<'py>, shape: &[usize], data: Vec<f32>) -> PyResult<Bound<'py, PyAny>> {
    Ok(numpy::PyArray1::from_vec(py, data).reshape(shape.to_vec())?.into_any())
}

/// A float64 numpy array of `shape`.
pub fn f64_array<'py>(py: Python<'py>, shape: &[usize], data: Vec<f64>) -> PyResult<Bound<'py, PyAny>> {
    Ok(numpy::PyArray1::from_vec(py, data).reshape(shape.to_vec())?.into_any())
}

/// An int64 numpy array of `shape`.
pub fn i64_array<'py>(py: Python<'py>, shape: &[usize], data: Vec<i64>) -> PyResult<Bound<'py, PyAny>> {
    Ok(numpy::PyArray1::from_vec(py, data).reshape(shape.to_vec())?.into_any())
}

/// Keyword arguments as named tensors of `graph`'s inputs, each converted to its input's
/// element type (unknown names are left float32 for the interpreter to refuse by name).
pub fn named_tensors(
    graph: &MaseGraph,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<HashMap<String, Tensor>> {
    let mut out = HashMap::new();
    if let Some(kw) = kwargs {
        for (k, v) in kw.iter() {
            let name: String = k.extract()?;
            let dtype = graph.input_dtype(&name).unwrap_or(DType::F32);
            let t = tensor_from_py_as(&v, &format!("input `{name}`"), dtype)?;
            out.insert(name, t);
        }
    }
    Ok(out)
}

/// A TOML table from a Python dict (pass arguments, a configuration); `what` names it in errors.
pub fn table_from_py(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<toml::Table> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else { return Ok(toml::Table::new()) };
    match toml_from_py(obj, what)? {
        toml::Value::Table(t) => Ok(t),
        other => Err(mase_err(format!("{what}: expected a dict, got a {}", other.type_str()))),
    }
}

/// One TOML value from a Python value: bool, int, float, str, os.PathLike, list/tuple, dict,
/// numpy scalars and arrays (as nested lists).
pub fn toml_from_py(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<toml::Value> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(obj.extract()?));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(toml::Value::Integer(obj.extract()?));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(obj.extract()?));
    }
    if obj.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(obj.extract()?));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut t = toml::Table::new();
        for (k, v) in d.iter() {
            let key: String =
                k.extract().map_err(|_| mase_err(format!("{what}: dict keys must be strings, got {k}")))?;
            let inner = format!("{what}.{key}");
            t.insert(key, toml_from_py(&v, &inner)?);
        }
        return Ok(toml::Value::Table(t));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (i, v) in obj.try_iter()?.enumerate() {
            items.push(toml_from_py(&v?, &format!("{what}[{i}]"))?);
        }
        return Ok(toml::Value::Array(items));
    }
    if obj.is_none() {
        return Err(mase_err(format!("{what}: None is not a value (leave the key out instead)")));
    }
    let py = obj.py();
    let os = py.import("os")?;
    if obj.is_instance(&os.getattr("PathLike")?)? {
        return Ok(toml::Value::String(os.call_method1("fspath", (obj,))?.extract()?));
    }
    // numpy scalars and arrays: `tolist()` gives Python numbers and nested lists.
    if obj.hasattr("tolist")? {
        return toml_from_py(&obj.call_method0("tolist")?, what);
    }
    Err(mase_err(format!(
        "{what}: a {} is not supported (use bool, int, float, str, list or dict)",
        obj.get_type().name()?
    )))
}

/// A Python object from a JSON value (dicts keep their key order).
pub fn json_to_py<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value as J;
    Ok(match v {
        J::Null => py.None().into_bound(py),
        J::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        J::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        J::String(s) => PyString::new(py, s).into_any(),
        J::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(json_to_py(py, x)?)?;
            }
            l.into_any()
        }
        J::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// A Python object from anything serializable (through JSON).
pub fn to_py<'py>(py: Python<'py>, v: &impl serde::Serialize) -> PyResult<Bound<'py, PyAny>> {
    let j = serde_json::to_value(v).map_err(|e| mase_err(format!("serializing: {e}")))?;
    json_to_py(py, &j)
}
