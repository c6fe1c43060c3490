//! `pareto.svg`, written by hand (no font or drawing dependencies): accuracy against
//! LUTs (the resource model's estimate), ii as colour (blue = fewest cycles per inference, red = most, log scale), the
//! Pareto front drawn large with a black outline and joined by a line, other points small and
//! faded. Axes carry ticks and labels.

use std::fmt::Write as _;

use crate::output::PointResult;
use crate::pareto;

const W: f64 = 760.0;
const H: f64 = 500.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;

/// Round tick values covering `[lo, hi]` (about five).
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-12);
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(t);
        t += step;
    }
    out
}

fn colour(frac: f64) -> String {
    let f = frac.clamp(0.0, 1.0);
    let (r, g, b) = (40.0 + 200.0 * f, 90.0 + 60.0 * (1.0 - (2.0 * f - 1.0).abs()), 220.0 - 190.0 * f);
    format!("rgb({},{},{})", r.round(), g.round(), b.round())
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The plot of `points` (`labelled`: the accuracy axis is top-1, else cosine).
pub fn plot(points: &[PointResult], labelled: bool) -> String {
    let ok: Vec<&PointResult> = points.iter().filter(|p| p.metrics.is_some()).collect();
    let m = |p: &PointResult| p.metrics.clone().expect("filtered");
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let y_label = if labelled { "top-1 accuracy (golden model)" } else { "cosine vs float (golden model)" };
    let _ = writeln!(
        s,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="15">Sweep: accuracy vs LUTs ({} points, {} on the Pareto front)</text>"#,
        (LEFT + W - RIGHT) / 2.0,
        ok.len(),
        ok.iter().filter(|p| p.pareto).count()
    );
    if ok.is_empty() {
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">no point could be built</text>"#,
            W / 2.0,
            H / 2.0
        );
        s.push_str("</svg>\n");
        return s;
    }
    let xs: Vec<f64> = ok.iter().map(|p| m(p).lut as f64).collect();
    let ys: Vec<f64> = ok.iter().map(|p| pareto::accuracy(&m(p))).collect();
    let iis: Vec<f64> = ok.iter().map(|p| (m(p).ii_cycles.max(1) as f64).ln()).collect();
    let (x0, x1) = (0.0, xs.iter().copied().fold(1.0, f64::max) * 1.05);
    let (ymin, ymax) = (
        ys.iter().copied().fold(f64::INFINITY, f64::min),
        ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    let pad = ((ymax - ymin) * 0.08).max(1e-3);
    let (y0, y1) = (ymin - pad, ymax + pad);
    let (i0, i1) = (
        iis.iter().copied().fold(f64::INFINITY, f64::min),
        iis.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    let px = |x: f64| LEFT + (x - x0) / (x1 - x0) * (W - LEFT - RIGHT);
    let py = |y: f64| H - BOTTOM - (y - y0) / (y1 - y0) * (H - TOP - BOTTOM);
    let (pl, pr, pt, pb) = (LEFT, W - RIGHT, TOP, H - BOTTOM);
    let _ = writeln!(
        s,
        r##"<rect x="{pl}" y="{pt}" width="{}" height="{}" fill="none" stroke="#444"/>"##,
        pr - pl,
        pb - pt
    );
    for t in ticks(x0, x1) {
        let x = px(t);
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{pb}" x2="{x:.1}" y2="{}" stroke="#444"/><text x="{x:.1}" y="{}" text-anchor="middle">{t}</text>"##,
            pb + 5.0,
            pb + 19.0
        );
    }
    for t in ticks(y0, y1) {
        let y = py(t);
        let _ = writeln!(
            s,
            r##"<line x1="{}" y1="{y:.1}" x2="{pl}" y2="{y:.1}" stroke="#444"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            pl - 5.0,
            pl - 8.0,
            y + 4.0,
            format_tick(t)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">LUTs (resource model estimate)</text>"#,
        (pl + pr) / 2.0,
        H - 18.0
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(20,{}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (pt + pb) / 2.0,
        esc(y_label)
    );
    let frac = |v: f64| if i1 > i0 { (v - i0) / (i1 - i0) } else { 0.0 };
    // Front line: the front has more objectives than this plot's two axes, so the line is its
    // shadow here, a staircase through the front points that raise the best accuracy so far as
    // LUTs grow.
    let mut front: Vec<(f64, f64)> =
        ok.iter().zip(xs.iter().zip(&ys)).filter(|(p, _)| p.pareto).map(|(_, (x, y))| (*x, *y)).collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
    let mut pts: Vec<String> = Vec::new();
    let mut best = f64::NEG_INFINITY;
    for (x, y) in front {
        if y > best {
            if best.is_finite() {
                pts.push(format!("{:.1},{:.1}", px(x), py(best)));
            }
            pts.push(format!("{:.1},{:.1}", px(x), py(y)));
            best = y;
        }
    }
    let _ = writeln!(
        s,
        r##"<polyline points="{}" fill="none" stroke="#222" stroke-width="1.2" stroke-dasharray="4 3"/>"##,
        pts.join(" ")
    );
    for pass in [false, true] {
        for (k, p) in ok.iter().enumerate() {
            if p.pareto != pass {
                continue;
            }
            let (x, y, c) = (px(xs[k]), py(ys[k]), colour(frac(iis[k])));
            let mm = m(p);
            let title = format!(
                "{}: accuracy {:.4}, {} LUT, {} DSP, {} BRAM18, {} multipliers, ii {}",
                p.id, ys[k], mm.lut, mm.dsp, mm.bram18, mm.multipliers, mm.ii_cycles
            );
            if pass {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{x:.1}" cy="{y:.1}" r="6" fill="{c}" stroke="black" stroke-width="1.5"><title>{}</title></circle>"#,
                    esc(&title)
                );
            } else {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{x:.1}" cy="{y:.1}" r="3.5" fill="{c}" fill-opacity="0.55"><title>{}</title></circle>"#,
                    esc(&title)
                );
            }
        }
    }
    // Legend: the ii colour scale and the marker meaning.
    let lx = W - RIGHT + 20.0;
    let _ = writeln!(s, r#"<text x="{lx}" y="{}">ii (cycles/inference)</text>"#, pt + 10.0);
    for k in 0..=4 {
        let f = k as f64 / 4.0;
        let ii = (i0 + f * (i1 - i0)).exp();
        let y = pt + 28.0 + 20.0 * k as f64;
        let _ = writeln!(
            s,
            r#"<circle cx="{}" cy="{y}" r="6" fill="{}"/><text x="{}" y="{}">{:.0}</text>"#,
            lx + 6.0,
            colour(f),
            lx + 18.0,
            y + 4.0,
            ii
        );
    }
    let ly = pt + 150.0;
    let _ = writeln!(
        s,
        r#"<circle cx="{}" cy="{ly}" r="6" fill="white" stroke="black" stroke-width="1.5"/><text x="{}" y="{}">Pareto front</text>"#,
        lx + 6.0,
        lx + 18.0,
        ly + 4.0
    );
    let _ = writeln!(
        s,
        r#"<circle cx="{}" cy="{}" r="3.5" fill="gray" fill-opacity="0.55"/><text x="{}" y="{}">other points</text>"#,
        lx + 6.0,
        ly + 20.0,
        lx + 18.0,
        ly + 24.0
    );
    s.push_str("</svg>\n");
    s
}

fn format_tick(t: f64) -> String {
    let r = (t * 1e6).round() / 1e6;
    format!("{r}")
}
