//! The cache of finished points: the files of `DIR/cache/` hold each point's figures (or its
//! error) under a SHA-256 of everything its result depends on: this crate's version, the model
//! bytes, the input shapes, the base configuration, the bytes of the calibration, evaluation
//! and label files, and the point's settings (not its index, so an extended sweep, whose
//! indices differ, reuses the points it shares with the old one).

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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

/// One line of a cache file.
#[derive(Serialize, Deserialize)]
struct Line {
    key: String,
    entry: Entry,
}

/// A cache directory: `*.jsonl` files, one per sweep run that stored points, each line a point's
/// key and entry. A run appends to its own file (one file per run instead of one per point:
/// creating files is what a sweep's output costs most, on a busy or networked file system), so
/// runs and shards sharing the directory never write the same file; a line cut short by a killed
/// run is skipped when read.
#[derive(Debug)]
pub struct Cache {
    dir: PathBuf,
    /// The entries the directory held when opened.
    entries: HashMap<String, Entry>,
    /// This run's file, opened on the first store.
    file: Mutex<Option<std::fs::File>>,
}

/// Name of this run's cache file: unique per process and start time.
fn run_file_name() -> String {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format!("run-{}-{}.jsonl", std::process::id(), t.as_nanos())
}

fn cache_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "jsonl")).collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

impl Cache {
    /// The cache in `dir` (created on the first store), with every entry its files hold.
    pub fn new(dir: impl Into<PathBuf>) -> Cache {
        let dir = dir.into();
        let mut entries = HashMap::new();
        for f in cache_files(&dir) {
            let Ok(text) = std::fs::read_to_string(&f) else { continue };
            for line in text.lines() {
                if let Ok(l) = serde_json::from_str::<Line>(line) {
                    entries.insert(l.key, l.entry);
                }
            }
        }
        Cache { dir, entries, file: Mutex::new(None) }
    }

    /// The entry under `key`, if the directory held one when opened.
    pub fn get(&self, key: &str) -> Option<Entry> {
        self.entries.get(key).cloned()
    }

    /// Stores an entry: one line appended to this run's file.
    pub fn put(&self, key: &str, e: &Entry) -> Result<()> {
        let line = serde_json::to_string(&Line { key: key.to_string(), entry: e.clone() })
            .expect("entries serialize")
            + "\n";
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if file.is_none() {
            std::fs::create_dir_all(&self.dir).map_err(io("creating", &self.dir))?;
            let path = self.dir.join(run_file_name());
            let f = std::fs::OpenOptions::new().create_new(true).append(true).open(&path);
            *file = Some(f.map_err(io("creating", &path))?);
        }
        let f = file.as_mut().expect("opened above");
        f.write_all(line.as_bytes()).map_err(io("writing", self.dir.join("*.jsonl")))
    }

    /// Copies every cache file of `other` that this cache lacks (file names are unique per run).
    pub fn absorb(&self, other: &Path) -> Result<usize> {
        let files = cache_files(other);
        if files.is_empty() {
            return Ok(0);
        }
        std::fs::create_dir_all(&self.dir).map_err(io("creating", &self.dir))?;
        let mut n = 0;
        for f in files {
            let dst = self.dir.join(f.file_name().expect("listed files have names"));
            if !dst.exists() {
                std::fs::copy(&f, &dst).map_err(io("copying", &f))?;
                n += 1;
            }
        }
        Ok(n)
    }
}
