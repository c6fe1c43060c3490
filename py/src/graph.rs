//! `mase_rs.MaseGraph`: the graph with MASE's Python surface (`from_onnx`, `nodes[name].meta
//! ["mase"].parameters`, `run`, `run_quantized`, `draw`, `save`/`load`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use mase_ir::onnx::{import_file, ImportOptions};
use mase_ir::MaseGraph;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::convert::{named_tensors, tensor_to_py, to_py};
use crate::error::{mase_err, IntoPy};

/// A MaseGraph: a DAG of nodes with MASE's `common` / `software` / `hardware` metadata, float
/// and quantized weights. Passes (`mase_rs.passes`) update it in place and return it.
#[pyclass(name = "MaseGraph", module = "mase_rs")]
pub struct PyGraph {
    /// The graph.
    pub graph: MaseGraph,
}

/// Outputs as one array (one output) or a tuple of arrays.
fn outputs_to_py<'py>(py: Python<'py>, outs: &[mase_ir::Tensor]) -> PyResult<Bound<'py, PyAny>> {
    let arrays: Vec<Bound<'py, PyAny>> = outs.iter().map(|t| tensor_to_py(py, t)).collect::<PyResult<_>>()?;
    if arrays.len() == 1 {
        return Ok(arrays.into_iter().next().expect("one output"));
    }
    Ok(PyTuple::new(py, arrays)?.into_any())
}

#[pymethods]
impl PyGraph {
    /// Imports an ONNX model; `input_shapes` fixes dynamic dimensions (`{"x": [1, 64]}`). The
    /// raising passes run (Gemm/MatMul+Add → linear, GELU, LayerNorm, scalar Mul, embedding)
    /// unless `raise_patterns=False`; `fold=False` keeps nodes on constants (shape sub-graphs)
    /// as graph nodes. Errors name the file, node and op.
    #[staticmethod]
    #[pyo3(signature = (path, input_shapes=None, raise_patterns=true, fold=true))]
    fn from_onnx(
        path: PathBuf,
        input_shapes: Option<BTreeMap<String, Vec<usize>>>,
        raise_patterns: bool,
        fold: bool,
    ) -> PyResult<PyGraph> {
        let opts =
            ImportOptions { input_shapes: input_shapes.unwrap_or_default(), raise: raise_patterns, fold };
        Ok(PyGraph { graph: import_file(&path, &opts).py()? })
    }

    /// Loads the checkpoint `prefix.json` + `prefix.safetensors` (`mase import` writes one; an
    /// emitted project keeps its graph at `DIR/mase/model`).
    #[staticmethod]
    fn load(prefix: PathBuf) -> PyResult<PyGraph> {
        Ok(PyGraph { graph: mase_ir::checkpoint::load(&prefix).py()? })
    }

    /// Writes the checkpoint `prefix.json` + `prefix.safetensors`.
    fn save(&self, prefix: PathBuf) -> PyResult<()> {
        mase_ir::checkpoint::export(&self.graph, &prefix).py()
    }

    /// Draws the graph: SVG (laid out in-house, no Graphviz) or DOT, by the file's extension.
    fn draw(&self, path: PathBuf) -> PyResult<()> {
        mase_ir::draw::save(&self.graph, &path).py()
    }

    /// The model name.
    #[getter]
    fn name(&self) -> String {
        self.graph.name.clone()
    }

    /// Nodes by name, in topological order (a dict of `Node`s, snapshots of the graph now).
    #[getter]
    fn nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (_, n) in self.graph.nodes() {
            d.set_item(&n.name, Py::new(py, node_view(&self.graph, n))?)?;
        }
        Ok(d)
    }

    /// Names of the graph inputs, in order.
    #[getter]
    fn inputs(&self) -> Vec<String> {
        self.graph.input_ids().into_iter().map(|i| self.graph.node(i).name.clone()).collect()
    }

    /// Float interpreter: graph inputs by keyword (numpy arrays); returns the output array, or a
    /// tuple of arrays for several outputs.
    #[pyo3(signature = (**inputs))]
    fn run<'py>(&self, py: Python<'py>, inputs: Option<&Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyAny>> {
        let inputs = named_tensors(&self.graph, inputs)?;
        let outs = mase_ir::interp::run_outputs(&self.graph, &inputs).py()?;
        outputs_to_py(py, &outs)
    }

    /// Fixed-point execution with every tensor cast to its format at node boundaries (after
    /// `quantize_transform_pass`); returns the float values of the output codes.
    #[pyo3(signature = (**inputs))]
    fn run_quantized<'py>(
        &self,
        py: Python<'py>,
        inputs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let inputs = named_tensors(&self.graph, inputs)?;
        let outs = mase_ir::quant::run_quantized(&self.graph, &inputs).py()?;
        outputs_to_py(py, &outs)
    }

    /// Every node's metadata tree as JSON-shaped Python data (`mase info --json`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let d = PyDict::new(py);
        for (_, n) in self.graph.nodes() {
            d.set_item(&n.name, to_py(py, &n.meta)?)?;
        }
        Ok(d.into_any())
    }

    /// A copy of the graph.
    fn copy(&self) -> PyGraph {
        PyGraph { graph: self.graph.clone() }
    }

    fn __len__(&self) -> usize {
        self.graph.len()
    }

    fn __repr__(&self) -> String {
        format!("MaseGraph({:?}, {} nodes)", self.graph.name, self.graph.len())
    }
}

/// One node as Python sees it: name, op, inputs and the metadata tree.
#[pyclass(name = "Node", module = "mase_rs", frozen)]
pub struct PyNode {
    /// Node name.
    #[pyo3(get)]
    name: String,
    /// MASE op name (`linear`, `relu`, …).
    #[pyo3(get)]
    op: String,
    /// torch.fx node kind (`placeholder`, `call_module`, …).
    #[pyo3(get)]
    kind: String,
    /// Names of the input nodes, in argument order.
    #[pyo3(get)]
    inputs: Vec<String>,
    /// The metadata tree as JSON.
    tree: serde_json::Value,
}

/// The view of node `n`.
fn node_view(g: &MaseGraph, n: &mase_ir::Node) -> PyNode {
    let kind =
        serde_json::to_value(n.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    PyNode {
        name: n.name.clone(),
        op: n.op.mase_op().to_string(),
        kind,
        inputs: n.inputs.iter().map(|i| g.node(*i).name.clone()).collect(),
        tree: serde_json::to_value(&n.meta).unwrap_or(serde_json::Value::Null),
    }
}

#[pymethods]
impl PyNode {
    /// `{"mase": MaseMetadata}`, as MASE's `node.meta`.
    #[getter]
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let params = crate::convert::json_to_py(py, &self.tree)?;
        d.set_item("mase", Py::new(py, MaseMetadata { parameters: params.unbind() })?)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!("Node({:?}, op={:?})", self.name, self.op)
    }
}

/// MASE's `node.meta["mase"]`: the tree is `parameters` (`common`, `software`, `hardware`);
/// indexing the object indexes the tree.
#[pyclass(name = "MaseMetadata", module = "mase_rs", frozen)]
pub struct MaseMetadata {
    /// `{"common": …, "software": …, "hardware": …}`.
    #[pyo3(get)]
    parameters: Py<PyAny>,
}

#[pymethods]
impl MaseMetadata {
    fn __getitem__<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        self.parameters
            .bind(py)
            .get_item(key)
            .map_err(|_| mase_err(format!("metadata has no `{key}` (it has common, software, hardware)")))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("MaseMetadata({})", self.parameters.bind(py).repr()?))
    }
}
