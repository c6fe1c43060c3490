//! The graph-level golden model: the stitched design executed with each instance's Rust model
//! (the same bit-exact models the component tests hold the RTL to), glue included.

use mase_hwlib::{Stimulus, StreamValues};
use mase_ir::fixed::from_f64;
use mase_ir::tensor::Tensor;
use mase_ir::{Error, Result};

use crate::design::{Design, Endpoint, PortDir};

/// Codes of a float tensor in the format of input port `port` (row-major), checking its shape.
pub fn quantize_input(d: &Design, port: usize, t: &Tensor) -> Result<Vec<i64>> {
    let p = &d.ports[port];
    let numel = p.numel();
    if t.len() != numel {
        return Err(Error::Config(format!(
            "input `{}` ({}): got {} elements (shape {:?}); the design takes shape {:?}",
            p.tensor,
            p.name,
            t.len(),
            t.shape(),
            p.shape
        )));
    }
    Ok(match t {
        Tensor::F32(a) => a.iter().map(|x| from_f64(f64::from(*x), &p.format)).collect(),
        other => other.to_f64().iter().map(|x| from_f64(*x, &p.format)).collect(),
    })
}

/// Runs the design on input codes (one vector per input port, in port order, possibly several
/// inferences back to back) and returns the codes of every output port.
pub fn run(d: &Design, inputs: &[Vec<i64>]) -> Result<Vec<Vec<i64>>> {
    let n_in = d.ports.iter().filter(|p| p.dir == PortDir::Input).count();
    if inputs.len() != n_in {
        return Err(Error::Config(format!("the design has {n_in} inputs, {} given", inputs.len())));
    }
    let mut wire_vals: Vec<Option<Vec<i64>>> = vec![None; d.wires.len()];
    for (w, wire) in d.wires.iter().enumerate() {
        if let Endpoint::Top(p) = wire.from {
            wire_vals[w] = Some(inputs[p].clone());
        }
    }
    let mut done = vec![false; d.instances.len()];
    loop {
        let mut progressed = false;
        for (i, inst) in d.instances.iter().enumerate() {
            if done[i] {
                continue;
            }
            let ins: Vec<usize> = (0..d.wires.len())
                .filter(|&w| matches!(&d.wires[w].to, Endpoint::Inst(j, _) if *j == i))
                .collect();
            if ins.iter().any(|&w| wire_vals[w].is_none()) {
                continue;
            }
            let mut stim = Stimulus::default();
            for &w in &ins {
                if let Endpoint::Inst(_, port) = &d.wires[w].to {
                    stim.inputs.insert(port.clone(), wire_vals[w].clone().unwrap_or_default());
                }
            }
            for (m, v) in &inst.memories {
                stim.memories.insert(m.clone(), v.clone());
            }
            let out: StreamValues = inst.component().model(&inst.params, &stim).map_err(|e| {
                Error::Config(format!("golden model of instance {} ({}): {e}", inst.name, inst.component))
            })?;
            for (w, wire) in d.wires.iter().enumerate() {
                if let Endpoint::Inst(j, port) = &wire.from {
                    if *j == i {
                        let v = out.get(port).ok_or_else(|| {
                            Error::Config(format!("golden model of {} produced no stream {port}", inst.name))
                        })?;
                        wire_vals[w] = Some(v.clone());
                    }
                }
            }
            done[i] = true;
            progressed = true;
        }
        if !progressed {
            break;
        }
    }
    if let Some(i) = done.iter().position(|d| !d) {
        return Err(Error::Config(format!(
            "golden model: instance {} never received its inputs",
            d.instances[i].name
        )));
    }
    d.ports
        .iter()
        .enumerate()
        .filter(|(_, p)| p.dir == PortDir::Output)
        .map(|(k, p)| {
            d.wires
                .iter()
                .position(|w| w.to == Endpoint::Top(k))
                .and_then(|w| wire_vals[w].clone())
                .ok_or_else(|| Error::Config(format!("golden model: output {} is not driven", p.name)))
        })
        .collect()
}
