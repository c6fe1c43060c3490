//! Mapping a tensor permutation onto the `transpose` component, which reorders `[A][B][C]` into
//! `[B][A][C]` (row-major, repeated for every leading batch index).
//!
//! A permutation maps when, after dropping size-1 dimensions (they never change the element
//! order), it keeps a leading run of dimensions in place (the batch), keeps a trailing run in
//! place (the unit `C` moved whole), and rotates what is left: the middle dimensions
//! `x₀…x_{k-1} y₀…y_{m-1}` become `y₀…y_{m-1} x₀…x_{k-1}`. Then `A = ∏x`, `B = ∏y`, `C = ∏ trailing`
//! and the batch count is `∏ leading`. Head split (`[S, H, d] → [H, S, d]`), head merge and
//! plain 2-D transposes all have this form.

/// A permutation as the transpose component sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockTranspose {
    /// Independent tensors, one after another (product of the leading kept dimensions).
    pub batch: usize,
    /// Rows of the `[A][B·C]` input of each tensor.
    pub a: usize,
    /// Units per input row.
    pub b: usize,
    /// Elements per unit (moved together).
    pub c: usize,
}

/// How a permutation of a tensor of shape `shape` acts on the element stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermKind {
    /// The row-major element order does not change (only size-1 dimensions move).
    Identity,
    /// A `[A][B][C] → [B][A][C]` reorder.
    Block(BlockTranspose),
}

/// Classifies `perm` (output dim `i` = input dim `perm[i]`) on an input of shape `shape`;
/// `None` when the permutation is neither the identity on the element order nor a block
/// transpose.
pub fn classify(shape: &[usize], perm: &[usize]) -> Option<PermKind> {
    if shape.len() != perm.len() {
        return None;
    }
    // Keep only dimensions larger than 1, renumbered in input order.
    let kept: Vec<usize> = (0..shape.len()).filter(|&d| shape[d] > 1).collect();
    let rank_of = |d: usize| kept.iter().position(|&k| k == d);
    let p: Vec<usize> = perm.iter().filter_map(|&d| rank_of(d)).collect();
    let dims: Vec<usize> = kept.iter().map(|&d| shape[d]).collect();
    let n = p.len();
    let lead = (0..n).take_while(|&i| p[i] == i).count();
    if lead == n {
        return Some(PermKind::Identity);
    }
    let trail = (lead..n).rev().take_while(|&i| p[i] == i).count();
    let mid = &p[lead..n - trail];
    // The middle must be a rotation: y-run (ascending from some s) then x-run (ascending from lead).
    let s = mid[0];
    let m = mid.len();
    let k = s - lead;
    let rotation = (0..m).all(|i| mid[i] == if i < m - k { s + i } else { lead + i - (m - k) });
    if !rotation || k == 0 || k >= m {
        return None;
    }
    let prod = |r: std::ops::Range<usize>| dims[r].iter().product::<usize>();
    Some(PermKind::Block(BlockTranspose {
        batch: prod(0..lead),
        a: prod(lead..s),
        b: prod(s..n - trail),
        c: prod(n - trail..n),
    }))
}

/// `perm` with its last two entries swapped: `transpose(x, perm)` equals the last-two-axes swap
/// of `transpose(x, swap_last_two(perm))`.
pub fn swap_last_two(perm: &[usize]) -> Vec<usize> {
    let mut p = perm.to_vec();
    let n = p.len();
    if n >= 2 {
        p.swap(n - 2, n - 1);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies `perm` to a row-major index list (the ground truth the classification must match).
    fn permuted_order(shape: &[usize], perm: &[usize]) -> Vec<usize> {
        let out_shape: Vec<usize> = perm.iter().map(|&d| shape[d]).collect();
        let total: usize = shape.iter().product();
        let strides: Vec<usize> = (0..shape.len()).map(|d| shape[d + 1..].iter().product()).collect();
        (0..total)
            .map(|mut i| {
                let mut src = 0;
                for o in (0..out_shape.len()).rev() {
                    let idx = i % out_shape[o];
                    i /= out_shape[o];
                    src += idx * strides[perm[o]];
                }
                src
            })
            .collect()
    }

    /// The order the transpose component produces for a block transpose.
    fn block_order(t: &BlockTranspose) -> Vec<usize> {
        let mut v = Vec::new();
        for n in 0..t.batch {
            for b in 0..t.b {
                for a in 0..t.a {
                    for c in 0..t.c {
                        v.push(n * t.a * t.b * t.c + (a * t.b + b) * t.c + c);
                    }
                }
            }
        }
        v
    }

    fn all_perms(n: usize) -> Vec<Vec<usize>> {
        if n == 0 {
            return vec![vec![]];
        }
        let mut out = Vec::new();
        for p in all_perms(n - 1) {
            for pos in 0..n {
                let mut q = p.clone();
                q.insert(pos, n - 1);
                out.push(q);
            }
        }
        out
    }

    #[test]
    fn every_classified_permutation_reorders_like_the_component() {
        for shape in [vec![2, 3, 4, 5], vec![1, 3, 2, 4], vec![3, 1, 2], vec![2, 3]] {
            let mut blocks = 0;
            for perm in all_perms(shape.len()) {
                let truth = permuted_order(&shape, &perm);
                match classify(&shape, &perm) {
                    Some(PermKind::Identity) => {
                        assert_eq!(truth, (0..truth.len()).collect::<Vec<_>>(), "{shape:?} {perm:?}")
                    }
                    Some(PermKind::Block(t)) => {
                        blocks += 1;
                        assert_eq!(truth, block_order(&t), "{shape:?} {perm:?} as {t:?}");
                    }
                    None => {}
                }
            }
            assert!(blocks > 0, "{shape:?}: no block transpose found");
        }
    }

    #[test]
    fn head_split_and_merge_are_block_transposes() {
        let split = classify(&[1, 8, 2, 64], &[0, 2, 1, 3]);
        assert_eq!(split, Some(PermKind::Block(BlockTranspose { batch: 1, a: 8, b: 2, c: 64 })));
        let merge = classify(&[1, 2, 8, 64], &[0, 2, 1, 3]);
        assert_eq!(merge, Some(PermKind::Block(BlockTranspose { batch: 1, a: 2, b: 8, c: 64 })));
        assert_eq!(swap_last_two(&[0, 2, 3, 1]), vec![0, 2, 1, 3]);
        assert_eq!(classify(&[2, 3, 4], &[1, 0, 2]).map(|_| ()), Some(()));
        assert_eq!(
            classify(&[2, 3, 4], &[2, 0, 1]),
            Some(PermKind::Block(BlockTranspose { batch: 1, a: 2 * 3, b: 4, c: 1 }))
        );
        assert_eq!(
            classify(&[2, 3, 4], &[0, 2, 1]),
            Some(PermKind::Block(BlockTranspose { batch: 2, a: 3, b: 4, c: 1 }))
        );
        assert_eq!(
            classify(&[2, 3, 4], &[1, 2, 0]),
            Some(PermKind::Block(BlockTranspose { batch: 1, a: 2, b: 12, c: 1 }))
        );
        assert_eq!(classify(&[2, 3, 4], &[2, 1, 0]), None);
    }
}
