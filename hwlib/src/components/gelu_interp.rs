//! The interpolated form of `gelu` (`FORM = 1`): a small table of linear segments whose size
//! depends on the input's band (fine near 0, where GELU bends, coarse in the nearly straight or
//! saturated tails), linear interpolation in exact integer arithmetic, and one cast into the
//! output format. The RTL (`rtl/mase_gelu.sv`, generate branch `g_interp`) does the same integer
//! operations, so this model is bit-exact to it by construction.
//!
//! # Bands
//!
//! The table range `[LO, HI]` is cut at the codes `−B_out ≤ −B_mid ≤ B_mid ≤ B_out` (clamped to
//! `[LO, HI + 1]`) into five bands: outer `[LO, −B_out)`, middle `[−B_out, −B_mid)`, inner
//! `[−B_mid, B_mid)`, middle `[B_mid, B_out)`, outer `[B_out, HI]`, with segment bits
//! `S_out, S_mid, S_in, S_mid, S_out` (GELU's curvature `φ(x)(2 − x²)` is even, so the bands are
//! symmetric). `B_mid = B_out ≥ 32768` leaves one band: uniform segments of `2^S_in` codes.
//!
//! # Odd functions (`odd`, tanh)
//!
//! With `odd` set (the lookup's `SHAPE = 1`, [`super::tanh`]) the range `[LO, HI] = [0, HI]`
//! holds magnitudes: code `x` is looked up at `m = min(|x|, HI)` and its output is `c(m)` for
//! `x ≥ 0` and `−c(m)` for `x < 0` ([`neg_sat`]), `c(m)` the output code below. The bands, words and
//! chords are those of `[0, HI]`; the error checks (offset choice, [`choose`]) take every input
//! code of the format, negative and clamped ones included, with its own reference `f(x)`.
//!
//! # Exact algorithm
//!
//! Input codes `x` (`W` bits, `Fi` fractional bits); `G` = `GUARD_BITS`, `A = Fo + G − Fi`
//! (`Fo` the output's fractional bits), `M = S_max` the largest segment bits of a non-empty
//! band. In a band with start `s0` and segment bits `S`, the segments sit on the absolute code
//! grid: code `x` is in word `k = (x >> S) + off` (`off = base − (s0 >> S)`, `base` the words of
//! the bands before), at offset `r = x mod 2^S`. Word `k` packs `y_k` (high `YW` bits) and `d_k`
//! (low `DW` bits), and
//!
//! `v = y_k + ⌊d_k · (r · 2^(M−S)) / 2^M⌋` (= `y_k + ⌊d_k · r / 2^S⌋`), output
//! `cast_code(v + c, Fo + G, out)` with the output rounding and overflow modes.
//!
//! For the segment starting at grid code `a`, `d_k = ŷ(a + 2^S) − ŷ(a)` with
//! `ŷ(x) = round(f(x · 2^-Fi) · 2^(Fo+G))` (the chord), and `y_k = ŷ(a) − m_k` where `m_k`
//! centres the segment's interpolation error over its codes whose `f` lies in the output range
//! (the chord of a convex piece lies above it, of a concave piece below: centring each segment
//! makes the worst error the largest segment's half spread, not the sum of both signs). The
//! common offset `c` (folded into every `y_k`) is chosen, by evaluating every input code of the
//! range, to minimise the largest error of the *output code* against `f` in f64; ties go to the
//! smallest `|c|`, then the lower `c`.
//!
//! [`choose`] picks the bands: for each `S` it measures the spread of every grid segment
//! over every input code, takes the band thresholds each segment size allows, and keeps the
//! combination `S_in ≤ S_mid ≤ S_out` with the fewest table bits whose worst case over every
//! input code is at most 1 output LSB (checked exactly; a tighter spread budget is tried when
//! the check fails). Everything uses deterministic functions, so the tables are the same bytes
//! on every machine.
//!
//! # Widths
//!
//! `YW = max(max(W − 1, M) + A + 3, G + 4)` and `DW = max(M + A + 3, 3)`: `|f(x)| ≤ max(|x|,
//! 0.17)` and `|f'| < 1.13` for GELU's shapes (and tanh's: `|tanh x| ≤ |x|`, `|tanh'| ≤ 1), so the breakpoints (up to `2^M` codes past the
//! input range) and their differences fit with a margin for the offsets. The word is
//! `YW + DW ≤ 62` bits (checked by `validate`).

