//! ONNX import (pure Rust: prost code generated from a vendored onnx.proto by protox).
