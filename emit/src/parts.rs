//! Named FPGA parts: the one table of the devices `[[hardware.devices]] part = "NAME"` names
//! (see [`crate::config::Device`]) and `mase parts` lists.
//!
//! A part gives a device its `multipliers`, `memory_bits` and `lut` ([`Part::memory_bits`],
//! [`Part::multipliers`], [`Part::lut`]); keys written beside `part` override them.
//!
//! **Memory**: `memory_bits` is block RAM plus UltraRAM, the memories the flow puts weights,
//! tables and buffers in. Distributed RAM is not counted: it is the LUTs themselves (a SLICEM
//! LUT or an ECP5 slice in RAM mode), which the design's logic needs too and which the LUT
//! figure already counts, so adding it would count the same silicon twice.
//!
//! **LUTs**: Lattice ECP5 counts 4-input LUTs (LUT4), Xilinx 6-input LUTs (LUT6). The resource
//! model estimates what Yosys' `synth_xilinx` maps, in LUT6, so an ECP5 part's LUT4 count is a
//! generous ceiling for that estimate: a LUT6 function takes up to four LUT4s.
//!
//! **Multipliers**: an ECP5 MULT18X18D (18×18) or a Xilinx DSP slice (DSP48E1: 25×18, DSP48E2:
//! 27×18), one multiplier of the cost model each.
//!
//! **Sources**, per part in its entry: Lattice's *ECP5 and ECP5-5G Family Data Sheet*
//! (FPGA-DS-02012), Table 1.1; Xilinx's *7 Series FPGAs Data Sheet: Overview* (DS180), *Zynq-7000
//! SoC Data Sheet: Overview* (DS190), *Zynq UltraScale+ MPSoC Data Sheet: Overview* (DS891),
//! *UltraScale Architecture and Product Data Sheet: Overview* (DS890) and *Alveo U200 and U250
//! Data Center Accelerator Cards Data Sheet* (DS962). Memory bits are computed from the block
//! counts the data sheets give (their "Mb" totals are these products, in units of 2^20 bits): an
//! ECP5 EBR (DP16KD) holds 18 Kib, a Xilinx block RAM (RAMB36) 36 Kib, an UltraRAM (URAM288)
//! 288 Kib. Exact ECP5 LUT counts are nextpnr-ecp5's (the data sheet rounds them to 24K, 44K
//! and 84K), the denominators of its utilisation report.

use serde::Serialize;

/// Bits of an ECP5 embedded block RAM (EBR, primitive DP16KD): 18 Kib.
pub const ECP5_EBR_BITS: u64 = 18 * 1024;
/// Bits of a Xilinx 36 Kb block RAM (RAMB36, parity included, as the data sheets count it).
pub const XILINX_BRAM36_BITS: u64 = 36 * 1024;
/// Bits of a Xilinx UltraRAM block (URAM288): 288 Kib.
pub const XILINX_URAM_BITS: u64 = 288 * 1024;

/// One FPGA part and its resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Part {
    /// The name `part = "…"` takes (matched without regard to case).
    pub name: &'static str,
    /// Vendor and family.
    pub family: &'static str,
    /// What a part of this family is used on, for the listing (a board, a card), or "".
    pub board: &'static str,
    /// LUTs, of [`Part::lut_inputs`] inputs each.
    pub lut: u64,
    /// Inputs per LUT: 4 (ECP5 LUT4) or 6 (Xilinx LUT6).
    pub lut_inputs: u32,
    /// Hard multipliers: ECP5 18×18 multipliers, Xilinx DSP slices.
    pub multipliers: u64,
    /// The primitive [`Part::multipliers`] counts.
    pub multiplier_primitive: &'static str,
    /// Block RAM blocks (ECP5 EBR, Xilinx RAMB36).
    pub block_ram_blocks: u64,
    /// Bits per block RAM block.
    pub block_ram_block_bits: u64,
    /// UltraRAM blocks (0 where the part has none).
    pub ultra_ram_blocks: u64,
    /// Bits per UltraRAM block (0 where the part has none).
    pub ultra_ram_block_bits: u64,
    /// Distributed (LUT) RAM bits; listed, not counted in [`Part::memory_bits`] (see the module
    /// documentation).
    pub distributed_ram_bits: u64,
    /// The speed grade place and route uses by default (ECP5: `nextpnr-ecp5 --speed`); none
    /// where the flow has no place and route for the family.
    pub speed_grade: Option<u32>,
    /// The package place and route uses by default (ECP5: `nextpnr-ecp5 --package`).
    pub package: Option<&'static str>,
    /// The data sheet the figures come from.
    pub source: &'static str,
}

impl Part {
    /// Block RAM bits: blocks × bits per block.
    pub const fn block_ram_bits(&self) -> u64 {
        self.block_ram_blocks * self.block_ram_block_bits
    }

