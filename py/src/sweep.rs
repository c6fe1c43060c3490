//! `mase_rs.sweep`: a design-space sweep ([`mase_sweep::run_sweep`], what `mase sweep` runs),
//! returning plain Python data.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mase_sweep::output::front_sorted;
use mase_sweep::{Data, Shard, SweepConfig, SweepOptions};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::convert::{i64_from_py, table_from_py, tensor_from_py, to_py};
use crate::error::{mase_err, IntoPy};

/// Data files of one graph input: a path, a list of paths, or an array. The sweep's cache key
/// and the `mase flow` commands it writes name files, so an array is saved as
/// `out_dir/data/<kind>.<input>.npy` (one or more inferences stacked along the batch axis).
fn files_of(obj: &Bound<'_, PyAny>, out_dir: &Path, kind: &str, input: &str) -> PyResult<Vec<PathBuf>> {
    if let Ok(p) = obj.extract::<PathBuf>() {
        return Ok(vec![p]);
    }
    if let Ok(list) = obj.cast::<PyList>() {
        if let Ok(paths) = list.iter().map(|x| x.extract::<PathBuf>()).collect::<PyResult<Vec<_>>>() {
            return Ok(paths);
        }
    }
    let t = tensor_from_py(obj, &format!("{kind} `{input}`"))?;
    Ok(vec![save(out_dir, &format!("{kind}.{input}.npy"), &t)?])
}

/// Saves `t` as `out_dir/data/<name>`.
fn save(out_dir: &Path, name: &str, t: &mase_ir::Tensor) -> PyResult<PathBuf> {
    let dir = out_dir.join("data");
    std::fs::create_dir_all(&dir).map_err(|e| mase_err(format!("creating {}: {e}", dir.display())))?;
    let path = dir.join(name);
    mase_ir::npy::write_npy(&path, t).py()?;
    Ok(path)
}

/// `{input: files}` from a dict of paths, path lists or arrays.
fn data_files(
    d: Option<&Bound<'_, PyDict>>,
    out_dir: &Path,
    kind: &str,
) -> PyResult<BTreeMap<String, Vec<PathBuf>>> {
    let mut out = BTreeMap::new();
    for (k, v) in d.iter().flat_map(|d| d.iter()) {
        let name: String = k.extract()?;
        let files = files_of(&v, out_dir, kind, &name)?;
        out.insert(name, files);
    }
    Ok(out)
}

/// The sweep's data as files: arrays saved under `out_dir/data/`, labels as `labels.npy`.
fn files(
    out_dir: &Path,
    calibrate: Option<&Bound<'_, PyDict>>,
    eval: Option<&Bound<'_, PyDict>>,
    labels: Option<&Bound<'_, PyAny>>,
) -> PyResult<Data> {
    let labels = match labels {
        None => None,
        Some(l) => Some(match l.extract::<PathBuf>() {
            Ok(p) => p,
            Err(_) => {
                let (shape, data) = i64_from_py(l, "labels")?;
                let t = mase_ir::Tensor::from_i64(&shape, data)
                    .ok_or_else(|| mase_err(format!("labels: shape {shape:?} does not match its data")))?;
                save(out_dir, "labels.npy", &t)?
            }
        }),
    };
    Ok(Data {
        input_shapes: Default::default(),
        calibrate: data_files(calibrate, out_dir, "calibrate")?,
        eval: data_files(eval, out_dir, "eval")?,
        labels,
    })
}

