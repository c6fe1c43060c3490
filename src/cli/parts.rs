//! `mase parts`: the named FPGA parts (`mase_emit::parts`) a `[[hardware.devices]]` entry can
//! name, as a table or JSON.

use mase_emit::parts::{Part, PARTS};
use serde::Serialize;

/// A part with the totals a device takes from it, for `--json`.
#[derive(Serialize)]
struct Row<'a> {
    #[serde(flatten)]
    part: &'a Part,
    block_ram_bits: u64,
    ultra_ram_bits: u64,
    /// What `memory_bits` of a device naming the part is: block RAM plus UltraRAM.
    memory_bits: u64,
}

/// Bits as Kib below 10 Mib, else Mib with one decimal (the data sheets' units: the small parts'
/// sheets give Kb, the large ones' Mb).
fn size(bits: u64) -> String {
    const KIB: u64 = 1024;
    match bits {
        0 => "-".into(),
        b if b < 10 * KIB * KIB => format!("{} Kib", b / KIB),
        b => format!("{:.1} Mib", b as f64 / (KIB * KIB) as f64),
    }
}

/// Blocks and their total: `208 x 18 Kib = 3744 Kib`.
fn blocks(n: u64, block_bits: u64) -> String {
    if n == 0 {
        return "-".into();
    }
    format!("{n} x {} = {}", size(block_bits), size(n * block_bits))
}

/// Prints every part: a table (one line per part, then what the columns mean), or JSON.
pub fn run(json: bool) -> anyhow::Result<()> {
    if json {
        let rows: Vec<Row> = PARTS
            .iter()
            .map(|p| Row {
                part: p,
                block_ram_bits: p.block_ram_bits(),
                ultra_ram_bits: p.ultra_ram_bits(),
                memory_bits: p.memory_bits(),
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    println!(
        "{:<10} {:<25} {:>14} {:>18} {:>26} {:>23} {:>10} {:>11}  default",
        "part", "family", "LUT", "multipliers", "block RAM", "UltraRAM", "dist. RAM", "memory_bits",
    );
    for p in PARTS {
        let default = match (p.speed_grade, p.package) {
            (Some(s), Some(pkg)) => format!("speed {s}, {pkg}"),
            (Some(s), None) => format!("speed {s}"),
            (None, Some(pkg)) => pkg.to_string(),
            (None, None) => "-".into(),
        };
        println!(
            "{:<10} {:<25} {:>14} {:>18} {:>26} {:>23} {:>10} {:>11}  {}",
            p.name,
            p.family,
            format!("{} LUT{}", p.lut, p.lut_inputs),
            format!("{} {}", p.multipliers, p.multiplier_primitive),
            blocks(p.block_ram_blocks, p.block_ram_block_bits),
            blocks(p.ultra_ram_blocks, p.ultra_ram_block_bits),
            size(p.distributed_ram_bits),
            p.memory_bits(),
            default
        );
    }
    println!(
        "\n`[[hardware.devices]] part = \"NAME\"` (any case) gives a device its multipliers, lut and memory_bits;\n\
         keys beside part override them. memory_bits is block RAM + UltraRAM: distributed RAM is made of the\n\
         LUTs the logic needs too. ECP5 counts LUT4s, Xilinx LUT6s. Figures from the vendors' data sheets\n\
         (`mase parts --json` names each)."
    );
    Ok(())
}
