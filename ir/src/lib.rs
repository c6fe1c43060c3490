//! # mase-ir: the MaseGraph intermediate representation
//!
//! A MaseGraph is a DAG of [`Node`]s held in an arena ([`MaseGraph::nodes`]) and addressed by
//! [`NodeId`]. Every node computes one tensor from the tensors of its inputs; its computation is a
//! closed [`Op`] enum with typed attributes, and it carries typed metadata ([`NodeMeta`]) with the
//! `common` / `software` / `hardware` tree of the MASE metadata model.
//!
//! Modules: [`graph`] (storage, editing, validation), [`op`] (the op set), [`tensor`] (weights
//! and values), [`metadata`] (the metadata tree), [`pass`] (pass trait and registry),
//! [`passes`] (analysis and transform passes), [`onnx`] (import), [`interp`] (float reference
//! interpreter), [`checkpoint`] (JSON + safetensors), [`draw`] (SVG and DOT), [`fixed`]
//! (runtime-width fixed-point numerics), [`npy`] (numpy files).

pub mod checkpoint;
pub mod draw;
pub mod error;
pub mod fixed;
pub mod graph;
pub mod interp;
pub mod metadata;
pub mod npy;
pub mod onnx;
pub mod op;
pub mod pass;
pub mod passes;
pub mod quant;
pub mod tensor;

pub use error::{Error, Result};
pub use graph::{MaseGraph, Node, NodeId, NodeKind};
pub use metadata::{MaseType, NodeMeta};
pub use op::{Op, OpKind};
pub use tensor::Tensor;
