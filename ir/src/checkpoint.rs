//! Checkpoints: `PREFIX.json` (graph and metadata) and `PREFIX.safetensors` (weights).
