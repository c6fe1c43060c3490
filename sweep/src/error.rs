//! The sweep's error type: configuration mistakes (named file, table and valid keys), errors of
//! the flow and the simulator passed through, and file errors naming the path.

use std::path::PathBuf;

/// Everything a sweep can fail with.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A bad `[sweep]` table, option or shard/merge request; the message says what and where.
    #[error("{0}")]
    Config(String),
    /// From import, quantization, the hardware passes or the golden model.
    #[error(transparent)]
    Flow(#[from] mase_ir::Error),
    /// From a Verilator run (`--verify`).
    #[error(transparent)]
    Sim(#[from] mase_sim::SimError),
    /// Reading or writing a file.
    #[error("{op} {}: {source}", path.display())]
    Io {
        /// What was being done (`reading`, `writing`, …).
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// The sweep's result type.
pub type Result<T> = std::result::Result<T, SweepError>;

/// An I/O error constructor for `map_err`, naming the operation and the path.
pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> SweepError {
    let path = path.into();
    move |source| SweepError::Io { op, path, source }
}
