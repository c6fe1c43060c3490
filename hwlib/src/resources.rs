//! The resource model's vocabulary: [`Resources`] (LUT, FF, DSP, BRAM, LUTRAM of an instance on a
//! 7-series FPGA as Yosys `synth_xilinx` maps it) and the mapping rules the components' estimates
//! share (how many DSP48E1 a multiplier takes, how many block RAMs a ROM takes).
//!
//! The per-component formulas live in each component's [`crate::Component::resources`]; their
//! constants were fitted with `cargo run -p mase-sim --example resource_fit` (Yosys 0.23).

use serde::{Deserialize, Serialize};

/// FPGA resources of one instance (or the sum over a design).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resources {
    /// LUTs used as logic (LUT1..LUT6).
    pub lut: u64,
    /// Flip-flops.
    pub ff: u64,
    /// DSP48E1 slices.
    pub dsp: u64,
    /// Block RAM in 18 kbit equivalents (a RAMB36E1 counts 2, a RAMB18E1 1).
    pub bram18: u64,
    /// LUTs used as distributed RAM.
    pub lutram: u64,
}

impl std::fmt::Display for Resources {
    /// `900 LUT, 574 FF, 16 DSP, 4 BRAM18, 0 LUTRAM`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} LUT, {} FF, {} DSP, {} BRAM18, {} LUTRAM",
            self.lut, self.ff, self.dsp, self.bram18, self.lutram
        )
    }
}

impl std::ops::Add for Resources {
    type Output = Resources;
    fn add(self, o: Resources) -> Resources {
        Resources {
            lut: self.lut + o.lut,
            ff: self.ff + o.ff,
            dsp: self.dsp + o.dsp,
            bram18: self.bram18 + o.bram18,
            lutram: self.lutram + o.lutram,
        }
    }
}

impl std::ops::AddAssign for Resources {
    fn add_assign(&mut self, o: Resources) {
        *self = *self + o;
    }
}

impl std::iter::Sum for Resources {
    fn sum<I: Iterator<Item = Resources>>(iter: I) -> Resources {
        iter.fold(Resources::default(), |a, b| a + b)
    }
}

/// Rounds a fitted real-valued estimate to a count (never negative).
pub fn round(x: f64) -> u64 {
    x.max(0.0).round() as u64
}

/// The parameter `name` of `p` as an unsigned count (0 when absent or negative).
pub fn pu(p: &crate::Params, name: &str) -> u64 {
    p.get(name).copied().unwrap_or(0).max(0) as u64
}

/// A linear resource model `c0 + Σ cᵢ·xᵢ`, rounded: the fitted LUT or FF count of a component
/// from its features (element bits per beat and the like).
pub fn linear(c0: f64, terms: &[(f64, u64)]) -> u64 {
    round(c0 + terms.iter().map(|(c, x)| c * *x as f64).sum::<f64>())
}

/// DSP48E1 slices Yosys' `mul2dsp` (7-series: 25×18 signed, 18-bit partial products, operands
/// of at least 2 bits, products of at least 9 bits, unsigned operands widened by a sign bit) maps
/// an `a`×`b`-bit product with `y` result bits onto; narrower products become LUTs (0).
pub fn mul_dsps(a: u32, b: u32, a_signed: bool, b_signed: bool, y: u32) -> u64 {
    mul2dsp(a, b, a_signed, b_signed, y, true)
}

/// Operand bits of the multiplier Yosys keeps for a product by the constant `c > 0` (`signed`:
/// the product is signed, so the constant carries a sign bit): `opt_expr` moves the factor's
/// trailing zero bits into a shift and `wreduce` trims it to its odd part; `None` when that part
/// is 1 (a plain shift, no multiplier).
pub fn const_factor_bits(c: u64, signed: bool) -> Option<u32> {
    let odd = c.checked_shr(c.trailing_zeros()).unwrap_or(0);
    (odd > 1).then(|| 64 - odd.leading_zeros() + u32::from(signed))
}

/// One step of `mul2dsp.v`: `top` is the original `$mul` (swap and sign rules apply), not a
/// `$__mul` partial product.
fn mul2dsp(a: u32, b: u32, a_signed: bool, b_signed: bool, y: u32, top: bool) -> u64 {
    if a < 2 || b < 2 || y < 9 {
        return 0;
    }
    if top && !a_signed && !b_signed {
        return mul2dsp(a + 1, b + 1, true, true, y, true);
    }
    if top && a < b {
        return mul2dsp(b, a, b_signed, a_signed, y, true);
    }
    // Slices of 17 bits plus a sign bit of headroom.
    if a > 25 {
        let n = (a - 25 + 18 - 2) / 17;
        let last = a - n * 17;
        n as u64 * mul2dsp(18, b, true, b_signed, y.min(b + 18), false)
            + mul2dsp(last, b, a_signed, b_signed, b + last, false)
    } else if b > 18 {
        let n = (b - 18 + 18 - 2) / 17;
        let last = b - n * 17;
        n as u64 * mul2dsp(a, 18, a_signed, true, y.min(a + 18), false)
            + mul2dsp(a, last, a_signed, b_signed, a + last, false)
    } else {
        1
    }
}

