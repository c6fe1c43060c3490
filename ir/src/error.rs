//! Error type of the IR crate. Every error names what went wrong and where: the file, the node
//! (its name, its mase op and, for imported nodes, the ONNX node it came from), the pass, the
//! attribute; and says what is supported where that helps the user fix the input.

use std::path::PathBuf;

/// Result alias used throughout the IR crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, with enough context to find it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A problem with a file the user gave (missing, truncated, malformed).
    #[error("{}: {msg}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        msg: String,
    },
    /// An I/O failure on a file.
    // The message already includes the cause, so it is not also exposed as `source` (a report
    // that walks the chain would print it twice).
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        error: std::io::Error,
    },
    /// A problem located at one node of the graph.
    #[error("node '{node}' ({op}{}): {msg}", origin.as_ref().map(|o| format!(", from ONNX node '{o}'")).unwrap_or_default())]
    Node {
        /// Node name.
        node: String,
        /// The node's mase op (or ONNX op type while importing).
        op: String,
        /// The ONNX node the node was imported from, when known.
        origin: Option<String>,
        /// What is wrong.
        msg: String,
    },
    /// An error raised while a named pass ran.
    #[error("in pass '{pass}': {error}")]
    InPass {
        /// The pass name.
        pass: String,
        /// The error the pass raised (in the message, not exposed as `source`, as for `Io`).
        error: Box<Error>,
    },
    /// Bad pass arguments or configuration (a TOML key, a value out of range).
    #[error("configuration: {0}")]
    Config(String),
    /// The graph breaks an invariant (cycle, undefined use, shape mismatch).
    #[error("invalid graph: {0}")]
    Invalid(String),
    /// Something the tool does not support yet, with what it does support.
    #[error("unsupported: {0}")]
    Unsupported(String),
}

impl Error {
    /// An error at a node, named by node name and op.
    pub fn node(node: impl Into<String>, op: impl Into<String>, msg: impl Into<String>) -> Self {
        Error::Node { node: node.into(), op: op.into(), origin: None, msg: msg.into() }
    }

    /// An error about a file.
    pub fn file(path: impl Into<PathBuf>, msg: impl Into<String>) -> Self {
        Error::File { path: path.into(), msg: msg.into() }
    }

    /// An I/O error on a file.
    pub fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        Error::Io { path: path.into(), error }
    }

    /// Wraps this error with the name of the pass that raised it.
    pub fn in_pass(self, pass: &str) -> Self {
        Error::InPass { pass: pass.to_string(), error: Box::new(self) }
    }
}
