//! The flow configuration (FLOW.toml of `mase flow --config`, [`FlowConfig`]) and its hardware
//! section ([`HwConfig`]: `[hardware]` in FLOW.toml, or the whole of a HW.toml given to
//! `mase emit --config`), as typed structs: an unknown key is an error naming the file, the
//! table and the valid keys ([`mase_ir::pass::typed`]); defaults are the structs' defaults.
//!
//! ```toml
//! [passes.quantize]           # a MASE-style quantize config (mase_ir::quant::config); or:
//! [passes.auto_precision]     # formats from calibration statistics (defaults shown)
//! width = 16                  # activations
//! weight_width = 8
//! bias_width = 8
//! range = "min_max"           # or "quantile", "n_sigma"
//! weight_granularity = "per_tensor"  # or "per_channel"
//! [passes.auto_precision.ops.softmax]
//! width = 12                  # optional: activation width of every node of a mase op
//! [calibration]
//! inputs = { x = ["x.npy"] }  # data per graph input (relative to the file; several
//!                             # inferences may be stacked along the batch axis)
//! samples = 4                 # seeded random inputs when no data is given
//! ```
//!
//! ```toml
//! [hardware]
//! target_ii = 8192            # cycles per inference the slowest stage may take (optional)
//! target_ii_per_row = 1024    # or: the same per row of the graph input
//! multiplier_budget = 64      # or: the most multipliers the design may use (optional)
//! lanes = 4                   # default elements per beat when neither is given
//! top = "top"                 # name of the emitted top module
//! clock_mhz = 100             # optional: the intended clock; figures also in inferences/s and µs
//! [hardware.nodes.attention_self_query_linear]
//! parallelism = [4, 2]        # fixed: [p_in, p_out] for linear, [lanes] for the others
//! [hardware.nodes.attention_output_LayerNorm_LayerNormalization]
//! fold = 4                    # cycles per beat (layer_norm 1, 3.., softmax 1, 2): fewer multipliers
//! [hardware.nodes.Relu]
//! external = "my_relu.toml"  # the user's module (EXTERNAL toolchain, see crate::external)
//! [[hardware.devices]]        # optional: the design spans devices in this order
//! name = "fpga0"
//! multipliers = 128           # DSP multipliers this device offers
//! memory_bits = 20_000_000    # on-chip memory bits
//! lut = 200_000               # optional: LUTs (resource estimate)
//! link_bits_per_cycle = 64    # its link to the next device (every entry but the last)
//! link_latency_cycles = 40
//! [[hardware.devices]]
//! name = "fpga1"
//! part = "LFE5U-85F"          # or a named part (crate::parts, `mase parts`): its multipliers,
//! lut = 60_000                # memory_bits and lut, each overridden by a key given beside it
//! ```
//!
//! `clock_mhz` changes no hardware: with it, `report.json` adds `clock_mhz`, `inferences_per_s`
//! and `latency_us` next to the cycle figures ([`crate::report::real_time`]), and the project
//! README, `mase flow` and `mase sim` show them. A device names either a `part` or its
//! `multipliers` and `memory_bits`; an unknown part is an error naming the file and the device
//! and listing the known parts. A part's `memory_bits` is its block RAM plus UltraRAM (see
//! [`crate::parts`] for why distributed RAM is left out).
//!
//! Rate selection: with `[[hardware.devices]]`, the `partition_devices` pass ([`crate::partition`])
//! chooses the cuts and every node's parallelism for the smallest system ii the devices hold
//! (`target_ii` then fixes the ii; `multiplier_budget` caps the whole system). Otherwise, with `target_ii`, every node takes the fewest multipliers (then the fewest
//! lanes) that meet it, folded forms of `layer_norm` and `softmax` included (they time-share
//! multipliers at a lower rate); with `multiplier_budget`, the smallest target whose design fits the
//! budget is searched; with neither, the target is the slowest node's rate at `lanes`
//! elements per beat (`lanes × lanes` multipliers for a linear), so that node sets the pace and
//! every other node shrinks to the parallelism that keeps up with it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use mase_ir::pass::typed;
use mase_ir::quant::auto::AutoOptions;
use mase_ir::{Error, Result};