/// Block-RAM primitives of 7-series in Yosys' library: (bits per word, words, library cost,
/// 18k-equivalents): RAMB18E1 and RAMB36E1 in every aspect ratio, RAMB36E1 72 bits wide in
/// simple dual port.
const CONFIGS: [(u64, u64, u64, u64); 13] = [
    (1, 16384, 129, 1),
    (2, 8192, 129, 1),
    (4, 4096, 129, 1),
    (9, 2048, 129, 1),
    (18, 1024, 129, 1),
    (36, 512, 129, 1),
    (1, 32768, 257, 2),
    (2, 16384, 257, 2),
    (4, 8192, 257, 2),
    (9, 4096, 257, 2),
    (18, 2048, 257, 2),
    (36, 1024, 257, 2),
    (72, 512, 257, 2),
];

/// 18k-equivalents of block RAM for a `depth`×`width` memory as Yosys' `memory_libmap` packs it
/// into RAMB18E1/RAMB36E1 (the cheapest of the aspect ratios 1..36 bits, and 72 bits in simple
/// dual port, at the library's costs: RAMB18 129, RAMB36 257).
pub fn bram18(depth: u64, width: u64) -> u64 {
    bram_shape(depth, width).1
}

/// `(library cost, 18k equivalents)` of the cheapest block-RAM packing of a `depth`×`width`
/// memory (see [`bram18`]).
fn bram_shape(depth: u64, width: u64) -> (u64, u64) {
    if depth == 0 || width == 0 {
        return (0, 0);
    }
    CONFIGS
        .iter()
        .map(|&(w, d, cost, b18)| {
            let n = width.div_ceil(w) * depth.div_ceil(d);
            (n * cost, n * b18)
        })
        .min()
        .unwrap_or((0, 0))
}

/// LUTs of distributed RAM for a simple-dual-port `depth`×`width` RAM: the primitives of the
/// configuration [`lutram_choice`] picks (RAM32M: 32×6, RAM64M: 64×3, 4 LUTs each; RAM128X1D:
/// 128×1, 2 LUTs).
pub fn lutram(depth: u64, width: u64) -> u64 {
    lutram_choice(depth, width).1
}

/// `(memory_libmap cost, LUTs)` of the cheapest distributed-RAM configuration of a
/// simple-dual-port `depth`×`width` RAM. Per primitive (`u` bits × `d` words, library cost `c`,
/// width scale `s`): `a = ceil(depth / d)` address slices of the width padded to `u`, so
/// `a·ceil(width / u)` primitives costing `(c − s)` each plus `s·a·width / u`, half a unit per
/// bit of the read mux and per slice of the write demux, and 2 for the read port.
fn lutram_choice(depth: u64, width: u64) -> (f64, u64) {
    // (bits, words, cost, width scale, LUTs per primitive).
    const LUTRAMS: [(u64, u64, u64, u64, u64); 3] = [(6, 32, 8, 7, 4), (3, 64, 8, 7, 4), (1, 128, 8, 8, 2)];
    LUTRAMS
        .iter()
        .map(|&(u, d, c, s, luts)| {
            let a = depth.div_ceil(d);
            let prims = a * width.div_ceil(u);
            let mut cost = ((c - s) * prims) as f64 + (s * a * width) as f64 / u as f64 + 2.0;
            if a > 1 {
                cost += 0.5 * ((a - 1) * width) as f64 + 0.5 * a as f64;
            }
            (cost, prims * luts)
        })
        .min_by(|x, y| x.0.total_cmp(&y.0))
        .unwrap_or((0.0, 0))
}

/// Where Yosys puts a RAM (one write port, one synchronous read port) of `depth`×`width` bits:
/// `(bram18, lutram)`. Two words stay in flip-flops; up to 64 words go to distributed RAM; deeper
/// ones to whichever of distributed ([`lutram_choice`]) and block RAM `memory_libmap`'s library
/// costs make cheaper.
pub fn ram(depth: u64, width: u64) -> (u64, u64) {
    if depth <= 2 || width == 0 {
        return (0, 0);
    }
    let (lcost, lr) = lutram_choice(depth, width);
    if depth <= 64 {
        return (0, lr);
    }
    let (cost, b) = bram_shape(depth, width);
    if lcost <= (cost + 2) as f64 {
        (0, lr)
    } else {
        (b, 0)
    }
}

