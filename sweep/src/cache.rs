//! The cache of finished points: `DIR/cache/<hash>.json` holds a point's figures (or its
//! error) under a SHA-256 of everything its result depends on: this crate's version, the model
//! bytes, the input shapes, the base configuration, the bytes of the calibration, evaluation
//! and label files, and the point's settings (not its index, so an extended sweep, whose
//! indices differ, reuses the points it shares with the old one).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{io, Result};
use crate::eval::Metrics;
use crate::point::PointSpec;

/// A cached outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Figures, when the point could be built.
    pub metrics: Option<Metrics>,
    /// Why it could not.
    pub error: Option<String>,
}

/// Incremental SHA-256 with length-prefixed fields (so field boundaries cannot shift).
#[derive(Default, Clone)]
pub struct Key(Sha256);

impl Key {
    /// Adds a field.
    pub fn field(&mut self, bytes: impl AsRef<[u8]>) -> &mut Self {
        let b = bytes.as_ref();
        self.0.update((b.len() as u64).to_le_bytes());
        self.0.update(b);
        self
    }

    /// Adds the bytes of a file.
    pub fn file(&mut self, path: &Path) -> Result<&mut Self> {
        let bytes = std::fs::read(path).map_err(io("reading", path))?;
        self.field(path.to_string_lossy().as_bytes());
        Ok(self.field(bytes))
    }

    /// The digest as hex.
    pub fn hex(&self) -> String {
        self.0.clone().finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The key of a point under a sweep key.
pub fn point_key(sweep_key: &str, spec: &PointSpec) -> String {
    let settings = serde_json::json!({
        "width": spec.width,
        "weight_width": spec.weight_width,
        "weight_granularity": spec.weight_granularity,
        "rate": spec.rate,
        "ops": spec.ops,
    });
    Key::default().field(sweep_key).field(settings.to_string()).hex()
}

/// A cache directory.
#[derive(Debug)]
pub struct Cache {
    dir: PathBuf,
    /// The keys the directory held when opened: a point absent here is not looked up, which
    /// saves a failing file open per new point.
    present: HashSet<String>,
    /// Whether the directory is known to exist (stores create it once).
    created: AtomicBool,
}

impl Cache {
    /// The cache in `dir` (created on the first store).
    pub fn new(dir: impl Into<PathBuf>) -> Cache {
        let dir = dir.into();
        let present: HashSet<String> = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.flatten()
                    .filter_map(|e| {
                        e.file_name().to_str().and_then(|n| n.strip_suffix(".json")).map(String::from)
                    })
                    .filter(|k| !k.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default();
        let created = AtomicBool::new(dir.is_dir());
        Cache { dir, present, created }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The entry under `key`, if there is a readable one.
    pub fn get(&self, key: &str) -> Option<Entry> {
        if !self.present.contains(key) {
            return None;
        }
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Stores an entry (written to a temporary file and renamed, so a reader never sees half
    /// of one and parallel shards may share the directory).
    pub fn put(&self, key: &str, e: &Entry) -> Result<()> {
        if !self.created.load(Ordering::Relaxed) {
            std::fs::create_dir_all(&self.dir).map_err(io("creating", &self.dir))?;
            self.created.store(true, Ordering::Relaxed);
        }
        let text = serde_json::to_string(e).expect("entries serialize");
        let tmp = self.dir.join(format!(".{key}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, text).map_err(io("writing", &tmp))?;
        let dst = self.path(key);
        std::fs::rename(&tmp, &dst).map_err(io("renaming", &dst))
    }

    /// Copies every entry of `other` that this cache lacks.
    pub fn absorb(&self, other: &Path) -> Result<usize> {
        let Ok(rd) = std::fs::read_dir(other) else { return Ok(0) };
        std::fs::create_dir_all(&self.dir).map_err(io("creating", &self.dir))?;
        let mut n = 0;
        for e in rd.flatten() {
            let name = e.file_name();
            let is_entry =
                name.to_string_lossy().ends_with(".json") && !name.to_string_lossy().starts_with('.');
            let dst = self.dir.join(&name);
            if is_entry && !dst.exists() {
                std::fs::copy(e.path(), &dst).map_err(io("copying", e.path()))?;
                n += 1;
            }
        }
        Ok(n)
    }
}