/// A flow configuration: every section optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// `[passes.quantize]` / `[passes.auto_precision]`.
    #[serde(default)]
    pub passes: FlowPasses,
    /// `[calibration]`.
    #[serde(default)]
    pub calibration: Calibration,
    /// `[hardware]`.
    #[serde(default)]
    pub hardware: HwConfig,
}

/// The `[passes]` section: how the flow quantizes.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowPasses {
    /// A MASE-style quantize config (checked by the `quantize` pass's parser, which lists the
    /// valid fields of its tables); when given, `auto_precision` does not run.
    #[serde(default)]
    pub quantize: Option<toml::Table>,
    /// Arguments of `auto_precision` (used when there is no `quantize`).
    #[serde(default)]
    pub auto_precision: AutoPrecision,
}

/// `[passes.auto_precision]`: the `auto_precision` pass's arguments with the flow's defaults
/// (16-bit activations, 8-bit weights and biases, min/max range).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AutoPrecision {
    /// Total width of activations.
    pub width: u32,
    /// Width of weights and constants.
    pub weight_width: u32,
    /// Width of biases.
    pub bias_width: u32,
    /// `min_max`, `quantile` or `n_sigma`.
    pub range: String,
    /// `per_tensor` or `per_channel` (one fraction per output channel of each linear weight).
    pub weight_granularity: String,
    /// Activation widths per mase op (`[passes.auto_precision.ops.<op>] width = W`), see
    /// [`crate::per_op`].
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ops: BTreeMap<String, OpPrecision>,
}

/// `[passes.auto_precision.ops.<op>]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpPrecision {
    /// Activation width of the op's nodes (2..=64).
    pub width: u32,
}

impl Default for AutoPrecision {
    fn default() -> Self {
        AutoPrecision {
            width: 16,
            weight_width: 8,
            bias_width: 8,
            range: "min_max".into(),
            weight_granularity: "per_tensor".into(),
            ops: BTreeMap::new(),
        }
    }
}

impl AutoPrecision {
    /// The pass's options, checked by the pass's own argument parser (one place for its rules).
    pub fn options(&self) -> Result<AutoOptions> {
        let mut table = toml::Table::try_from(self)
            .map_err(|e| Error::Config(format!("[passes.auto_precision]: {e}")))?;
        table.remove("ops");
        let opts = mase_ir::passes::auto_precision::parse_args(&table)?;
        if let Some((op, w)) = self.ops.iter().find(|(_, o)| !(2..=64).contains(&o.width)) {
            return Err(Error::Config(format!(
                "[passes.auto_precision.ops.{op}] width = {}: supported widths are 2..=64",
                w.width
            )));
        }
        Ok(opts)
    }

    /// The per-op activation widths (mase op → width).
    pub fn op_widths(&self) -> BTreeMap<String, u32> {
        self.ops.iter().map(|(k, v)| (k.clone(), v.width)).collect()
    }
}

/// `[calibration]`: the data the statistics of `auto_precision` come from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Calibration {
    /// `.npy` files per graph input name; each holds one or more inferences stacked along the
    /// batch axis, and the files of an input are taken in order. Relative paths in a file start
    /// from the file's directory ([`FlowConfig::from_table`] resolves them).
    pub inputs: BTreeMap<String, Vec<PathBuf>>,
    /// Seeded pseudo-random inputs to calibrate on when `inputs` is empty.
    pub samples: u64,
}

impl Default for Calibration {
    fn default() -> Self {
        Calibration { inputs: BTreeMap::new(), samples: 4 }
    }
}

