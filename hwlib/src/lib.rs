//! # mase-hwlib: the hardware component library
//!
//! Every parameterized SystemVerilog component of `rtl/` has a Rust twin implementing
//! [`Component`]; the [`registry`] lists them. The Rust side is the single source of truth the
//! rest of the flow uses: the emitter instantiates modules from it, `mase-sim` builds, drives and
//! checks them, the CLI lists and characterizes them.
//!
//! ## The contract (see [`component`])
//!
//! | item | meaning |
//! |---|---|
//! | [`Component::info`] | the fixed facts ([`Info`]): name (`relu` → module `mase_relu` in `rtl/mase_relu.sv`), description, SV parameters in declaration order ([`ParamSpec`]: name, default, doc; built from [`port`]'s groups), RTL dependencies, flags |
//! | [`Component::validate`] | rejects exactly what the RTL's parameter assertions reject, same text |
//! | [`Component::streams`] | valid/ready ports ([`StreamSpec`]): name, direction, lanes, width, signedness, beats per row |
//! | [`Component::memories`] + [`Component::layout_memory`] | ROMs ([`MemorySpec`]) and their word layout in datapath read order |
//! | [`Component::model`] | bit-accurate integer model: [`Stimulus`] → output [`StreamValues`] |
//! | [`Component::cost`] | [`Cost`]: latency, II per row, multipliers, memory bits |
//! | [`Component::test_params`] / [`Component::invalid_params`] | instances for the shared tests |
//! | [`Component::random_stimulus`] | random data for tests/bench (default uniform over full range) |
//!
//! Parameters are [`Params`] = `IndexMap<String, i64>` keyed by SV parameter name, in declaration
//! order, always *resolved* by [`resolve_params`] (defaults filled, unknown names rejected,
//! [`Component::validate`] run) before any other method sees them. String parameters exist only
//! for `.mem` paths and are named by [`MemorySpec::param`].
//!
//! Numerics: component models use `mase_ir::fixed` (integer codes, ap_fixed modes). Stream and
//! memory values are integer codes (`i64`), sign-interpreted for signed streams.
//!
//! ## RTL conventions (`docs/ARCHITECTURE.md` §5)
//!
//! - Ports: `clk`, `rst` (synchronous, active high), then per stream `<name>`, `<name>_valid`,
//!   `<name>_ready` in [`Component::streams`] order. Data ports are flat packed vectors, lane `i`
//!   at `[i*W +: W]`. A beat moves when valid && ready; valid never depends combinationally on
//!   ready; data is stable while valid && !ready.
//! - 2-D tensors stream as blocks of `PARALLELISM_DIM_1 × PARALLELISM_DIM_0`, dim 0 fastest,
//!   lane `i` = i-th element of the block in row-major order ([`block_stream_order`]).
//! - Parameter checks: one `generate` region under `` `ifndef SYNTHESIS `` whose
//!   elaboration-time `$fatal(1, "<message>", ...)` calls (so `verilator --lint-only` rejects a
//!   bad set without building a model) print exactly the strings [`Component::validate`]
//!   returns (use the helpers [`check_range`], [`check_divides`], [`check_equal`] so the wording
//!   is uniform). Handshake assertions (`assert property`) live under the same `ifndef` and are
//!   evaluated by Verilator's `--assert`.
//! - A header comment per module (what it computes, latency, II, which paths are cut) and a
//!   comment on every port and parameter; `verilator --lint-only -Wall` clean; Yosys 0.23
//!   `read_verilog -sv` + `synth_xilinx` clean. Memories: plain synchronous-read arrays loaded by
//!   `$readmemh(<STRING PARAM>, mem)`; file text from [`mem_file_text`]. String parameters are
//!   *untyped* (`parameter WEIGHT_MEM_FILE = ""`, load guarded by `if (WEIGHT_MEM_FILE != "")`):
//!   Yosys 0.23 rejects `parameter string` and `longint`.
//!
//! ## Adding a component (three places)
//!
//! 1. `rtl/mase_<name>.sv` following the conventions above.
//! 2. `hwlib/src/components/<name>.rs`: a unit struct implementing [`Component`] (its `const INFO`
//!    built from the [`port`] groups, checks and streams; its test instances from [`overrides`];
//!    its [`Component::resources`] from the mapping rules of [`resources`], LUT/FF fitted with
//!    `cargo run -p mase-sim --example resource_fit -- --only <name>`).
//! 3. One line `<name>::<Type>,` in the `registry!` list of [`components`] (it declares the
//!    module and registers the component), then regenerate the README's component table
//!    (`cargo run -- components --markdown`).
//!
//! The shared test (`sim/tests/components.rs`) then simulates every entry of
//! [`Component::test_params`] with random stalls, bit-exact against [`Component::model`]; the lint
//! test picks up the file by glob; the validate-vs-RTL test elaborates every
//! [`Component::invalid_params`] entry and expects the same rejection.

pub mod binding;
pub mod component;
pub mod components;
pub mod overrides;
pub mod port;
pub mod registry;
pub mod resources;

use std::path::PathBuf;