use mase_ir::fixed::{cast_code, from_f64, to_f64, FixedFormat, Overflow, Rounding};

/// One interpolated table: formats, range, bands and guard bits.
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
    /// Segment bits `[S_in, S_mid, S_out]` of the inner, middle and outer bands.
    pub seg: [u32; 3],
    /// Band thresholds `[B_mid, B_out]` (codes): the inner band is `−B_mid ≤ x < B_mid`, the
    /// middle one `−B_out ≤ x < B_out` outside it.
    pub band: [i64; 2],
    /// `G`: guard bits of the breakpoints below the output LSB.
    pub guard: u32,
    /// Odd symmetry: `[lo, hi]` holds magnitudes (`lo = 0`), code `x` reads `min(|x|, hi)` and
    /// negative codes negate the output (see the module documentation).
    pub odd: bool,
}

/// One band of a table: codes `[start, end)`, segment bits, and the word offset (`k = (x >> seg)
/// + off`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// First code of the band.
    pub start: i64,
    /// One past the last code (equal to `start` when the band is empty).
    pub end: i64,
    /// Segment bits of the band.
    pub seg: u32,
    /// Word of code `x`: `(x >> seg) + off`.
    pub off: i64,
    /// Words of the band.
    pub words: i64,
}

/// Largest packed word (`YW + DW`) the component accepts: words are held in `i64`.
pub const MAX_WORD_BITS: i64 = 62;

/// A band threshold that disables the band (every 16-bit code is inside it).
pub const BAND_NONE: i64 = 32768;

impl InterpSpec {
    /// The gelu parameters that carry this table: range `TABLE_NEG`/`TABLE_POS`, `FORM`
    /// (1 when `interpolated`, else the full table over the same range), segment bits, bands and
    /// guard bits. The binding, the accuracy test and the `nonlinear_error` example all build
    /// their instances from it.
    pub fn table_params(&self, interpolated: bool) -> Vec<(&'static str, i64)> {
        vec![
            ("TABLE_NEG", -self.lo),
            ("TABLE_POS", self.hi),
            ("FORM", interpolated as i64),
            ("SEG_BITS", self.seg[0] as i64),
            ("SEG_BITS_MID", self.seg[1] as i64),
            ("SEG_BITS_OUT", self.seg[2] as i64),
            ("BAND_MID", self.band[0]),
            ("BAND_OUT", self.band[1]),
            ("GUARD_BITS", self.guard as i64),
        ]
    }

    /// A spec with one band of uniform segments of `2^seg` codes.
    pub fn uniform(fi: FixedFormat, fo: FixedFormat, lo: i64, hi: i64, seg: u32, guard: u32) -> Self {
        InterpSpec { fi, fo, lo, hi, seg: [seg; 3], band: [BAND_NONE; 2], guard, odd: false }
    }

    /// The same spec with one band of uniform segments of `2^seg` codes.
    fn with_uniform(&self, seg: u32) -> Self {
        InterpSpec { seg: [seg; 3], band: [BAND_NONE; 2], ..*self }
    }

    /// `A = Fo + G − Fi`: the shift from input codes to breakpoint units.
    pub fn a(&self) -> i64 {
        self.fo.frac as i64 + self.guard as i64 - self.fi.frac as i64
    }

    /// The five bands, outer-negative first (see the module documentation).
    pub fn bands(&self) -> [Band; 5] {
        let end = (self.hi + 1).max(self.lo);
        let cl = |v: i64| v.max(self.lo).min(end);
        let mut st = [self.lo, cl(-self.band[1]), cl(-self.band[0]), cl(self.band[0]), cl(self.band[1]), end];
        for i in 1..6 {
            st[i] = st[i].max(st[i - 1]);
        }
        let sh = [self.seg[2], self.seg[1], self.seg[0], self.seg[1], self.seg[2]].map(|s| s.min(16));
        let mut base = 0i64;
        let mut out = [Band { start: 0, end: 0, seg: 0, off: 0, words: 0 }; 5];
        for i in 0..5 {
            let (s0, s1, s) = (st[i], st[i + 1], sh[i]);
            let words = if s1 > s0 { ((s1 - 1) >> s) - (s0 >> s) + 1 } else { 0 };
            out[i] = Band { start: s0, end: s1, seg: s, off: base - (s0 >> s), words };
            base += words;
        }
        out
    }