impl FlowConfig {
    /// Reads a flow configuration file; relative paths in it (calibration data, EXTERNAL
    /// manifests) start from its directory.
    pub fn from_file(path: &Path) -> Result<FlowConfig> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let origin = path.display().to_string();
        let table: toml::Table = text.parse().map_err(|e| Error::Config(format!("{origin}: {e}")))?;
        Self::from_table(&table, &origin, path.parent())
    }

    /// A flow configuration from a parsed table; `base_dir` is where relative paths start
    /// (the current directory when `None`).
    pub fn from_table(table: &toml::Table, origin: &str, base_dir: Option<&Path>) -> Result<FlowConfig> {
        let mut cfg: FlowConfig = typed(table, origin)?;
        if cfg.calibration.samples == 0 {
            return Err(Error::Config(format!("{origin}: [calibration] samples must be at least 1")));
        }
        cfg.hardware = cfg.hardware.checked(&format!("{origin}: [hardware]"))?;
        if let Some(base) = base_dir.filter(|b| !b.as_os_str().is_empty()) {
            cfg.hardware.base_dir = Some(base.to_path_buf());
            for files in cfg.calibration.inputs.values_mut() {
                for f in files.iter_mut() {
                    if f.is_relative() {
                        *f = base.join(&*f);
                    }
                }
            }
        }
        Ok(cfg)
    }
}

/// Default elements per beat.
pub const DEFAULT_LANES: usize = 4;

/// Per-node settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeHw {
    /// Fixed parallelism: `[p_in, p_out]` for linear, `[lanes]` (or `[lanes, lanes]`) otherwise.
    #[serde(default)]
    pub parallelism: Option<Vec<usize>>,
    /// Cycles per beat for components that can time-share their multipliers (`layer_norm`'s
    /// `FOLD`): 1 = full rate. Restricts the search to that form (with `parallelism`, fixes it).
    #[serde(default)]
    pub fold: Option<usize>,
    /// Implement the node with the user's module described by this manifest (EXTERNAL
    /// toolchain, see [`crate::external`]); relative to the configuration file.
    #[serde(default)]
    pub external: Option<String>,
    /// Implementation form of the node's component where it has several (gelu: `"table"`,
    /// `"interp"`); recorded as the node's `hardware.form` metadata.
    #[serde(default)]
    pub form: Option<String>,
    /// Run the node on the host even where the library implements it (see
    /// [`crate::host_split`]).
    #[serde(default)]
    pub host: bool,
}

/// One device of a multi-device system (`[[hardware.devices]]`) and its link to the next.
///
/// Read through [`DeviceSpec`]: a named `part` ([`crate::parts`]) fills `multipliers`,
/// `memory_bits` and `lut`, and keys given beside it override the part's figures; without a part
/// `multipliers` and `memory_bits` are required. What is written back (the report's
/// `devices_configured`) is the resolved figures with the part's name, which reads back as the
/// same device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "DeviceSpec")]
pub struct Device {
    /// Name in reports and messages.
    pub name: String,
    /// The named part the figures were filled from, when one was given (its canonical
    /// spelling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    /// Multipliers (DSP slices) available.
    pub multipliers: u64,
    /// On-chip memory bits available (weights, tables and buffers).
    pub memory_bits: u64,
    /// LUTs available, checked against the resource estimate when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lut: Option<u64>,
    /// Bits per cycle of the link to the next device (every device but the last), shared among
    /// the streams that cross to it in proportion to their bits per inference (at least one each;
    /// [`mase_hwlib::components::link::share_width`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_bits_per_cycle: Option<usize>,
    /// Cycles a flit takes over the link to the next device, one way (every device but the
    /// last).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_latency_cycles: Option<usize>,
}

