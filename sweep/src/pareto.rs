//! The Pareto front: accuracy up (top-1 with labels, else cosine against the float model),
//! LUTs, DSPs (the resource model's estimates) and ii down. A point is on the front when no other point is at
//! least as good in every objective and better in one; points with equal objectives are all on
//! it (neither dominates the other).

use crate::eval::Metrics;

/// The objectives of a point, each oriented so that larger is better.
pub fn objectives(m: &Metrics) -> [f64; 4] {
    [accuracy(m), -(m.lut as f64), -(m.dsp as f64), -(m.ii_cycles as f64)]
}

/// The accuracy figure the front uses: top-1 when there are labels, else cosine.
pub fn accuracy(m: &Metrics) -> f64 {
    m.top1.unwrap_or(m.cosine)
}

/// Whether `a` dominates `b`.
pub fn dominates(a: &Metrics, b: &Metrics) -> bool {
    let (oa, ob) = (objectives(a), objectives(b));
    oa.iter().zip(&ob).all(|(x, y)| x >= y) && oa.iter().zip(&ob).any(|(x, y)| x > y)
}

/// For each entry (`None` = a failed point, never on the front), whether it is on the front.
pub fn front(points: &[Option<&Metrics>]) -> Vec<bool> {
    points
        .iter()
        .map(|p| match p {
            None => false,
            Some(m) => !points.iter().flatten().any(|o| dominates(o, m)),
        })
        .collect()
}
