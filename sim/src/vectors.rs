//! Golden vectors of an emitted project as `.npy` files, for testbenches outside mase-rs (the
//! project's cocotb testbench `tb/test_top.py` reads them).
//!
//! `DIR/<port>.npy` per top port: int64 integer codes shaped `[inferences, *shape]` (the
//! tensor's shape per inference, streamed row-major); inputs are the stimulus in the port's
//! format, outputs the golden model's codes for it (the golden model is the bit-exact model of
//! the RTL). `DIR/vectors.json` describes them: per port its name, graph tensor, direction,
//! file, dtype, shape per inference, element format (`width`, `frac`, `signed`, and the
//! `format` name such as `s8.5`), lanes and beats per inference; the number of inferences; and
//! the design digest ([`mase_emit::cocotb::design_digest`]) of the project files they belong to.

use std::path::{Path, PathBuf};

use mase_emit::cocotb::{design_digest, direction_name};
use mase_emit::design::PortDir;
use mase_ir::Tensor;

use crate::design_sim::Project;
use crate::error::{Result, SimError};

/// Writes the vectors of `p` into `dir` (created if needed; only `<port>.npy` and
/// `vectors.json` are written there): `inputs` per input port and `outputs` per output port (in
/// port order, inferences back to back). Returns the files written.
pub fn write_vectors(
    p: &Project,
    inputs: &[Vec<i64>],
    outputs: &[Vec<i64>],
    dir: &Path,
) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(SimError::io("creating", dir))?;
    let (mut k_in, mut k_out) = (0, 0);
    let mut ports = Vec::new();
    let mut written = Vec::new();
    let mut inferences = None;
    for port in &p.design.ports {
        let codes = match port.dir {
            PortDir::Input => {
                k_in += 1;
                inputs.get(k_in - 1)
            }
            PortDir::Output => {
                k_out += 1;
                outputs.get(k_out - 1)
            }
        }
        .ok_or_else(|| SimError::Invalid(format!("write_vectors: no codes for port {}", port.name)))?;
        let n = codes.len() / port.numel();
        if codes.len() != n * port.numel() || *inferences.get_or_insert(n) != n {
            return Err(SimError::Invalid(format!(
                "write_vectors: port {} has {} codes, not {} inferences of {} elements",
                port.name,
                codes.len(),
                inferences.unwrap_or(n),
                port.numel()
            )));
        }
        let mut shape = vec![n];
        shape.extend(&port.shape);
        let t = Tensor::from_i64(&shape, codes.clone())
            .ok_or_else(|| SimError::Invalid(format!("write_vectors: shape of port {}", port.name)))?;
        let file = format!("{}.npy", port.name);
        let path = dir.join(&file);
        mase_ir::npy::write_npy(&path, &t).map_err(|e| SimError::Invalid(e.to_string()))?;
        written.push(path);
        ports.push(serde_json::json!({
            "port": port.name,
            "tensor": port.tensor,
            "direction": direction_name(port.dir),
            "file": file,
            "dtype": "int64",
            "shape": port.shape,
            "width": port.format.width,
            "frac": port.format.frac,
            "signed": port.format.signed,
            "format": mase_hwlib::binding::fmt_name(&port.format),
            "lanes": port.lanes,
            "beats_per_inference": port.numel() / port.lanes,
        }));
    }
    let digest = design_digest(&p.dir).map_err(|e| SimError::Invalid(e.to_string()))?;
    let index = serde_json::json!({
        "top": p.design.top,
        "graph": p.design.graph,
        "inferences": inferences.unwrap_or(0),
        "layout": "each file: int64 codes [inferences, *shape]; value = code * 2^-frac",
        "design_sha256": digest,
        "ports": ports,
    });
    let path = dir.join("vectors.json");
    let text = serde_json::to_string_pretty(&index).map_err(|e| SimError::Invalid(e.to_string()))? + "\n";
    std::fs::write(&path, text).map_err(SimError::io("writing", &path))?;
    written.push(path);
    Ok(written)
}