/// A `[[hardware.devices]]` entry as written: a part, explicit figures, or both (the explicit
/// ones win). [`Device`] is read through it, so a part is resolved wherever a device is read
/// (configuration files, pass arguments, a project's `report.json`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceSpec {
    /// Name in reports and messages.
    pub name: String,
    /// A named part ([`crate::parts::PARTS`], case-insensitive).
    #[serde(default)]
    pub part: Option<String>,
    /// Multipliers; overrides the part's.
    #[serde(default)]
    pub multipliers: Option<u64>,
    /// On-chip memory bits; overrides the part's (block RAM plus UltraRAM).
    #[serde(default)]
    pub memory_bits: Option<u64>,
    /// LUTs; overrides the part's.
    #[serde(default)]
    pub lut: Option<u64>,
    /// As [`Device::link_bits_per_cycle`].
    #[serde(default)]
    pub link_bits_per_cycle: Option<usize>,
    /// As [`Device::link_latency_cycles`].
    #[serde(default)]
    pub link_latency_cycles: Option<usize>,
}

impl TryFrom<DeviceSpec> for Device {
    type Error = String;

    fn try_from(s: DeviceSpec) -> std::result::Result<Device, String> {
        let at = format!("device {:?}", s.name);
        let part = match &s.part {
            Some(name) => Some(crate::parts::lookup(name).map_err(|e| format!("{at}: {e}"))?),
            None => None,
        };
        let figure = |given: Option<u64>, of_part: Option<u64>, key: &str| {
            given.or(of_part).ok_or_else(|| {
                format!(
                    "{at}: give {key} = N, or part = \"NAME\" to take it from a named part (`mase parts`)"
                )
            })
        };
        Ok(Device {
            multipliers: figure(s.multipliers, part.map(|p| p.multipliers), "multipliers")?,
            memory_bits: figure(s.memory_bits, part.map(|p| p.memory_bits()), "memory_bits")?,
            lut: s.lut.or(part.map(|p| p.lut)),
            part: part.map(|p| p.name.to_string()),
            name: s.name,
            link_bits_per_cycle: s.link_bits_per_cycle,
            link_latency_cycles: s.link_latency_cycles,
        })
    }
}

impl Device {
    /// The link to the next device: (bits per cycle, latency cycles), when it has one.
    pub fn link(&self) -> Option<(usize, usize)> {
        Some((self.link_bits_per_cycle?, self.link_latency_cycles?))
    }
}

/// Hardware configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HwConfig {
    /// Cycles per inference the slowest stage may take.
    #[serde(default)]
    pub target_ii: Option<u64>,
    /// The same target given per row of the (first) graph input: `target_ii_per_row × rows`
    /// cycles per inference (`--target-ii` on the command line).
    #[serde(default)]
    pub target_ii_per_row: Option<u64>,
    /// Most multipliers the whole design may use.
    #[serde(default)]
    pub multiplier_budget: Option<u64>,
    /// Default elements per beat (used when neither target is given).
    #[serde(default)]
    pub lanes: Option<usize>,
    /// Name of the top module.
    #[serde(default)]
    pub top: Option<String>,
    /// The clock the design is expected to run at, in MHz (positive): the report, the project
    /// README, `mase flow` and `mase sim` then give inferences per second and latency in µs next
    /// to the cycle figures ([`crate::report::real_time`]). No effect on the design itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_mhz: Option<f64>,
    /// Per-node settings by node name.
    #[serde(default)]
    pub nodes: BTreeMap<String, NodeHw>,
    /// MASE ops (e.g. `"embedding"`) whose nodes run on the host even where the library
    /// implements them (see [`crate::host_split`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_ops: Vec<String>,
    /// Most bits the device spends on lookup tables (every `embedding` node's quantized table,
    /// together); tables are placed smallest first while they fit, the rest run on the host.
    /// Default [`DEFAULT_TABLE_BUDGET_BITS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_budget_bits: Option<u64>,
    /// The devices the design spans, in dataflow order (`[[hardware.devices]]`); empty: one
    /// device without limits.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<Device>,
    /// Directory that relative manifest paths start from (the configuration file's).
    #[serde(skip)]
    pub base_dir: Option<std::path::PathBuf>,
}