    /// `M`: the largest segment bits of a non-empty band.
    pub fn seg_max(&self) -> u32 {
        self.bands().iter().filter(|b| b.words > 0).map(|b| b.seg).max().unwrap_or(self.seg[0].min(16))
    }

    /// `(YW, DW)`: bits of a breakpoint and of a difference (see the module documentation).
    pub fn widths(&self) -> (u32, u32) {
        let (w, m, a, g) = (self.fi.width as i64, self.seg_max() as i64, self.a(), self.guard as i64);
        let yw = ((w - 1).max(m) + a + 3).max(g + 4);
        let dw = (m + a + 3).max(3);
        (yw.clamp(1, 200) as u32, dw.clamp(1, 200) as u32)
    }

    /// Bits per ROM word, `YW + DW`.
    pub fn word_bits(&self) -> i64 {
        let (yw, dw) = self.widths();
        (yw + dw) as i64
    }

    /// ROM words (at least 1).
    pub fn depth(&self) -> usize {
        self.bands().iter().map(|b| b.words).sum::<i64>().max(1) as usize
    }

    /// Table bits, `depth · (YW + DW)`.
    pub fn bits(&self) -> u64 {
        self.depth() as u64 * self.word_bits() as u64
    }

    /// Fractional bits of `v`, `Fo + G`.
    fn v_frac(&self) -> i32 {
        self.fo.frac + self.guard as i32
    }

    /// Word `k` and normalised offset `r · 2^(M−S)` of code `x` in `[LO, HI]`.
    fn locate(bands: &[Band; 5], m: u32, x: i64) -> (usize, i64) {
        let b = bands[1..].iter().rev().find(|b| x >= b.start).unwrap_or(&bands[0]);
        let r = x & ((1i64 << b.seg) - 1);
        (((x >> b.seg) + b.off) as usize, r << (m - b.seg))
    }

    /// `v` of code `x` from unpacked words `(y_k, d_k)`.
    fn v_of(bands: &[Band; 5], m: u32, words: &[(i64, i64)], x: i64) -> i64 {
        let (k, r) = Self::locate(bands, m, x);
        let (y, d) = words[k];
        y + ((d as i128 * r as i128) >> m) as i64
    }

    /// The words `(y_k, d_k)` without the common offset: chords, each centred over its codes
    /// in the output range (`ctx` holds `f` of every code of the range).
    fn words(&self, ctx: &Ctx) -> Vec<(i64, i64)> {
        let bands = self.bands();
        let m = self.seg_max();
        let mut out = Vec::with_capacity(self.depth());
        for b in bands.iter().filter(|b| b.words > 0) {
            for g in (b.start >> b.seg)..=((b.end - 1) >> b.seg) {
                let a = g << b.seg;
                let ya = ctx.yhat(a);
                let d = ctx.yhat(a + (1 << b.seg)) - ya;
                let (mut emin, mut emax) = (f64::INFINITY, f64::NEG_INFINITY);
                for x in a.max(b.start)..(a + (1 << b.seg)).min(b.end) {
                    if let Some(r) = ctx.reference(x) {
                        let rn = (x - a) << (m - b.seg);
                        let e = (ya + ((d as i128 * rn as i128) >> m) as i64) as f64 - r * ctx.scale;
                        emin = emin.min(e);
                        emax = emax.max(e);
                    }
                }
                let centre = if emin.is_finite() { ((emin + emax) / 2.0).round() as i64 } else { 0 };
                out.push((ya - centre, d));
            }
        }
        out
    }

