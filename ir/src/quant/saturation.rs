//! Saturation reports: how many elements each cast of a quantized run clipped or wrapped.
//!
//! An element **overflows** a cast when the overflow step of [`crate::fixed::cast_code`]
//! changes its rounded value: the value lies outside the format's codes after rounding, or
//! (SAT_SYM only) it is the most negative code, which SAT_SYM replaces by `-max`. Under the SAT
//! family (SAT, SAT_ZERO, SAT_SYM) the element is counted as **clipped**, under WRAP as
//! **wrapped**. Non-finite floats overflow too (±∞ as ±2^1024, see
//! [`crate::fixed::from_f64`]); NaN becomes 0 and is not counted.
//!
//! Counts are kept per cast site (see [`SaturationCounter`]); [`SaturationReport`] is what
//! `mase run --quantized`, `mase accuracy` and `mase sim` print, with a warning for every site
//! whose overflow fraction exceeds [`WARN_FRACTION`].

use std::collections::BTreeMap;

use ndarray::ArrayD;
use serde::Serialize;

use crate::fixed::{cast_code, decompose_f64, FixedFormat, Overflow};
use crate::tensor::Tensor;

use super::exec::QValue;

/// A site warns when more than this fraction of its elements clipped or wrapped (0.1 %).
pub const WARN_FRACTION: f64 = 0.001;

/// The overflow counts of one cast site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SiteCounts {
    /// The format cast into, as [`FixedFormat`]'s `Display` prints it (`fixed<s16.10 TRN SAT>`).
    pub format: String,
    /// Elements a SAT-family cast changed (saturated, zeroed or mirrored).
    pub clipped: u64,
    /// Elements a WRAP cast wrapped.
    pub wrapped: u64,
    /// Elements cast.
    pub total: u64,
}

impl SiteCounts {
    /// Fraction of the elements that clipped or wrapped (0 when nothing was cast).
    pub fn fraction(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            (self.clipped + self.wrapped) as f64 / self.total as f64
        }
    }
}

/// Overflow counts by cast site, accumulated over one or more quantized runs.
///
/// Sites: a node's name for the cast of its result into `data_out_0` (for a placeholder that is
/// the quantization of the graph input), and `NODE/data_in_K` for the cast of an input of that
/// node when the value it receives is not already in its `data_in_K` format (a float value, or
/// codes of another format). Casts between identical formats are no casts and are not counted.
/// Every site that cast is listed, also with zero events.
///
/// Sites that carry an additive attention mask (their calibration saw mask values, see
/// [`super::is_mask_value`]) are marked with [`SaturationCounter::mark_mask`]: saturating there is
/// what the mask means, so their counts go into one `mask` summary instead of warnings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SaturationCounter {
    sites: BTreeMap<String, (FixedFormat, u64, u64, u64)>,
    mask_sites: std::collections::BTreeSet<String>,
}

/// True when the overflow step changed the value `code × 2^-frac` cast into `fmt`, whose
/// result was `result`.
fn overflowed(code: i128, frac: i32, fmt: &FixedFormat, result: i64) -> bool {
    // The rounded value before the overflow step, through two signed 64-bit formats: when it
    // fits in 64 bits both return it; otherwise SAT gives an extreme code and SAT_ZERO gives 0,
    // and every format's codes fit in 64 bits, so such a value overflows `fmt` as well.
    let wide = FixedFormat { signed: true, width: 64, overflow: Overflow::Sat, ..*fmt };
    let sat = cast_code(code, frac, &wide);
    let zero = cast_code(code, frac, &FixedFormat { overflow: Overflow::SatZero, ..wide });
    sat != zero || sat != result
}

impl SaturationCounter {
    /// An empty counter.
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks `site` as one that carries an additive mask.
    pub fn mark_mask(&mut self, site: &str) {
        if !self.mask_sites.contains(site) {
            self.mask_sites.insert(site.to_string());
        }
    }

    fn add(&mut self, site: &str, fmt: &FixedFormat, events: u64, total: u64) {
        let e = self.sites.entry(site.to_string()).or_insert((*fmt, 0, 0, 0));
        if fmt.overflow == Overflow::Wrap {
            e.2 += events;
        } else {
            e.1 += events;
        }
        e.3 += total;
    }

    /// Counts the cast of wide codes at `frac` fractional bits into `fmt`, whose results are
    /// `cast` (same shape).
    pub fn record_wide(
        &mut self,
        site: &str,
        codes: &ArrayD<i128>,
        frac: i32,
        fmt: &FixedFormat,
        cast: &ArrayD<i64>,
    ) {
        let events = codes.iter().zip(cast.iter()).filter(|(c, r)| overflowed(**c, frac, fmt, **r)).count();
        self.add(site, fmt, events as u64, codes.len() as u64);
    }