/// The default of [`HwConfig::table_budget_bits`]: 4 Mibit (512 KiB), a third of the block RAM
/// of a mid-range FPGA (13.1 Mbit in an xc7a200t). Position, token-type and small-vocabulary word
/// tables fit; a 30,522-token vocabulary (94 Mbit at hidden 384 and 8 bits) does not and is
/// looked up on the host. Smaller parts set their own budget.
pub const DEFAULT_TABLE_BUDGET_BITS: u64 = 1 << 22;

impl HwConfig {
    /// The lookup-table budget in bits ([`HwConfig::table_budget_bits`] or the default).
    pub fn table_budget(&self) -> u64 {
        self.table_budget_bits.unwrap_or(DEFAULT_TABLE_BUDGET_BITS)
    }

    /// Reads a hardware configuration from TOML text: the `[hardware]` table when there is one
    /// (a flow configuration), otherwise the whole document.
    pub fn from_toml(text: &str, origin: &str) -> Result<HwConfig> {
        let table: toml::Table = text.parse().map_err(|e| Error::Config(format!("{origin}: {e}")))?;
        Self::from_table(&table, origin)
    }

    /// As [`HwConfig::from_toml`], from a parsed table.
    pub fn from_table(table: &toml::Table, origin: &str) -> Result<HwConfig> {
        let hw = match table.get("hardware") {
            Some(toml::Value::Table(t)) => t.clone(),
            Some(other) => {
                return Err(Error::Config(format!(
                    "{origin}: [hardware] must be a table, got {}",
                    other.type_str()
                )))
            }
            None => {
                let mut t = table.clone();
                t.remove("passes");
                t.remove("calibration");
                t
            }
        };
        let cfg: HwConfig = typed(&hw, &format!("{origin}: hardware section"))?;
        cfg.check(origin)?;
        Ok(cfg)
    }

    fn check(&self, origin: &str) -> Result<()> {
        let targets = [self.target_ii, self.target_ii_per_row, self.multiplier_budget];
        if targets.contains(&Some(0)) || self.lanes == Some(0) {
            return Err(Error::Config(format!(
                "{origin}: target_ii, target_ii_per_row, multiplier_budget and lanes must be positive"
            )));
        }
        if targets.iter().filter(|t| t.is_some()).count() > 1 {
            return Err(Error::Config(format!(
                "{origin}: give one of target_ii, target_ii_per_row and multiplier_budget"
            )));
        }
        if let Some(f) = self.clock_mhz {
            if !(f.is_finite() && f > 0.0) {
                return Err(Error::Config(format!(
                    "{origin}: clock_mhz = {f}: give the clock frequency in MHz, a positive number"
                )));
            }
        }
        if let Some(top) = &self.top {
            let ok = top.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && top.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok {
                return Err(Error::Config(format!(
                    "{origin}: top = {top:?} is not a SystemVerilog identifier (letters, digits, _)"
                )));
            }
        }
        self.check_devices(origin)?;
        for (name, n) in &self.nodes {
            if let Some(p) = &n.parallelism {
                if p.is_empty() || p.len() > 2 || p.contains(&0) {
                    return Err(Error::Config(format!(
                        "{origin}: nodes.{name}.parallelism = {p:?}: give [lanes] or [p_in, p_out], positive"
                    )));
                }
            }
            if n.fold == Some(0) {
                return Err(Error::Config(format!(
                    "{origin}: nodes.{name}.fold = 0: give a positive number"
                )));
            }
        }
        Ok(())
    }

    fn check_devices(&self, origin: &str) -> Result<()> {
        let n = self.devices.len();
        for (k, d) in self.devices.iter().enumerate() {
            let at = format!("{origin}: devices[{k}] ({:?})", d.name);
            if d.name.is_empty() || self.devices[..k].iter().any(|e| e.name == d.name) {
                return Err(Error::Config(format!("{at}: every device needs a name of its own")));
            }
            if d.memory_bits == 0 || d.lut == Some(0) {
                return Err(Error::Config(format!("{at}: memory_bits and lut must be positive")));
            }
            let link = [d.link_bits_per_cycle, d.link_latency_cycles];
            if k + 1 < n {
                if link.iter().any(|l| l.is_none_or(|v| v == 0)) {
                    return Err(Error::Config(format!(
                        "{at}: every device but the last needs link_bits_per_cycle and link_latency_cycles \
                         (positive) for its link to the next device"
                    )));
                }
            } else if link.iter().any(Option::is_some) {
                return Err(Error::Config(format!(
                    "{at}: the last device has no next device; remove link_bits_per_cycle and link_latency_cycles"
                )));
            }
        }
        Ok(())
    }

