//! Lane values to and from the words of a stream's data port (lane 0 least significant), the
//! harness's only bit twiddling.

/// Packs lane values (masked to `width`) into 32-bit words, lane 0 least significant.
pub fn pack(values: &[i64], width: u32, out: &mut Vec<u32>) {
    let total = values.len() * width as usize;
    out.clear();
    out.resize(total.div_ceil(32).max(1), 0);
    for (i, &v) in values.iter().enumerate() {
        let mut code = if width >= 64 { v as u64 } else { (v as u64) & ((1u64 << width) - 1) };
        let mut pos = i * width as usize;
        let mut left = width as usize;
        while left > 0 {
            let take = (32 - pos % 32).min(left);
            let mask = if take == 32 { u32::MAX } else { (1u32 << take) - 1 };
            out[pos / 32] |= (code as u32 & mask) << (pos % 32);
            code = if take == 64 { 0 } else { code >> take };
            pos += take;
            left -= take;
        }
    }
}

/// Unpacks `lanes` lanes of `width` bits from words (lane 0 least significant), sign-extending
/// when `signed`.
pub fn unpack(words: &[u32], lanes: usize, width: u32, signed: bool, out: &mut Vec<i64>) {
    out.clear();
    for i in 0..lanes {
        let mut code: u64 = 0;
        let mut pos = i * width as usize;
        let mut got = 0usize;
        while got < width as usize {
            let take = (32 - pos % 32).min(width as usize - got);
            let w = words.get(pos / 32).copied().unwrap_or(0) as u64;
            let bits = (w >> (pos % 32)) & ((1u64 << take) - 1);
            code |= bits << got;
            pos += take;
            got += take;
        }
        let v = if signed && width < 64 && (code >> (width - 1)) & 1 == 1 {
            (code | !((1u64 << width) - 1)) as i64
        } else {
            code as i64
        };
        out.push(v);
    }
}

/// [`unpack`] for a port of at most 64 bits held in one `u64`.
pub fn unpack_u64(v: u64, lanes: usize, width: u32, signed: bool, out: &mut Vec<i64>) {
    out.clear();
    unpack_u64_into(v, lanes, width, signed, out);
}

/// [`unpack_u64`] appending to `out`.
#[inline(always)]
pub(super) fn unpack_u64_into(v: u64, lanes: usize, width: u32, signed: bool, out: &mut Vec<i64>) {
    let mask = if width >= 64 { u64::MAX } else { (1u64 << width) - 1 };
    for i in 0..lanes {
        let code = if width >= 64 { v } else { (v >> (i as u32 * width)) & mask };
        let x = if signed && width < 64 && (code >> (width - 1)) & 1 == 1 {
            (code | !mask) as i64
        } else {
            code as i64
        };
        out.push(x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn pack_unpack_roundtrip_odd_widths() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for width in [1u32, 2, 3, 7, 13, 31, 32, 33, 63, 64] {
            for lanes in [1usize, 2, 5] {
                for signed in [false, true] {
                    let (lo, hi) = mase_hwlib::value_range(width, signed);
                    let v: Vec<i64> = (0..lanes).map(|_| rng.gen_range(lo..=hi)).collect();
                    let mut w = Vec::new();
                    pack(&v, width, &mut w);
                    assert_eq!(w.len(), (lanes * width as usize).div_ceil(32));
                    let mut back = Vec::new();
                    unpack(&w, lanes, width, signed, &mut back);
                    assert_eq!(back, v, "width {width} lanes {lanes} signed {signed}");
                    if lanes * width as usize <= 64 {
                        let x = w[0] as u64 | (w.get(1).copied().unwrap_or(0) as u64) << 32;
                        unpack_u64(x, lanes, width, signed, &mut back);
                        assert_eq!(back, v, "u64 path: width {width} lanes {lanes} signed {signed}");
                    }
                }
            }
        }
    }
}
