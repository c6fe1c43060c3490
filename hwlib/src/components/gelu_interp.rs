//! The interpolated form of `gelu` (`FORM = 1`): a small table of breakpoints every `2^S` input
//! codes, linear interpolation between them in exact integer arithmetic, and one cast into the
//! output format. The RTL (`rtl/mase_gelu.sv`, generate branch `g_interp`) does the same integer
//! operations, so this model is bit-exact to it by construction.
//!
//! # Exact algorithm
//!
//! Input codes `x` (`W` bits, `Fi` fractional bits) inside the table range `[LO, HI]`; `S` =
//! `SEG_BITS`, `G` = `GUARD_BITS`, `A = Fo + G − Fi` (`Fo` the output's fractional bits).
//! Breakpoint `j` sits at input code `x_j = LO + j · 2^S` and holds
//! `y_j = round(f(x_j · 2^-Fi) · 2^(Fo+G)) + c` (`G` guard bits below the output LSB; round half
//! up; `c` a constant offset, below). Word `k` of the ROM packs `y_k` (high `YW` bits) and
//! `d_k = y_(k+1) − y_k` (low `DW` bits). For `o = x − LO`, `k = o >> S`, `r = o mod 2^S`:
//!
//! `v = y_k + ⌊d_k · r / 2^S⌋`, output `cast_code(v, Fo + G, out)` (the output rounding and
//! overflow modes).
//!
//! The offset `c` is chosen, by evaluating every input code of the range, to minimise the
//! largest error of the *output code* against `f` in f64 (rounding modes differ: truncation
//! wants `v` at or above `f`, round-to-nearest wants the error centred); ties go to the smallest
//! `|c|`, then the lower `c`. [`seg_bits`] picks the largest `S` whose worst case over every
//! input code is at most 1 output LSB. Everything here uses the deterministic [`super::gelu`]
//! functions, so the tables are the same bytes on every machine.
//!
//! # Widths
//!
//! `YW = max(max(W − 1, S) + A + 3, G + 4)` and `DW = max(S + A + 3, 3)`: `|f(x)| ≤ max(|x|,
//! 0.17)` and `|f'| < 1.13` for GELU's shapes, so the breakpoints (up to `2^S` codes past the
//! input range) and their differences fit with a margin for the offset. The word is
//! `YW + DW ≤ 62` bits (checked by `validate`).

use mase_ir::fixed::{cast_code, from_f64, to_f64, FixedFormat, Overflow, Rounding};

/// One interpolated table: formats, range and segment/guard bits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InterpSpec {
    /// Input format (signed).
    pub fi: FixedFormat,
    /// Output format with its rounding and overflow modes.
    pub fo: FixedFormat,
    /// Lowest tabulated input code.
    pub lo: i64,
    /// Highest tabulated input code.
    pub hi: i64,
    /// `S`: input codes per segment are `2^S`.
    pub seg: u32,
    /// `G`: guard bits of the breakpoints below the output LSB.
    pub guard: u32,
}

/// Largest packed word (`YW + DW`) the component accepts: words are held in `i64`.
pub const MAX_WORD_BITS: i64 = 62;

impl InterpSpec {
    /// `A = Fo + G − Fi`: the shift from input codes to breakpoint units.
    pub fn a(&self) -> i64 {
        self.fo.frac as i64 + self.guard as i64 - self.fi.frac as i64
    }

    /// `(YW, DW)`: bits of a breakpoint and of a difference (see the module documentation).
    pub fn widths(&self) -> (u32, u32) {
        let (w, s, a, g) = (self.fi.width as i64, self.seg as i64, self.a(), self.guard as i64);
        let yw = ((w - 1).max(s) + a + 3).max(g + 4);
        let dw = (s + a + 3).max(3);
        (yw.clamp(1, 200) as u32, dw.clamp(1, 200) as u32)
    }

    /// Bits per ROM word, `YW + DW`.
    pub fn word_bits(&self) -> i64 {
        let (yw, dw) = self.widths();
        (yw + dw) as i64
    }

    /// ROM words: `((HI − LO) >> S) + 1`.
    pub fn depth(&self) -> usize {
        (((self.hi - self.lo).max(0) >> self.seg) + 1) as usize
    }

    /// Fractional bits of `v`, `Fo + G`.
    fn v_frac(&self) -> i32 {
        self.fo.frac + self.guard as i32
    }

    /// The breakpoints `y_j` without offset, `j = 0..=depth`.
    fn breakpoints(&self, f: &dyn Fn(f64) -> f64) -> Vec<i64> {
        let fmt = FixedFormat::signed(63, self.v_frac()).with_modes(Rounding::Rnd, Overflow::Sat);
        (0..=self.depth() as i64)
            .map(|j| from_f64(f(to_f64(self.lo + (j << self.seg), &self.fi)), &fmt))
            .collect()
    }