    /// Validates after fields were set in code (command-line overrides).
    pub fn checked(self, origin: &str) -> Result<HwConfig> {
        self.check(origin)?;
        Ok(self)
    }

    /// The top module name (`top` by default).
    pub fn top_name(&self) -> &str {
        self.top.as_deref().unwrap_or("top")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parts;

    fn devices(text: &str) -> Result<Vec<Device>> {
        HwConfig::from_toml(text, "hw.toml").map(|c| c.devices)
    }

    #[test]
    fn a_part_fills_the_device_and_keys_beside_it_override() {
        let p = parts::find("LFE5U-85F").unwrap();
        let d = &devices("[[devices]]\nname = \"ecp5\"\npart = \"lfe5u-85f\"\n").unwrap()[0];
        assert_eq!(d.part.as_deref(), Some(p.name), "the canonical spelling is kept");
        assert_eq!((d.multipliers, d.memory_bits, d.lut), (p.multipliers, p.memory_bits(), Some(p.lut)));
        assert_eq!(p.memory_bits(), p.block_ram_bits() + p.ultra_ram_bits());

        let u = parts::find("xcu250").unwrap();
        let text = "[[devices]]\nname = \"card\"\npart = \"xcu250\"\nmultipliers = 9000\nlut = 1000000\n";
        let d = &devices(text).unwrap()[0];
        assert_eq!((d.multipliers, d.memory_bits, d.lut), (9000, u.memory_bits(), Some(1_000_000)));

        // Written out (the report's devices_configured) and read back: the same device.
        let json = serde_json::to_string(d).unwrap();
        assert_eq!(&serde_json::from_str::<Device>(&json).unwrap(), d);
    }

    #[test]
    fn an_unknown_part_or_a_device_without_figures_is_named() {
        let e = devices("[[devices]]\nname = \"fpga0\"\npart = \"XC9Z999\"\n").unwrap_err().to_string();
        for want in ["hw.toml", "\"fpga0\"", "unknown part \"XC9Z999\""] {
            assert!(e.contains(want), "{e} lacks {want}");
        }
        for p in parts::PARTS {
            assert!(e.contains(p.name), "{e} does not list {}", p.name);
        }
        let e = devices("[[devices]]\nname = \"bare\"\nmultipliers = 8\n").unwrap_err().to_string();
        assert!(e.contains("\"bare\"") && e.contains("memory_bits") && e.contains("part"), "{e}");
        let e =
            devices("[[devices]]\nname = \"x\"\npart = \"xc7a100t\"\nparts = 1\n").unwrap_err().to_string();
        assert!(e.contains("parts") && e.contains("part"), "unknown keys list the valid ones: {e}");
    }

    #[test]
    fn clock_mhz_is_a_positive_number() {
        for (text, want) in [("clock_mhz = 100", 100.0), ("clock_mhz = 62.5", 62.5)] {
            assert_eq!(HwConfig::from_toml(text, "hw.toml").unwrap().clock_mhz, Some(want));
        }
        for bad in ["clock_mhz = 0", "clock_mhz = -5.0", "clock_mhz = nan", "clock_mhz = inf"] {
            let e = HwConfig::from_toml(bad, "hw.toml").unwrap_err().to_string();
            assert!(e.contains("hw.toml") && e.contains("clock_mhz"), "{bad}: {e}");
        }
        assert_eq!(HwConfig::from_toml("", "hw.toml").unwrap().clock_mhz, None);
    }
}