pub use binding::{op_role, Binding, NodeView, OpRole, Par};
pub use component::{
    data_out_0, uniform_stimulus, value_range, Component, Cost, Direction, Info, MemorySpec, ParamDefault,
    ParamSpec, Params, Stimulus, StreamSpec, StreamValues,
};
pub use registry::{lookup, registry};
pub use resources::Resources;

/// Resolves user overrides against a component's parameter list: unknown names are rejected
/// (naming the valid ones), missing parameters take their defaults (in declaration order, so a
/// [`ParamDefault::SameAs`] sees the resolved earlier value), then [`Component::validate`] runs.
pub fn resolve_params<S: AsRef<str>>(c: &dyn Component, overrides: &[(S, i64)]) -> Result<Params, String> {
    let specs = c.params();
    for (k, _) in overrides {
        let k = k.as_ref();
        if !specs.iter().any(|s| s.name == k) {
            let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
            return Err(format!(
                "component `{}` has no parameter `{k}`; its parameters are: {}",
                c.name(),
                names.join(", ")
            ));
        }
    }
    let p = fill_params(c, overrides)?;
    c.validate(&p).map_err(|e| format!("component `{}`: invalid parameters: {e}", c.name()))?;
    Ok(p)
}

/// The parameters of `c` with `overrides` and every other default, not validated (for a wrapper
/// component that validates its inner module's parameters itself, in that module's words).
/// Overrides of names `c` does not declare are ignored.
pub fn fill_params<S: AsRef<str>>(c: &dyn Component, overrides: &[(S, i64)]) -> Result<Params, String> {
    let mut p = Params::new();
    for s in c.params() {
        let given = overrides.iter().rev().find(|(k, _)| k.as_ref() == s.name).map(|(_, v)| *v);
        let v = match (given, s.default) {
            (Some(v), _) => v,
            (None, ParamDefault::Value(v)) => v,
            (None, ParamDefault::SameAs(o)) => *p.get(o).ok_or_else(|| {
                format!("component `{}`: default of `{}` refers to undeclared `{o}`", c.name(), s.name)
            })?,
        };
        p.insert(s.name.to_string(), v);
    }
    Ok(p)
}

/// Value of parameter `name` of resolved parameters. Panics when absent: resolved parameters hold
/// every declared name, so absence is a bug in the component, not a user error.
pub fn param(p: &Params, name: &str) -> i64 {
    match p.get(name) {
        Some(v) => *v,
        None => panic!("parameter `{name}` missing from resolved parameters (component bug)"),
    }
}

/// The values of `names` in resolved parameters `p`, as overrides for an inner module's
/// parameters (a wrapper passes its own shape and formats on unchanged).
pub fn copy_params<S: AsRef<str>>(p: &Params, names: impl IntoIterator<Item = S>) -> Vec<(String, i64)> {
    names.into_iter().map(|n| (n.as_ref().to_string(), param(p, n.as_ref()))).collect()
}

/// The SV module name of a component (`mase_<name>`).
pub fn module_name(c: &dyn Component) -> String {
    format!("mase_{}", c.name())
}

/// The directory of the hand-written RTL library (`<workspace>/rtl`).
pub fn rtl_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("rtl")
}