    /// UltraRAM bits: blocks × bits per block.
    pub const fn ultra_ram_bits(&self) -> u64 {
        self.ultra_ram_blocks * self.ultra_ram_block_bits
    }

    /// The `memory_bits` a device of this part gets: block RAM plus UltraRAM (distributed RAM
    /// is the LUTs', see the module documentation).
    pub const fn memory_bits(&self) -> u64 {
        self.block_ram_bits() + self.ultra_ram_bits()
    }
}

const ECP5: &str = "Lattice ECP5";
const ECP5_SOURCE: &str =
    "ECP5 and ECP5-5G Family Data Sheet (FPGA-DS-02012), Table 1.1; LUT4 count: nextpnr-ecp5";

/// An ECP5 part: the data sheet's EBR blocks, 18×18 multipliers and distributed RAM (in Kib),
/// nextpnr's LUT4 count; speed grade 6 and the CABGA381 package by default (the parts on most
/// ECP5 boards, and what the flow's place and route targets).
const fn ecp5(name: &'static str, board: &'static str, lut: u64, mult: u64, ebr: u64, dist_kib: u64) -> Part {
    Part {
        name,
        family: ECP5,
        board,
        lut,
        lut_inputs: 4,
        multipliers: mult,
        multiplier_primitive: "MULT18X18D",
        block_ram_blocks: ebr,
        block_ram_block_bits: ECP5_EBR_BITS,
        ultra_ram_blocks: 0,
        ultra_ram_block_bits: 0,
        distributed_ram_bits: dist_kib * 1024,
        speed_grade: Some(6),
        package: Some("CABGA381"),
        source: ECP5_SOURCE,
    }
}

/// A Xilinx part: LUT6, DSP slices, RAMB36 and URAM288 blocks from its data sheet; distributed
/// RAM is its LUTs usable as memory (SLICEM LUTs) × 64 bits, which is the data sheet's
/// "distributed RAM" figure before rounding.
#[allow(clippy::too_many_arguments)]
const fn xilinx(
    name: &'static str,
    family: &'static str,
    board: &'static str,
    lut: u64,
    dsp: (u64, &'static str),
    bram36: u64,
    uram: u64,
    lutram_luts: u64,
    source: &'static str,
) -> Part {
    Part {
        name,
        family,
        board,
        lut,
        lut_inputs: 6,
        multipliers: dsp.0,
        multiplier_primitive: dsp.1,
        block_ram_blocks: bram36,
        block_ram_block_bits: XILINX_BRAM36_BITS,
        ultra_ram_blocks: uram,
        ultra_ram_block_bits: if uram > 0 { XILINX_URAM_BITS } else { 0 },
        distributed_ram_bits: lutram_luts * 64,
        speed_grade: None,
        package: None,
        source,
    }
}

/// Every named part, smallest family first. Figures (see the module documentation for units):
///
/// | part | LUT | multipliers | block RAM | UltraRAM | distributed RAM | source |
/// |---|---|---|---|---|---|---|
/// | LFE5U-25F | 24,288 LUT4 (24K) | 28 | 56 EBR = 1,008 Kib | – | 194 Kib | FPGA-DS-02012 |
/// | LFE5U-45F | 43,848 LUT4 (44K) | 72 | 108 EBR = 1,944 Kib | – | 351 Kib | FPGA-DS-02012 |
/// | LFE5U-85F | 83,640 LUT4 (84K) | 156 | 208 EBR = 3,744 Kib | – | 669 Kib | FPGA-DS-02012 |
/// | xc7a100t | 63,400 | 240 DSP48E1 | 135 = 4,860 Kib | – | 1,188 Kib | DS180 |
/// | xc7z020 | 53,200 | 220 DSP48E1 | 140 = 4.9 Mib | – | 17,400 LUTs × 64 | DS190 |
/// | xczu9eg | 274,080 | 2,520 DSP48E2 | 912 = 32.1 Mib | – | 8.8 Mib | DS891 |
/// | xcvu9p | 1,182,240 | 6,840 DSP48E2 | 2,160 = 75.9 Mib | 960 = 270 Mib | 36.1 Mib | DS890 |
/// | xcu250 | 1,728,000 | 12,288 DSP48E2 | 2,688 = 94.5 Mib | 1,280 = 360 Mib | 48.3 Mib | DS962 (the die is DS890's VU13P) |
pub const PARTS: &[Part] = &[
    ecp5("LFE5U-25F", "ULX3S 25F", 24_288, 28, 56, 194),
    ecp5("LFE5U-45F", "ULX3S 45F", 43_848, 72, 108, 351),
    ecp5("LFE5U-85F", "ULX3S 85F", 83_640, 156, 208, 669),
    xilinx(
        "xc7a100t",
        "Xilinx Artix-7",
        "Arty A7-100T, Nexys A7",
        63_400,
        (240, "DSP48E1"),
        135,
        0,
        19_000,
        "7 Series FPGAs Data Sheet: Overview (DS180), Table 3",
    ),
    xilinx(
        "xc7z020",
        "Xilinx Zynq-7000",
        "ZedBoard, PYNQ-Z1/Z2",
        53_200,
        (220, "DSP48E1"),
        140,
        0,
        17_400,
        "Zynq-7000 SoC Data Sheet: Overview (DS190), Table 1",
    ),
    xilinx(
        "xczu9eg",
        "Xilinx Zynq UltraScale+",
        "ZCU102",
        274_080,
        (2_520, "DSP48E2"),
        912,
        0,
        144_000,
        "Zynq UltraScale+ MPSoC Data Sheet: Overview (DS891), EG devices table",
    ),
    xilinx(
        "xcvu9p",
        "Xilinx Virtex UltraScale+",
        "VCU118, AWS EC2 F1",
        1_182_240,
        (6_840, "DSP48E2"),
        2_160,
        960,
        591_840,
        "UltraScale Architecture and Product Data Sheet: Overview (DS890), Virtex UltraScale+ table",
    ),
    xilinx(
        "xcu250",
        "Xilinx Alveo UltraScale+",
        "Alveo U250",
        1_728_000,
        (12_288, "DSP48E2"),
        2_688,
        1_280,
        791_040,
        "Alveo U200 and U250 Data Center Accelerator Cards Data Sheet (DS962); distributed RAM: DS890 (VU13P, the same die)",
    ),
];

/// The part named `name` (case-insensitive).
pub fn find(name: &str) -> Option<&'static Part> {
    PARTS.iter().find(|p| p.name.eq_ignore_ascii_case(name.trim()))
}

