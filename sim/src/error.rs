//! Errors of the simulation layer. Each names what failed (tool, build, stream, cycle, element).

use std::path::PathBuf;

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, SimError>;

/// What can go wrong when finding tools, building, loading or simulating a design.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// No Verilator could be found or provisioned.
    #[error("Verilator not available: {0}")]
    NoVerilator(String),
    /// A synthesis or place-and-route tool (Yosys, nextpnr-ecp5) could not be found or
    /// provisioned.
    #[error("{tool} not available: {reason}")]
    ToolUnavailable {
        /// The tool.
        tool: &'static str,
        /// Why, and how to get it.
        reason: String,
    },
    /// A program the build needs is not installed.
    #[error("`{tool}` not found: {why}. Install it, e.g. `{install}`")]
    MissingTool {
        /// The program (`make`, `g++`, `pip`, `perl`, `python3`).
        tool: String,
        /// What needs it.
        why: String,
        /// How to install it on Debian/Ubuntu.
        install: String,
    },
    /// A command could not be started or failed.
    #[error("`{cmd}` failed: {detail}")]
    Command {
        /// The command line (abbreviated).
        cmd: String,
        /// Exit status and the tail of its output.
        detail: String,
    },
    /// A file system operation failed.
    // The cause is part of the message, so it is not also exposed as `source` (a report that
    // walks the chain would print it twice).
    #[error("{op} {}: {error}", path.display())]
    Io {
        /// What was attempted.
        op: &'static str,
        /// On which path.
        path: PathBuf,
        /// The underlying error.
        error: std::io::Error,
    },
    /// The shared library could not be loaded or lacks a symbol.
    #[error("loading {path}: {detail}")]
    Load {
        /// The library.
        path: PathBuf,
        /// The loader's message.
        detail: String,
    },
    /// The model stopped ($fatal, $stop or a failed assertion) during a cycle.
    #[error("simulation stopped at cycle {cycle}: {log}")]
    Stopped {
        /// Cycle (rising edges since the start) at which it stopped.
        cycle: u64,
        /// What the model printed (assertion / $fatal messages).
        log: String,
    },
    /// The design stopped making progress.
    #[error("deadlock at cycle {cycle}: {detail}")]
    Deadlock {
        /// Cycle at which the watchdog fired.
        cycle: u64,
        /// Which streams were stalled and how far each got.
        detail: String,
    },
    /// The design broke the stream protocol (an offered output beat was withdrawn or changed
    /// while back-pressured).
    #[error("stream `{stream}` broke the valid/ready protocol at cycle {cycle}: {detail}")]
    Protocol {
        /// The stream.
        stream: String,
        /// Cycle of the violation.
        cycle: u64,
        /// What happened.
        detail: String,
    },
    /// Invalid request: unknown component, rejected parameters, bad stimulus, unknown port.
    #[error("{0}")]
    Invalid(String),
}

impl SimError {
    /// An [`SimError::Io`] constructor for `map_err`.
    pub fn io(op: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> SimError {
        let path = path.into();
        move |error| SimError::Io { op, path, error }
    }
}