    /// Worst error in output LSBs over the references of the words shifted by `c`; stops early
    /// (returning a value above `bound`) once it exceeds `bound`.
    fn max_error(&self, words: &[(i64, i64)], c: i64, ctx: &Ctx, bound: f64) -> f64 {
        let (bands, m, lsb) = (self.bands(), self.seg_max(), self.fo.lsb());
        let mut worst = 0.0f64;
        for &(x, neg, r) in &ctx.checks {
            let v = Self::v_of(&bands, m, words, x) + c;
            let code = cast_code(v as i128, self.v_frac(), &self.fo);
            let code = if neg { neg_sat(code, &self.fo) } else { code };
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
        self.best_offset_of(&Ctx::new(self, f))
    }

    /// [`InterpSpec::best_offset`] with the function values computed.
    fn best_offset_of(&self, ctx: &Ctx) -> (i64, f64) {
        if ctx.checks.is_empty() {
            return (0, 0.0);
        }
        let words = self.words(ctx);
        let (bands, m) = (self.bands(), self.seg_max());
        // Errors of v (without offset) in breakpoint units. An offset moves them all by the same
        // amount; the best one lies within [−max, −min] (plus the final rounding's reach).
        // (A negated output's error is that of v against −f(x).)
        let (mut emin, mut emax) = (f64::INFINITY, f64::NEG_INFINITY);
        for &(x, neg, r) in &ctx.checks {
            let r = if neg { -r } else { r };
            let e = Self::v_of(&bands, m, &words, x) as f64 - r * ctx.scale;
            emin = emin.min(e);
            emax = emax.max(e);
        }
        let one = 1i64 << self.guard;
        let lo_c = ((-emax).floor() as i64 - one).max(-4 * one);
        let hi_c = ((-emin).ceil() as i64 + one).min(4 * one);
        let mut best = (0i64, self.max_error(&words, 0, ctx, f64::INFINITY));
        for c in lo_c..=hi_c {
            let e = self.max_error(&words, c, ctx, best.1);
            if e < best.1 || (e == best.1 && (c.abs(), c) < (best.0.abs(), best.0)) {
                best = (c, e);
            }
        }
        best
    }

    /// The ROM words: `(y_k + c) · 2^DW + (d_k mod 2^DW)`, offset `c` from
    /// [`InterpSpec::best_offset`].
    pub fn table(&self, f: &dyn Fn(f64) -> f64) -> Vec<i64> {
        let ctx = Ctx::new(self, f);
        let (c, _) = self.best_offset_of(&ctx);
        let (_, dw) = self.widths();
        let mask = (1i64 << dw) - 1;
        self.words(&ctx).iter().map(|&(y, d)| ((y + c) << dw) + (d & mask)).collect()
    }

    /// The output code of input code `x` from the ROM words: `x` in `[LO, HI]`, or with `odd`
    /// any code of the input format.
    pub fn element(&self, words: &[i64], x: i64) -> i64 {
        if self.odd {
            let code = self.code_at(words, x.abs().min(self.hi));
            return if x < 0 { neg_sat(code, &self.fo) } else { code };
        }
        self.code_at(words, x)
    }

    /// The output code of table code `x` in `[LO, HI]` from the ROM words.
    fn code_at(&self, words: &[i64], x: i64) -> i64 {
        let (_, dw) = self.widths();
        let m = self.seg_max();
        let (k, r) = Self::locate(&self.bands(), m, x);
        let w = words[k];
        let y = w >> dw;
        let d = (w << (64 - dw)) >> (64 - dw);
        cast_code(y as i128 + ((d as i128 * r as i128) >> m), self.v_frac(), &self.fo)
    }
}

/// `−code` in `fo`, saturating (the most negative code becomes the largest), as the lookup
/// negates an odd function's output for negative inputs.
pub fn neg_sat(code: i64, fo: &FixedFormat) -> i64 {
    (-code).min(fo.max_code())
}

/// `f` of every code of a spec's range, whether it lies in the output range, and `ŷ`.
struct Ctx<'a> {
    /// The function.
    f: &'a dyn Fn(f64) -> f64,
    /// Input format.
    fi: FixedFormat,
    /// First code of `vals`.
    lo: i64,
    /// `f(x)` for `x = lo..`, `None` where it lies outside the output range (the output
    /// saturates there whatever the table holds).
    vals: Vec<Option<f64>>,
    /// The checked input codes, as `(table code, negated, f(x))`: every code of the range whose
    /// `f` lies in the output range (with `odd`: every code of the input format, at
    /// `min(|x|, hi)`, negated below 0).
    checks: Vec<(i64, bool, f64)>,
    /// `2^(Fo+G)`.
    scale: f64,
    /// Format of `v` (round half up, saturating).
    vfmt: FixedFormat,
}