/// The names of every part, in table order, for error messages.
pub fn names() -> Vec<&'static str> {
    PARTS.iter().map(|p| p.name).collect()
}

/// The part named `name`, or an error message that names it and lists the known parts.
pub fn lookup(name: &str) -> Result<&'static Part, String> {
    find(name).ok_or_else(|| {
        format!(
            "unknown part {name:?}; known parts: {} (`mase parts` lists their resources)",
            names().join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found_in_any_case() {
        for (k, p) in PARTS.iter().enumerate() {
            assert!(
                PARTS[..k].iter().all(|q| !q.name.eq_ignore_ascii_case(p.name)),
                "{} listed twice",
                p.name
            );
            assert_eq!(find(&p.name.to_uppercase()), Some(p));
            assert_eq!(find(&p.name.to_lowercase()), Some(p));
        }
        let err = lookup("xc9z999").unwrap_err();
        assert!(err.contains("\"xc9z999\""), "{err}");
        for p in PARTS {
            assert!(err.contains(p.name), "{err} lacks {}", p.name);
        }
    }

    /// The data sheets' rounded totals (Kib for ECP5 and 7-series block RAM, Mib elsewhere)
    /// agree with blocks × block bits, so a typo in a block count shows here.
    #[test]
    fn memory_totals_agree_with_the_data_sheets_rounded_figures() {
        let kib = |bits: u64| bits as f64 / 1024.0;
        let mib = |bits: u64| bits as f64 / (1024.0 * 1024.0);
        let block = |n: &str| find(n).unwrap().block_ram_bits();
        let ultra = |n: &str| find(n).unwrap().ultra_ram_bits();
        for (name, sheet_kib) in [("LFE5U-25F", 1_008.0), ("LFE5U-45F", 1_944.0), ("LFE5U-85F", 3_744.0)] {
            assert_eq!(kib(block(name)), sheet_kib, "{name}");
        }
        assert_eq!(kib(block("xc7a100t")), 4_860.0);
        for (name, sheet_mib, got) in [
            ("xc7z020", 4.9, mib(block("xc7z020"))),
            ("xczu9eg", 32.1, mib(block("xczu9eg"))),
            ("xcvu9p", 75.9, mib(block("xcvu9p"))),
            ("xcvu9p URAM", 270.0, mib(ultra("xcvu9p"))),
            ("xcu250", 94.5, mib(block("xcu250"))),
            ("xcu250 URAM", 360.0, mib(ultra("xcu250"))),
        ] {
            assert!((got - sheet_mib).abs() < 0.05, "{name}: {got:.2} Mib, data sheet {sheet_mib}");
        }
        for (name, sheet_mib) in [("xczu9eg", 8.8), ("xcvu9p", 36.1), ("xcu250", 48.3)] {
            let got = mib(find(name).unwrap().distributed_ram_bits);
            assert!(
                (got - sheet_mib).abs() < 0.05,
                "{name} distributed: {got:.2} Mib, data sheet {sheet_mib}"
            );
        }
        assert!((kib(find("xc7a100t").unwrap().distributed_ram_bits) - 1_188.0).abs() < 1.0);
        for p in PARTS {
            assert_eq!(p.memory_bits(), p.block_ram_bits() + p.ultra_ram_bits(), "{}", p.name);
        }
    }
}
