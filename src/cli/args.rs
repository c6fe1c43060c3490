//! Parsing of the small value syntaxes the commands share: `NAME=1x8x128` shapes and
//! `NAME=FILE.npy` inputs and calibration files.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use mase_ir::{MaseGraph, Tensor};

/// Parses `--input-shape NAME=DIMS` values (`DIMS` like `1x8x128`).
pub fn input_shapes(specs: &[String]) -> anyhow::Result<BTreeMap<String, Vec<usize>>> {
    let mut out = BTreeMap::new();
    for s in specs {
        let Some((name, dims)) = s.split_once('=') else {
            bail!("--input-shape '{s}': expected NAME=DIMS, e.g. input=1x8x128");
        };
        let dims: Vec<usize> = dims
            .split(['x', 'X', ','])
            .map(|d| d.trim().parse::<usize>())
            .collect::<Result<_, _>>()
            .with_context(|| {
                format!("--input-shape '{s}': dimensions must be positive integers like 1x8x128")
            })?;
        if dims.contains(&0) {
            bail!("--input-shape '{s}': dimensions must be at least 1");
        }
        if out.insert(name.to_string(), dims).is_some() {
            bail!("--input-shape gives '{name}' twice");
        }
    }
    Ok(out)
}

/// Parses `--calibrate NAME=FILE.npy` values: files per graph input name, in the order given
/// (a name may repeat; each file may stack several inferences).
pub fn calibration_files(specs: &[String]) -> anyhow::Result<BTreeMap<String, Vec<PathBuf>>> {
    named_files("--calibrate", specs)
}

/// Parses `FLAG NAME=FILE.npy` values (`--calibrate`, `--eval`): files per graph input name, in
/// the order given.
pub fn named_files(flag: &str, specs: &[String]) -> anyhow::Result<BTreeMap<String, Vec<PathBuf>>> {
    let mut out: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for s in specs {
        let Some((name, file)) = s.split_once('=') else {
            bail!("{flag} '{s}': expected NAME=FILE.npy (NAME a graph input)");
        };
        out.entry(name.to_string()).or_default().push(PathBuf::from(file));
    }
    Ok(out)
}

/// Parses `--input NAME=FILE.npy` values and reads the files, each as the element type of
/// `graph`'s input of that name or ONNX name, keyed by the input's name (an unknown name is read
/// as float32 and refused by the run, which lists the inputs).
pub fn npy_inputs(specs: &[String], graph: &MaseGraph) -> anyhow::Result<HashMap<String, Tensor>> {
    let mut out = HashMap::new();
    for s in specs {
        let Some((name, file)) = s.split_once('=') else {
            bail!("--input '{s}': expected NAME=FILE.npy");
        };
        // The ONNX name of an input whose IR name differs (an exporter's `x.461`) is accepted too.
        let name = graph.input_name_for(name).unwrap_or(name);
        let dtype = graph.input_dtype(name).unwrap_or(mase_ir::tensor::DType::F32);
        let t = mase_ir::npy::read_npy_as(Path::new(file), dtype)
            .with_context(|| format!("--input {name}: graph input '{name}' is {}", dtype.name()))?;
        if out.insert(name.to_string(), t).is_some() {
            bail!("--input gives '{name}' twice");
        }
    }
    Ok(out)
}