impl<'a> Ctx<'a> {
    fn new(spec: &InterpSpec, f: &'a dyn Fn(f64) -> f64) -> Self {
        let fo = spec.fo;
        let (lo, hi) = (to_f64(fo.min_code(), &fo), to_f64(fo.max_code(), &fo) + fo.lsb());
        let inside = |x: i64| Some(f(to_f64(x, &spec.fi))).filter(|r| *r >= lo && *r < hi);
        let vals: Vec<Option<f64>> = (spec.lo..=spec.hi).map(inside).collect();
        let checks = if spec.odd {
            (spec.fi.min_code()..=spec.fi.max_code())
                .filter_map(|x| inside(x).map(|r| (x.abs().min(spec.hi), x < 0, r)))
                .collect()
        } else {
            (spec.lo..).zip(&vals).filter_map(|(x, r)| r.map(|r| (x, false, r))).collect()
        };
        let vfmt = FixedFormat::signed(63, spec.v_frac()).with_modes(Rounding::Rnd, Overflow::Sat);
        Ctx { f, fi: spec.fi, lo: spec.lo, checks, vals, scale: 1.0 / vfmt.lsb(), vfmt }
    }

    /// The reference `f(x)` of code `x` of the range, if inside the output range.
    fn reference(&self, x: i64) -> Option<f64> {
        self.vals.get((x - self.lo) as usize).copied().flatten()
    }

    /// `ŷ(x) = round(f(x · 2^-Fi) · 2^(Fo+G))` for any code `x`.
    fn yhat(&self, x: i64) -> i64 {
        from_f64((self.f)(to_f64(x, &self.fi)), &self.vfmt)
    }
}

/// The bands and segment bits with the fewest table bits that keep every input code of
/// `spec`'s range within 1 output LSB of `f` (`spec.seg` and `spec.band` are ignored); uniform
/// segments of one code (a table with guard bits) when nothing coarser does.
pub fn choose(spec: &InterpSpec, f: &dyn Fn(f64) -> f64) -> InterpSpec {
    let top = 12.min(spec.fi.width.saturating_sub(1));
    let base = spec.with_uniform(0);
    let ctx = Ctx::new(&base, f);
    if ctx.checks.is_empty() {
        return spec.with_uniform(top);
    }
    // Spread (breakpoint units) of every grid segment of every size, chord centred.
    let spreads: Vec<Vec<(i64, i64, f64)>> = (0..=top)
        .map(|s| {
            let single = spec.with_uniform(s);
            let b = single.bands()[2];
            ((b.start >> s)..=((b.end - 1) >> s))
                .map(|g| {
                    let a = g << s;
                    let ya = ctx.yhat(a);
                    let d = ctx.yhat(a + (1 << s)) - ya;
                    let (cs, ce) = (a.max(spec.lo), (a + (1 << s)).min(spec.hi + 1));
                    let (mut emin, mut emax) = (f64::INFINITY, f64::NEG_INFINITY);
                    for x in cs..ce {
                        if let Some(r) = ctx.reference(x) {
                            let e = (ya + ((d as i128 * (x - a) as i128) >> s) as i64) as f64 - r * ctx.scale;
                            emin = emin.min(e);
                            emax = emax.max(e);
                        }
                    }
                    (cs, ce, if emin.is_finite() { emax - emin } else { 0.0 })
                })
                .collect()
        })
        .collect();
    let one = (1i64 << spec.guard) as f64;
    for budget in (4..=16).rev() {
        let beta = budget as f64 / 16.0 * one;
        // Smallest threshold t such that segments of 2^s codes are within budget outside
        // [−t, t).
        let t: Vec<i64> = spreads
            .iter()
            .map(|segs| {
                segs.iter()
                    .filter(|(_, _, sp)| *sp > beta)
                    .map(|&(cs, ce, _)| (-cs).max(ce))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut best: Option<InterpSpec> = None;
        for s0 in (0..=top).filter(|&s| t[s as usize] == 0) {
            for s1 in s0..=top {
                for s2 in s1..=top {
                    let b1 = t[s1 as usize].min(BAND_NONE);
                    let b2 = t[s2 as usize].max(b1).min(BAND_NONE);
                    let cand = InterpSpec { seg: [s0, s1, s2], band: [b1, b2], ..*spec };
                    if cand.word_bits() <= MAX_WORD_BITS && best.is_none_or(|b| cand.bits() < b.bits()) {
                        best = Some(cand);
                    }
                }
            }
        }
        if let Some(b) = best {
            if b.best_offset_of(&ctx).1 <= 1.0 {
                return b;
            }
        }
    }
    base
}