    /// `v` of input code `x` (in `[LO, HI]`) from unpacked breakpoints (offset included in them).
    fn v_of(&self, y: &[i64], x: i64) -> i64 {
        let o = x - self.lo;
        let (k, r) = ((o >> self.seg) as usize, o & ((1i64 << self.seg) - 1));
        y[k] + (((y[k + 1] - y[k]) as i128 * r as i128) >> self.seg) as i64
    }

    /// The input codes of the range whose reference `f(x)` lies inside the output range (the
    /// others saturate whatever the table holds), with the reference.
    fn references(&self, f: &dyn Fn(f64) -> f64) -> Vec<(i64, f64)> {
        let (lo, hi) =
            (to_f64(self.fo.min_code(), &self.fo), to_f64(self.fo.max_code(), &self.fo) + self.fo.lsb());
        (self.lo..=self.hi)
            .map(|x| (x, f(to_f64(x, &self.fi))))
            .filter(|(_, r)| *r >= lo && *r < hi)
            .collect()
    }

    /// Worst error in output LSBs over `refs` of the breakpoints `y` shifted by `c`; stops early
    /// (returning a value above `bound`) once it exceeds `bound`.
    fn max_error(&self, y: &[i64], c: i64, refs: &[(i64, f64)], bound: f64) -> f64 {
        let lsb = self.fo.lsb();
        let mut worst = 0.0f64;
        for &(x, r) in refs {
            let code = cast_code((self.v_of(y, x) + c) as i128, self.v_frac(), &self.fo);
            worst = worst.max((to_f64(code, &self.fo) - r).abs() / lsb);
            if worst > bound {
                break;
            }
        }
        worst
    }

    /// The offset `c` (breakpoint units) with the smallest worst-case error, and that error (in
    /// output LSBs; 0 when no reference lies in the output range).
    pub fn best_offset(&self, f: &dyn Fn(f64) -> f64) -> (i64, f64) {
        self.best_offset_of(&self.references(f), f)
    }

    /// [`InterpSpec::best_offset`] with the references computed ([`InterpSpec::references`]).
    fn best_offset_of(&self, refs: &[(i64, f64)], f: &dyn Fn(f64) -> f64) -> (i64, f64) {
        if refs.is_empty() {
            return (0, 0.0);
        }
        let y = self.breakpoints(f);
        let scale = 1.0 / FixedFormat::signed(63, self.v_frac()).lsb();
        // Errors of v (without offset) in breakpoint units. An offset moves them all by the same
        // amount; the best one lies within [−max, −min] (plus the final rounding's reach).
        let (mut emin, mut emax) = (f64::INFINITY, f64::NEG_INFINITY);
        for &(x, r) in refs {
            let e = self.v_of(&y, x) as f64 - r * scale;
            emin = emin.min(e);
            emax = emax.max(e);
        }
        let one = 1i64 << self.guard;
        let lo_c = ((-emax).floor() as i64 - one).max(-4 * one);
        let hi_c = ((-emin).ceil() as i64 + one).min(4 * one);
        let mut best = (0i64, self.max_error(&y, 0, refs, f64::INFINITY));
        for c in lo_c..=hi_c {
            let e = self.max_error(&y, c, refs, best.1);
            if e < best.1 || (e == best.1 && (c.abs(), c) < (best.0.abs(), best.0)) {
                best = (c, e);
            }
        }
        best
    }

    /// The ROM words: `y_k · 2^DW + (d_k mod 2^DW)` for `k = 0..depth`, offset `c` from
    /// [`InterpSpec::best_offset`].
    pub fn table(&self, f: &dyn Fn(f64) -> f64) -> Vec<i64> {
        let (c, _) = self.best_offset(f);
        let y = self.breakpoints(f);
        let (_, dw) = self.widths();
        let mask = (1i64 << dw) - 1;
        (0..self.depth()).map(|k| ((y[k] + c) << dw) + ((y[k + 1] - y[k]) & mask)).collect()
    }

    /// The output code of input code `x` in `[LO, HI]` from the ROM words.
    pub fn element(&self, words: &[i64], x: i64) -> i64 {
        let (_, dw) = self.widths();
        let o = x - self.lo;
        let (k, r) = ((o >> self.seg) as usize, o & ((1i64 << self.seg) - 1));
        let w = words[k];
        let y = w >> dw;
        let d = (w << (64 - dw)) >> (64 - dw);
        cast_code(y as i128 + ((d as i128 * r as i128) >> self.seg), self.v_frac(), &self.fo)
    }
}

/// The largest `S` (up to `min(12, W − 1)`) whose interpolated table keeps every input code of
/// `spec`'s range within 1 output LSB of `f` (`spec.seg` is ignored); 0 when none does (then
/// the form is a full table with guard bits).
pub fn seg_bits(spec: &InterpSpec, f: &dyn Fn(f64) -> f64) -> u32 {
    let top = 12.min(spec.fi.width.saturating_sub(1));
    let refs = spec.references(f);
    (1..=top).rev().find(|&s| InterpSpec { seg: s, ..*spec }.best_offset_of(&refs, f).1 <= 1.0).unwrap_or(0)
}