/// File names (in `rtl/`) a component needs, dependencies first, its own file last, each once.
/// Dependencies of registered components are followed transitively.
pub fn rtl_file_names(c: &dyn Component) -> Vec<String> {
    fn visit(file: &str, deps: &[&'static str], out: &mut Vec<String>, depth: usize) {
        if out.iter().any(|f| f == file) || depth > 32 {
            return;
        }
        for d in deps {
            let sub = registry().iter().find(|c| format!("mase_{}.sv", c.name()) == *d);
            visit(d, sub.map(|c| c.dependencies()).unwrap_or(&[]), out, depth + 1);
        }
        out.push(file.to_string());
    }
    let mut out = Vec::new();
    visit(&format!("mase_{}.sv", c.name()), c.dependencies(), &mut out, 0);
    out
}

/// Absolute paths of [`rtl_file_names`] under [`rtl_dir`].
pub fn rtl_files(c: &dyn Component) -> Vec<PathBuf> {
    rtl_file_names(c).into_iter().map(|f| rtl_dir().join(f)).collect()
}

/// Text of a `$readmemh` file: one line per word, lane 0 in the least significant bits, each
/// lane's two's complement code masked to `lane_width` bits, hex digits for the whole word.
pub fn mem_file_text(words: &[Vec<i64>], lane_width: u32) -> String {
    let mut out = String::new();
    for w in words {
        let bits = w.len() * lane_width as usize;
        let mut limbs = vec![0u64; bits.div_ceil(64).max(1)];
        for (i, &v) in w.iter().enumerate() {
            let mask = if lane_width >= 64 { u64::MAX } else { (1u64 << lane_width) - 1 };
            let code = (v as u64) & mask;
            let pos = i * lane_width as usize;
            limbs[pos / 64] |= code << (pos % 64);
            if pos % 64 + lane_width as usize > 64 {
                limbs[pos / 64 + 1] |= code >> (64 - pos % 64);
            }
        }
        let digits = bits.div_ceil(4).max(1);
        let mut hex = String::new();
        for d in (0..digits).rev() {
            let nib = (limbs[d * 4 / 64] >> (d * 4 % 64)) & 0xf;
            hex.push(char::from_digit(nib as u32, 16).unwrap_or('0'));
        }
        out.push_str(&hex);
        out.push('\n');
    }
    out
}

/// Stream order of a `rows × cols` row-major tensor sent as blocks of `p1 × p0` (dim 0 = cols
/// fastest, blocks row-major, lanes row-major within a block): element `k` of the stream is
/// tensor element `order[k]`. `p1` must divide `rows` and `p0` must divide `cols`.
pub fn block_stream_order(rows: usize, cols: usize, p1: usize, p0: usize) -> Vec<usize> {
    let mut order = Vec::with_capacity(rows * cols);
    for br in 0..rows / p1 {
        for bc in 0..cols / p0 {
            for r in 0..p1 {
                for c in 0..p0 {
                    order.push((br * p1 + r) * cols + bc * p0 + c);
                }
            }
        }
    }
    order
}

/// Memory bits of a `mase_pingpong_buffer` holding `words` words of `word_bits` bits: two banks of
/// `2^ceil(log2(words))` words (at least two). Linear and matmul double-buffer their operand rows
/// in it, transpose its tensors.
pub fn pingpong_bits(words: usize, word_bits: u64) -> u64 {
    2 * (1u64 << words.next_power_of_two().trailing_zeros().max(1)) * word_bits
}

/// Checks `lo <= p[name] <= hi`. Message (RTL must print the same):
/// `NAME must be between LO and HI, got V`.
pub fn check_range(p: &Params, name: &str, lo: i64, hi: i64) -> Result<(), String> {
    let v = param(p, name);
    if v < lo || v > hi {
        return Err(format!("{name} must be between {lo} and {hi}, got {v}"));
    }
    Ok(())
}

/// Checks that `p[a]` divides `p[b]` (and is positive). Message: `A (VA) must divide B (VB)`.
pub fn check_divides(p: &Params, a: &str, b: &str) -> Result<(), String> {
    let (va, vb) = (param(p, a), param(p, b));
    if va <= 0 || vb % va != 0 {
        return Err(format!("{a} ({va}) must divide {b} ({vb})"));
    }
    Ok(())
}

/// Checks the shape parameters of a block-streamed 2-D tensor port `PORT` (e.g. `DATA_IN_0`):
/// `PORT_TENSOR_SIZE_DIM_0/1` in 1..=2^20, `PORT_PARALLELISM_DIM_0/1` in 1..=1024, and each
/// parallelism dividing its tensor size, in that order (the order the RTL checks them in, so the
/// first failure prints the same message on both sides).
pub fn check_block_shape(p: &Params, port: &str) -> Result<(), String> {
    for d in 0..2 {
        check_range(p, &format!("{port}_TENSOR_SIZE_DIM_{d}"), 1, 1 << 20)?;
    }
    for d in 0..2 {
        check_range(p, &format!("{port}_PARALLELISM_DIM_{d}"), 1, 1024)?;
    }
    for d in 0..2 {
        check_divides(p, &format!("{port}_PARALLELISM_DIM_{d}"), &format!("{port}_TENSOR_SIZE_DIM_{d}"))?;
    }
    Ok(())
}

/// Checks `p[a] == p[b]`. Message: `A (VA) must equal B (VB)`.
pub fn check_equal(p: &Params, a: &str, b: &str) -> Result<(), String> {
    let (va, vb) = (param(p, a), param(p, b));
    if va != vb {
        return Err(format!("{a} ({va}) must equal {b} ({vb})"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_file_packs_lanes_lsb_first() {
        // two 4-bit lanes: lane0 = -1 (0xf), lane1 = 2 → word 0x2f
        assert_eq!(mem_file_text(&[vec![-1, 2]], 4), "2f\n");
        // 3-bit lanes across the 64-bit limb boundary: 22 lanes = 66 bits
        let w: Vec<i64> = (0..22).map(|i| i % 8).collect();
        let text = mem_file_text(std::slice::from_ref(&w), 3);
        let digits = text.trim();
        assert_eq!(digits.len(), 17);
        // decode and compare lane by lane
        let mut bits = Vec::new();
        for ch in digits.chars().rev() {
            let n = ch.to_digit(16).unwrap();
            for b in 0..4 {
                bits.push((n >> b) & 1);
            }
        }
        for (i, &v) in w.iter().enumerate() {
            let got: i64 = (0..3).map(|b| (bits[i * 3 + b] as i64) << b).sum();
            assert_eq!(got, v, "lane {i}");
        }
    }

    #[test]
    fn block_order_is_a_permutation_in_block_order() {
        let o = block_stream_order(4, 6, 2, 3);
        assert_eq!(&o[..6], &[0, 1, 2, 6, 7, 8]);
        let mut s = o.clone();
        s.sort_unstable();
        assert_eq!(s, (0..24).collect::<Vec<_>>());
    }
}