    /// Counts the cast of `value` into `fmt` (see [`QValue::cast_to`]), whose results are `cast`.
    /// Nothing is counted when `value` already holds codes of `fmt`.
    pub fn record_value(&mut self, site: &str, value: &QValue, fmt: &FixedFormat, cast: &ArrayD<i64>) {
        let (events, total) = match value {
            QValue::Fixed { format, .. } if format == fmt => return,
            QValue::Fixed { codes, format } => (
                codes
                    .iter()
                    .zip(cast.iter())
                    .filter(|(c, r)| overflowed(**c as i128, format.frac, fmt, **r))
                    .count(),
                codes.len(),
            ),
            QValue::Float(t @ (Tensor::I64(_) | Tensor::I32(_) | Tensor::Bool(_))) => {
                let a = t.to_i64();
                (
                    a.iter().zip(cast.iter()).filter(|(c, r)| overflowed(**c as i128, 0, fmt, **r)).count(),
                    a.len(),
                )
            }
            QValue::Float(Tensor::F32(a)) => (
                a.iter()
                    .zip(cast.iter())
                    .filter(|(x, r)| match decompose_f64(f64::from(**x)) {
                        Some((c, f)) => overflowed(c, f, fmt, **r),
                        None => false,
                    })
                    .count(),
                a.len(),
            ),
        };
        self.add(site, fmt, events as u64, total as u64);
    }

    /// The counts so far, with a warning for every site over [`WARN_FRACTION`].
    pub fn report(&self) -> SaturationReport {
        let sites: BTreeMap<String, SiteCounts> = self
            .sites
            .iter()
            .map(|(k, (f, c, w, t))| {
                (k.clone(), SiteCounts { format: f.to_string(), clipped: *c, wrapped: *w, total: *t })
            })
            .collect();
        let (mask_sites, mask_events) = self
            .mask_sites
            .iter()
            .filter_map(|k| sites.get(k))
            .fold((0u64, 0u64), |(n, e), s| (n + 1, e + s.clipped + s.wrapped));
        let mask = (mask_events > 0).then(|| {
            format!(
                "{mask_events} elements of the additive attention mask (|x| >= 1e30) saturated to their formats' \
                 limits at {mask_sites} site(s), as intended"
            )
        });
        let warnings: Vec<String> = sites
            .iter()
            .filter(|(k, s)| s.fraction() > WARN_FRACTION && !self.mask_sites.contains(*k))
            .map(|(k, s)| {
                let (n, what) = if s.wrapped > 0 && s.clipped == 0 {
                    (s.wrapped, "wrapped")
                } else {
                    (s.clipped + s.wrapped, "clipped")
                };
                let at = match k.split_once("/data_in_") {
                    Some((node, i)) => format!("node '{node}' (input {i})"),
                    None => format!("node '{k}'"),
                };
                format!(
                    "warning: {at} {what} {n} of {} elements ({:.3} %) casting into {}: widen its \
                     integer part or calibrate on data that covers its range",
                    s.total,
                    100.0 * s.fraction(),
                    s.format
                )
            })
            .collect();
        let mask_sites = self.mask_sites.iter().cloned().collect();
        SaturationReport { saturation: sites, warnings, mask, mask_sites }
    }
}

/// Overflow counts by cast site (see [`SaturationCounter`] for the sites) and the warnings,
/// serialized as `{"saturation": {site: {"format", "clipped", "wrapped", "total"}}, "warnings":
/// [...]}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SaturationReport {
    /// Counts by site, sorted by name.
    pub saturation: BTreeMap<String, SiteCounts>,
    /// One message per site that clipped or wrapped more than [`WARN_FRACTION`] of its elements
    /// (sites that carry an additive mask excepted).
    pub warnings: Vec<String>,
    /// The one line about the additive mask's saturation, when a masked site saturated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mask: Option<String>,
    /// The sites that carry the mask (their events are in `mask`, not in the lines).
    #[serde(skip)]
    pub mask_sites: Vec<String>,
}

impl SaturationReport {
    /// Sites with at least one clipped or wrapped element (mask sites excepted).
    pub fn events(&self) -> impl Iterator<Item = (&String, &SiteCounts)> {
        self.saturation.iter().filter(|(k, s)| s.clipped + s.wrapped > 0 && !self.mask_sites.contains(*k))
    }

    /// Human-readable lines: one per site with events (or one saying there were none).
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .events()
            .map(|(k, s)| {
                let mut what = Vec::new();
                if s.clipped > 0 {
                    what.push(format!("{} clipped", s.clipped));
                }
                if s.wrapped > 0 {
                    what.push(format!("{} wrapped", s.wrapped));
                }
                format!("{k}: {} of {} elements into {}", what.join(", "), s.total, s.format)
            })
            .collect();
        if let Some(m) = &self.mask {
            out.push(format!("mask: {m}"));
        }
        if out.is_empty() {
            let total: u64 = self.saturation.values().map(|s| s.total).sum();
            out.push(format!(
                "no element clipped or wrapped ({} sites, {total} elements cast)",
                self.saturation.len()
            ));
        }
        out
    }
}