/// `$clog2(n)` as the RTL's address widths use it, at least 1 (`n > 1 ? $clog2(n) : 1`).
pub fn clog2(n: u64) -> u64 {
    if n > 1 {
        (n - 1).ilog2() as u64 + 1
    } else {
        1
    }
}

/// `(bram18, lutram)` of a `mase_pingpong_buffer` of `words` words of `width` bits (two banks of
/// `2^clog2(words)` words).
pub fn pingpong(words: u64, width: u64) -> (u64, u64) {
    ram(2 << clog2(words), width)
}

/// A fitted count `Σ cᵢ·xᵢ`, rounded (`x[0]` is usually 1, for the constant term). The
/// components keep their coefficients next to their feature lists.
pub fn fitted(coefs: &[f64], features: &[u64]) -> u64 {
    round(coefs.iter().zip(features).map(|(c, x)| c * *x as f64).sum())
}

/// Where Yosys puts a ROM (synchronous read, contents from a file) of `depth`×`width` bits that
/// does not ask for block RAM: `(bram18, lut)`. `memory_libmap` (as `synth_xilinx` runs it)
/// prices soft logic at 1/64 per ROM bit, truncated to an integer, and takes block RAM only when
/// its cheapest configuration ([`rom_block`]) costs strictly less; logic ROMs are one LUT6 per
/// 64 words of each output bit.
pub fn rom(depth: u64, width: u64) -> (u64, u64) {
    rom_ports(depth, width, 1)
}

/// [`rom`] with `ports` (1 or 2) synchronous read ports; a logic ROM has a read mux per port.
pub fn rom_ports(depth: u64, width: u64, ports: u64) -> (u64, u64) {
    let (b, l, _) = rom_placed(depth, width, ports);
    (b, l)
}

/// [`rom_ports`] plus the bits of the block-RAM output muxes (`ports × (a − 1) × width` for `a`
/// address slices; 0 for a logic ROM): `(bram18, lut, mux bits)`.
pub fn rom_placed(depth: u64, width: u64, ports: u64) -> (u64, u64, u64) {
    if depth <= 1 || width == 0 || ports == 0 {
        return (0, 0, 0);
    }
    let (cost, b18, slices) = rom_block(depth, width, ports);
    if cost < ((depth * width) / 64) as f64 {
        (b18, 0, ports * (slices - 1) * width)
    } else {
        (0, ports * width * depth.div_ceil(64), 0)
    }
}

/// Block RAM (18k-equivalents) of a one-port ROM that asks for it (`rom_style = "block"`): the
/// cheapest configuration of [`rom_block`], whatever logic would cost.
pub fn rom_bram18(depth: u64, width: u64) -> u64 {
    if depth <= 1 || width == 0 {
        return 0;
    }
    rom_block(depth, width, 1).1
}

/// `(memory_libmap cost, 18k equivalents, address slices)` of the cheapest block-RAM
/// configuration of a
/// `depth`×`width` ROM with `ports` synchronous read ports. Per aspect ratio (`w` bits × `d`
/// words of a primitive of library cost `c`): `a = ceil(depth / d)` address slices whose bits
/// pack into `ceil(a·width / w)` primitives (a ROM has no byte lanes to pad), plus half a unit
/// per bit of each port's `a`-way output mux and 2 per read port (its emulation score). Two
/// ports fit one true-dual-port primitive (up to 18 bits per RAMB18, 36 per RAMB36); the
/// simple-dual-port widths (36 and 72 bits) have one read port, so two ports replicate them.
pub fn rom_block(depth: u64, width: u64, ports: u64) -> (f64, u64, u64) {
    CONFIGS
        .iter()
        .map(|&(w, d, cost, b18)| {
            let a = depth.div_ceil(d);
            let sdp_only = w == 72 || (w == 36 && b18 == 1);
            let repl = if sdp_only { ports } else { 1 };
            let n = (a * width).div_ceil(w) * repl;
            let c = (n * cost) as f64 + 0.5 * (ports * (a - 1) * width) as f64 + 2.0 * ports as f64;
            (c, n * b18, a)
        })
        .min_by(|x, y| x.0.total_cmp(&y.0))
        .unwrap_or((0.0, 0, 1))
}

/// Bit columns of a ROM that vary over its words (`words[word][lane]`, each lane `lane_width`
/// bits of the word, two's complement): Yosys replaces a column that holds one value in every
/// word by that constant, so only these take memory.
pub fn varying_bits(words: &[Vec<i64>], lane_width: u32) -> u64 {
    let Some(first) = words.first() else { return 0 };
    let mask = if lane_width >= 64 { !0u64 } else { (1u64 << lane_width) - 1 };
    let mut varying = vec![0u64; first.len()];
    for w in words {
        for ((v, x), f) in varying.iter_mut().zip(w).zip(first) {
            *v |= (*x as u64 ^ *f as u64) & mask;
        }
    }
    varying.iter().map(|v| u64::from(v.count_ones())).sum()
}

