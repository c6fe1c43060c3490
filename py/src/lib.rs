//! The native module `mase_rs._native` of the `mase_rs` Python package: MASE's API shape over
//! the mase-rs crates. [`graph`] (MaseGraph, nodes, metadata), [`passes`] (passes by name,
//! in-memory calibration, project emission), [`flow`] (the one-call flow), [`sweep`] (design-space sweeps), [`sim`] (a Verilated
//! design behind a steppable Rust harness), [`convert`] (numpy, dicts, JSON), [`error`]
//! (exceptions carrying the Rust messages). The Python package in `python/mase_rs/` gives these
//! MASE's names and holds the coroutine scheduler of the cocotb-style tests.

pub mod convert;
pub mod error;
pub mod flow;
pub mod graph;
pub mod passes;
pub mod sim;
pub mod sweep;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("MaseError", py.get_type::<error::MaseError>())?;
    m.add("SimulationError", py.get_type::<error::SimulationError>())?;
    m.add_class::<graph::PyGraph>()?;
    m.add_class::<graph::PyNode>()?;
    m.add_class::<graph::MaseMetadata>()?;
    m.add_class::<sim::NativeSim>()?;
    m.add_function(wrap_pyfunction!(passes::pass_list, m)?)?;
    m.add_function(wrap_pyfunction!(passes::run_pass, m)?)?;
    m.add_function(wrap_pyfunction!(passes::add_software_metadata, m)?)?;
    m.add_function(wrap_pyfunction!(passes::emit_project, m)?)?;
    m.add_function(wrap_pyfunction!(flow::flow, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep_files, m)?)?;
    m.add_function(wrap_pyfunction!(sim::sim_build_design, m)?)?;
    m.add_function(wrap_pyfunction!(sim::sim_build_component, m)?)?;
    m.add_function(wrap_pyfunction!(sim::component_stimulus, m)?)?;
    m.add_function(wrap_pyfunction!(sim::component_list, m)?)?;
    Ok(())
}