/// The files [`sweep`] would read for `calibrate`, `eval` and `labels` (arrays saved as it saves
/// them), as `{"calibrate": {input: [path]}, "eval": {…}, "labels": path or None}`: what a sweep
/// spread over workers hands each of them, so that every worker reads the same files.
#[pyfunction]
#[pyo3(signature = (out_dir, calibrate=None, eval=None, labels=None))]
pub fn sweep_files<'py>(
    py: Python<'py>,
    out_dir: PathBuf,
    calibrate: Option<&Bound<'py, PyDict>>,
    eval: Option<&Bound<'py, PyDict>>,
    labels: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let data = files(&out_dir, calibrate, eval, labels)?;
    let out = PyDict::new(py);
    out.set_item("calibrate", to_py(py, &data.calibrate)?)?;
    out.set_item("eval", to_py(py, &data.eval)?)?;
    out.set_item("labels", to_py(py, &data.labels)?)?;
    Ok(out.into_any())
}

/// Runs a sweep of `model` into `out_dir` (the files `mase sweep` writes). `config` is SWEEP.toml
/// as a dict (a flow configuration plus a `sweep` table of axes) or its path; `calibrate` and
/// `eval` map graph inputs to `.npy` paths, lists of paths or arrays; `labels` is a path or an
/// integer array; `pnr` places and routes the K most accurate front points on an ECP5; `cache`
/// is the point cache directory (default `out_dir/cache`; shards may share one); `front_rank`
/// runs only that front point's verify/synth/pnr share and keeps the results as records for a
/// later call to collect (every point must be cached already). Returns `{"points": [...],
/// "front": [...], "evaluated", "cached", "verified", "synthesized", "routed", "steps", "sweep",
/// "out_dir"}`: every point as a dict (`id`, its settings, `metrics` or `error`,
/// `pareto`), the front's points most accurate first, and the sweep's description.
#[pyfunction]
#[pyo3(signature = (model, out_dir, config, input_shapes=None, calibrate=None, eval=None, labels=None, jobs=1, shard=None, verify=0, synth=0, pnr=0, cache=None, front_rank=None))]
#[allow(clippy::too_many_arguments)]
pub fn sweep<'py>(
    py: Python<'py>,
    model: PathBuf,
    out_dir: PathBuf,
    config: &Bound<'py, PyAny>,
    input_shapes: Option<BTreeMap<String, Vec<usize>>>,
    calibrate: Option<&Bound<'py, PyDict>>,
    eval: Option<&Bound<'py, PyDict>>,
    labels: Option<&Bound<'py, PyAny>>,
    jobs: usize,
    shard: Option<String>,
    verify: usize,
    synth: usize,
    pnr: usize,
    cache: Option<PathBuf>,
    front_rank: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let config = if config.is_instance_of::<PyDict>() {
        SweepConfig::from_table(table_from_py(Some(config), "sweep config")?, "sweep config", None).py()?
    } else {
        SweepConfig::from_file(&config.extract::<PathBuf>()?).py()?
    };
    let mut data = files(&out_dir, calibrate, eval, labels)?;
    data.input_shapes = input_shapes.unwrap_or_default();
    let shard = shard.as_deref().map(str::parse::<Shard>).transpose().py()?;
    let opts = SweepOptions {
        model,
        config,
        data,
        jobs: jobs.max(1),
        shard,
        verify,
        synth,
        pnr,
        out_dir: out_dir.clone(),
        progress: false,
        cache_dir: cache,
        front_rank,
    };
    let o = py.detach(|| mase_sweep::run_sweep(&opts)).py()?;
    let out = PyDict::new(py);
    out.set_item("out_dir", out_dir)?;
    out.set_item("sweep", to_py(py, &o.meta)?)?;
    out.set_item("points", to_py(py, &o.points)?)?;
    let front: Vec<_> = front_sorted(&o.points);
    out.set_item("front", to_py(py, &front)?)?;
    out.set_item("evaluated", o.evaluated)?;
    out.set_item("cached", o.cached)?;
    out.set_item("verified", to_py(py, &o.steps.verified)?)?;
    out.set_item("synthesized", to_py(py, &o.steps.synthesized)?)?;
    out.set_item("routed", to_py(py, &o.steps.routed)?)?;
    out.set_item("steps", to_py(py, &o.steps.tally)?)?;
    Ok(out.into_any())
}
