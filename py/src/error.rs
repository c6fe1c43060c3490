//! Rust errors as Python exceptions: every error of the flow becomes a `mase_rs.MaseError`
//! carrying the same message the CLI prints (node, op, file, parameter, what is supported);
//! simulation failures (mismatches, deadlocks, `$fatal`, protocol violations) a
//! `mase_rs.sim.SimulationError`, a subclass.

use pyo3::exceptions::PyException;
use pyo3::prelude::*;

pyo3::create_exception!(
    _native,
    MaseError,
    PyException,
    "An error of the mase-rs flow; the message names the node, op, file or parameter and what is supported."
);
pyo3::create_exception!(
    _native,
    SimulationError,
    MaseError,
    "A simulation failed: a build error, `$fatal`/assertion in the RTL, a deadlock, a stream protocol violation or a scoreboard mismatch."
);

/// A `MaseError` with this message.
pub fn mase_err(msg: impl std::fmt::Display) -> PyErr {
    MaseError::new_err(msg.to_string())
}

/// A `SimulationError` with this message.
pub fn sim_err(msg: impl std::fmt::Display) -> PyErr {
    SimulationError::new_err(msg.to_string())
}

/// `Result` conversions for the crates' error types.
pub trait IntoPy<T> {
    /// The value, or the error as a Python exception.
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for mase_ir::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(mase_err)
    }
}

impl<T> IntoPy<T> for mase_sweep::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(mase_err)
    }
}

impl<T> IntoPy<T> for mase_sim::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(sim_err)
    }
}