/// Bits of a `width`-bit value with `frac` fractional bits that a cast to `out_frac` fractional
/// bits with rounding code `rounding` reads: under TRN (code 0) the bits below the output's
/// fraction are never read, so Yosys drops their registers; every other mode reads them (its
/// round-up decision). At least 1.
pub fn bits_read_by_cast(width: i64, frac: i64, out_frac: i64, rounding: i64) -> u64 {
    let dropped = if rounding == 0 { (frac - out_frac).max(0) } else { 0 };
    (width - dropped).max(1) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 7-series split of `mul2dsp.v`: one DSP up to 25×18 signed, two for 32×16 (the wide
    /// operand in 17-bit slices), products under 9 bits in LUTs, unsigned operands one bit wider.
    #[test]
    fn multipliers_map_like_mul2dsp() {
        assert_eq!(mul_dsps(8, 8, true, true, 16), 1);
        assert_eq!(mul_dsps(4, 4, true, true, 8), 0);
        assert_eq!(mul_dsps(25, 18, true, true, 43), 1);
        assert_eq!(mul_dsps(18, 25, true, true, 43), 1);
        assert_eq!(mul_dsps(32, 16, true, true, 48), 2);
        assert_eq!(mul_dsps(18, 18, false, false, 36), 2);
    }

    /// Constant factors: 6 = 3·2 is a 3-bit signed 3 and a shift, 7 needs 4 bits, softmax's
    /// log2(e)·2^24 an unsigned 24-bit odd part, 64 is a shift alone.
    #[test]
    fn constant_factors_lose_trailing_zeros() {
        assert_eq!(const_factor_bits(6, true), Some(3));
        assert_eq!(const_factor_bits(7, true), Some(4));
        assert_eq!(const_factor_bits(15, true), Some(5));
        assert_eq!(const_factor_bits(24_204_406, false), Some(24));
        assert_eq!(const_factor_bits(64, true), None);
        assert_eq!(const_factor_bits(1, true), None);
        assert_eq!(const_factor_bits(0, false), None);
    }

    /// Block RAM shapes: a 256×128 ROM in two RAMB36 (72-bit words), a 1024×16 RAM in one RAMB18.
    #[test]
    fn block_ram_takes_the_cheapest_shape() {
        assert_eq!(bram18(256, 128), 4);
        assert_eq!(bram18(1024, 16), 1);
        assert_eq!(ram(1024, 16), (1, 0));
        assert_eq!(ram(64, 80), (0, 108));
        assert_eq!(ram(2, 8), (0, 0));
        // 128×128: RAM64M slices (cost ≈ 748) lose to two RAMB36 in 72-bit words (514).
        assert_eq!(ram(128, 128), (4, 0));
        // 128×16: two RAM64M slices (12 primitives, cost ≈ 98) beat RAM128X1D (130).
        assert_eq!(ram(128, 16), (0, 48));
        // 65×50: three RAM32M slices (27 primitives, cost 255.5) beat a RAMB36 (259).
        assert_eq!(ram(65, 50), (0, 108));
    }

    /// memory_libmap's ROM choice: a 384×16 ROM (logic 96 < RAMB18 131) and a 64×128 one stay
    /// logic; a 1024×16 ROM (logic 256) takes a RAMB18; a ROM that asks for block RAM gets the
    /// packing of address slices into wide words (3×320 bits: 9 RAMB18 in 512×36).
    #[test]
    fn roms_go_to_block_ram_only_when_cheaper_than_logic() {
        assert_eq!(rom(384, 16), (0, 96));
        assert_eq!(rom(64, 128), (0, 128));
        assert_eq!(rom(1024, 16), (1, 0));
        assert_eq!(rom(4096, 16), (4, 0));
        assert_eq!(rom_bram18(3, 320), 9);
        assert_eq!(rom_bram18(2048, 9), 1);
        // Two read ports (gelu's shared table): 34239×16 in 16 true-dual-port RAMB36.
        assert_eq!(rom_ports(34239, 16, 2), (32, 0));
        assert_eq!(rom_ports(1101, 10, 2), (0, 2 * 10 * 18));
    }

    /// Constant columns: lanes of 4 bits, the second lane's top bit and the first lane's low
    /// bit never change.
    #[test]
    fn constant_rom_columns_are_not_counted() {
        let words = vec![vec![0b0010, 0b0001], vec![0b1100, 0b0110], vec![0b0110, 0b0011]];
        assert_eq!(varying_bits(&words, 4), 3 + 3);
        assert_eq!(varying_bits(&[vec![-1, 2]], 4), 0);
        assert_eq!(varying_bits(&[vec![-1], vec![1]], 4), 3);
    }
}
