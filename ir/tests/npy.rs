//! `.npy` reading and writing: round trips for both tensor types and every rank, files built
//! byte by byte here for every supported dtype (versions 1.0 and 2.0, C and Fortran order), and
//! errors (not panics) for bad magic, truncation at every length, bad headers and unsupported
//! dtypes.

use mase_ir::npy::{encode_npy, parse_npy, read_npy, read_npy_input, write_npy};
use mase_ir::Tensor;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A `.npy` file written by hand: magic, version, little-endian header length, the header
/// padded with spaces to a 64-byte boundary and a newline, then `data`.
fn npy_file(major: u8, descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
    let order = if fortran { "True" } else { "False" };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {shape}, }}");
    let prefix = if major == 1 { 10 } else { 12 };
    while (prefix + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY".to_vec();
    out.extend([major, 0]);
    if major == 1 {
        out.extend((header.len() as u16).to_le_bytes());
    } else {
        out.extend((header.len() as u32).to_le_bytes());
    }
    out.extend(header.as_bytes());
    out.extend(data);
    out
}

fn f32_data(t: &Tensor) -> Vec<f32> {
    t.as_f32().expect("f32 tensor").iter().copied().collect()
}

fn i64_data(t: &Tensor) -> Vec<i64> {
    t.as_i64().expect("i64 tensor").iter().copied().collect()
}

#[test]
fn round_trip_every_rank_and_type() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let dir = tempfile::tempdir().unwrap();
    let shapes: &[&[usize]] = &[&[], &[0], &[1], &[5], &[2, 3], &[2, 3, 4, 1], &[3, 0, 2]];
    for (k, shape) in shapes.iter().enumerate() {
        let n: usize = shape.iter().product();
        let f = Tensor::from_f32(shape, (0..n).map(|_| rng.gen_range(-1e6f32..1e6)).collect()).unwrap();
        let i = Tensor::from_i64(shape, (0..n).map(|_| rng.gen::<i64>()).collect()).unwrap();
        for t in [f, i] {
            let bytes = encode_npy(&t);
            let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
            assert_eq!((10 + hlen) % 64, 0, "header alignment");
            assert_eq!(bytes[10 + hlen - 1], b'\n');
            assert_eq!(parse_npy(&bytes).unwrap(), t, "{shape:?} in memory");
            let path = dir.path().join(format!("t{k}_{:?}.npy", t.dtype()));
            write_npy(&path, &t).unwrap();
            assert_eq!(read_npy(&path).unwrap(), t, "{shape:?} through a file");
        }
    }
    // Bit patterns survive, including NaN payloads, infinities and negative zero.
    let special =
        Tensor::from_f32(&[5], vec![f32::NAN, f32::INFINITY, -0.0, f32::MIN_POSITIVE, f32::MAX]).unwrap();
    let back = parse_npy(&encode_npy(&special)).unwrap();
    let bits = |t: &Tensor| f32_data(t).iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&back), bits(&special));
}

#[test]
fn writer_header_is_what_numpy_writes() {
    let t = Tensor::from_f32(&[3], vec![1.0, 2.0, 3.0]).unwrap();
    let bytes = encode_npy(&t);
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + hlen]).unwrap();
    assert!(header.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"), "{header}");
    let s = Tensor::from_i64(&[], vec![7]).unwrap();
    let bytes = encode_npy(&s);
    let header = String::from_utf8_lossy(&bytes[10..]);
    assert!(header.contains("'descr': '<i8'") && header.contains("'shape': ()"), "{header}");
}

#[test]
fn float_dtypes_become_f32() {
    let vals64 = [1.5f64, -2.25, 1e-3, 3.0e38, 0.1];
    let data: Vec<u8> = vals64.iter().flat_map(|v| v.to_le_bytes()).collect();
    let t = parse_npy(&npy_file(1, "<f8", false, "(5,)", &data)).unwrap();
    assert_eq!(f32_data(&t), vals64.iter().map(|&v| v as f32).collect::<Vec<_>>());

    let vals32 = [0.5f32, -7.0, 1e-20, 6.0, 2.0, 3.0];
    let data: Vec<u8> = vals32.iter().flat_map(|v| v.to_le_bytes()).collect();
    let t = parse_npy(&npy_file(1, "<f4", false, "(2, 3)", &data)).unwrap();
    assert_eq!(t.shape(), &[2, 3]);
    assert_eq!(f32_data(&t), vals32);

    // Half precision: value = (-1)^s · 2^(e-15) · (1 + m/1024), or m · 2^-24 when e = 0.
    let halves: [u16; 8] = [0x3C00, 0xC000, 0x3555, 0x7BFF, 0x0001, 0x03FF, 0x8000, 0x7C00];
    let decode = |h: u16| -> f32 {
        let s = if h >> 15 == 1 { -1.0f64 } else { 1.0 };
        let e = ((h >> 10) & 0x1f) as i32;
        let m = (h & 0x3ff) as f64;
        let v = match e {
            0 => m * 2f64.powi(-24),
            31 => f64::INFINITY,
            _ => 2f64.powi(e - 15) * (1.0 + m / 1024.0),
        };
        (s * v) as f32
    };
    let data: Vec<u8> = halves.iter().flat_map(|h| h.to_le_bytes()).collect();
    let t = parse_npy(&npy_file(1, "<f2", false, "(8,)", &data)).unwrap();
    let want: Vec<f32> = halves.iter().map(|&h| decode(h)).collect();
    assert_eq!(
        f32_data(&t).iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        want.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
}

#[test]
fn integer_dtypes_become_i64_and_booleans_bool() {
    let v: [i64; 4] = [-3, 0, 100, -128];
    let cases: Vec<(&str, Vec<u8>, Vec<i64>)> = vec![
        ("|i1", v.iter().map(|&x| x as i8 as u8).collect(), v.to_vec()),
        ("<i2", v.iter().flat_map(|&x| (x as i16).to_le_bytes()).collect(), v.to_vec()),
        ("<i4", v.iter().flat_map(|&x| (x as i32).to_le_bytes()).collect(), v.to_vec()),
        ("<i8", v.iter().flat_map(|&x| x.to_le_bytes()).collect(), v.to_vec()),
        ("|u1", vec![0, 1, 200, 255], vec![0, 1, 200, 255]),
        ("<u2", [0u16, 1, 65535, 300].iter().flat_map(|x| x.to_le_bytes()).collect(), vec![0, 1, 65535, 300]),
        (
            "<u4",
            [0u32, 7, u32::MAX, 9].iter().flat_map(|x| x.to_le_bytes()).collect(),
            vec![0, 7, u32::MAX as i64, 9],
        ),
        (
            "<u8",
            [0u64, 5, i64::MAX as u64, 1].iter().flat_map(|x| x.to_le_bytes()).collect(),
            vec![0, 5, i64::MAX, 1],
        ),
        ("|b1", vec![1, 0, 0, 1], vec![1, 0, 0, 1]),
    ];
    for (descr, data, want) in cases {
        let t =
            parse_npy(&npy_file(1, descr, false, "(2, 2)", &data)).unwrap_or_else(|e| panic!("{descr}: {e}"));
        assert_eq!(t.shape(), &[2, 2], "{descr}");
        if descr == "|b1" {
            assert_eq!(t.dtype(), mase_ir::tensor::DType::Bool);
            assert_eq!(t.to_i64().iter().copied().collect::<Vec<_>>(), want);
        } else {
            assert_eq!(i64_data(&t), want, "{descr}");
        }
    }
    let big = (u64::MAX).to_le_bytes();
    let e = parse_npy(&npy_file(1, "<u8", false, "(1,)", &big)).unwrap_err();
    assert!(e.contains("does not fit"), "{e}");
}

#[test]
fn zero_d_version_2_and_fortran_order() {
    let t = parse_npy(&npy_file(1, "<i4", false, "()", &42i32.to_le_bytes())).unwrap();
    assert_eq!(t, Tensor::from_i64(&[], vec![42]).unwrap());
    let data: Vec<u8> = (0..6).flat_map(|v| (v as f32).to_le_bytes()).collect();
    let t = parse_npy(&npy_file(2, "<f4", false, "(3, 2)", &data)).unwrap();
    assert_eq!(t.shape(), &[3, 2]);
    // Fortran order: element (r, c) of a [2, 3] array is stored at position c·2 + r.
    let stored: Vec<f32> = (0..6).map(|v| v as f32).collect();
    let data: Vec<u8> = stored.iter().flat_map(|v| v.to_le_bytes()).collect();
    let t = parse_npy(&npy_file(1, "<f4", true, "(2, 3)", &data)).unwrap();
    let a = t.as_f32().unwrap();
    for r in 0..2 {
        for c in 0..3 {
            assert_eq!(a[[r, c]], stored[c * 2 + r], "({r}, {c})");
        }
    }
    // Old Python 2 headers write dimensions as longs.
    let t = parse_npy(&npy_file(1, "<f4", false, "(2L, 3L)", &data)).unwrap();
    assert_eq!(t.shape(), &[2, 3]);
}

#[test]
fn bad_files_are_errors_that_say_what_is_wrong() {
    let good = npy_file(1, "<f4", false, "(2, 2)", &[0u8; 16]);
    let check = |bytes: &[u8], needle: &str| {
        let e = parse_npy(bytes).unwrap_err();
        assert!(e.contains(needle), "expected '{needle}' in: {e}");
    };
    check(b"", "magic");
    check(b"PK\x03\x04 this is a zip", "magic");
    check(&good[..7], "truncated");
    check(&good[..9], "truncated");
    check(&good[..40], "truncated");
    check(&good[..good.len() - 1], "truncated");
    let mut extra = good.clone();
    extra.push(0);
    check(&extra, "unexpected bytes");
    let mut v4 = good.clone();
    v4[6] = 4;
    check(&v4, "version 4.0");
    check(&npy_file(1, "<c8", false, "(2,)", &[0; 16]), "unsupported dtype '<c8'");
    check(&npy_file(1, "<c8", false, "(2,)", &[0; 16]), "<f4");
    check(&npy_file(1, ">f4", false, "(2,)", &[0; 8]), "big-endian");
    check(&npy_file(1, "<U3", false, "(2,)", &[0; 24]), "unsupported dtype");
    check(&npy_file(1, "<f4", false, "(-2,)", &[]), "negative");
    check(&npy_file(1, "<f4", false, "(2, x)", &[0; 8]), "bad shape dimension");
    check(&npy_file(1, "<f4", false, "(99999999999, 99999999999, 99999999999)", &[]), "overflows");
    let mut structured = b"\x93NUMPY\x01\x00".to_vec();
    let header = "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n";
    structured.extend((header.len() as u16).to_le_bytes());
    structured.extend(header.as_bytes());
    check(&structured, "structured");
    let mut no_shape = b"\x93NUMPY\x01\x00".to_vec();
    let header = "{'descr': '<f4', 'fortran_order': False}\n";
    no_shape.extend((header.len() as u16).to_le_bytes());
    no_shape.extend(header.as_bytes());
    check(&no_shape, "'shape' is missing");
}

#[test]
fn every_truncation_and_random_corruption_is_an_error_not_a_panic() {
    let t = Tensor::from_f32(&[3, 4], (0..12).map(|v| v as f32).collect()).unwrap();
    let good = encode_npy(&t);
    for len in 0..good.len() {
        assert!(parse_npy(&good[..len]).is_err(), "a file truncated to {len} bytes was accepted");
    }
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let header_end = good.len() - 48;
    for _ in 0..2000 {
        let mut bytes = good.clone();
        for _ in 0..rng.gen_range(1..4) {
            let at = rng.gen_range(0..header_end);
            bytes[at] = rng.gen();
        }
        let r = std::panic::catch_unwind(|| parse_npy(&bytes));
        assert!(r.is_ok(), "panic on corrupted bytes {:?}", String::from_utf8_lossy(&bytes[..header_end]));
    }
    for _ in 0..500 {
        let n = rng.gen_range(0..200);
        let mut bytes: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
        if rng.gen_bool(0.5) && bytes.len() >= 8 {
            bytes[..6].copy_from_slice(b"\x93NUMPY");
        }
        let r = std::panic::catch_unwind(|| parse_npy(&bytes));
        assert!(r.is_ok(), "panic on random bytes {bytes:?}");
    }
}

#[test]
fn file_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.npy");
    let e = read_npy(&missing).unwrap_err().to_string();
    assert!(e.contains("missing.npy"), "{e}");
    let garbage = dir.path().join("garbage.npy");
    std::fs::write(&garbage, b"not numpy at all").unwrap();
    let e = read_npy(&garbage).unwrap_err().to_string();
    assert!(e.contains("garbage.npy") && e.contains("magic"), "{e}");
    let e =
        write_npy(dir.path().join("no/such/dir/x.npy"), &Tensor::zeros_f32(&[1])).unwrap_err().to_string();
    assert!(e.contains("x.npy"), "{e}");
}

/// Cross-check with numpy itself: numpy reads what we write and we read what numpy writes, for
/// every dtype numpy can save. Needs `python3` with numpy; run with
/// `cargo test -p mase-ir --test npy -- --ignored`.
#[test]
#[ignore = "needs python3 with numpy"]
fn numpy_reads_ours_and_we_read_numpy() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let ours_f = Tensor::from_f32(&[2, 3], vec![0.5, -1.25, 3.0, 1e-7, -0.0, 65504.0]).unwrap();
    let ours_i = Tensor::from_i64(&[], vec![-123456789012]).unwrap();
    write_npy(dir.path().join("ours_f.npy"), &ours_f).unwrap();
    write_npy(dir.path().join("ours_i.npy"), &ours_i).unwrap();
    let script = format!(
        r#"
import numpy as np
d = {d:?}
f = np.load(d + "/ours_f.npy"); i = np.load(d + "/ours_i.npy")
assert f.dtype == np.float32 and f.shape == (2, 3), (f.dtype, f.shape)
assert (f == np.array([[0.5, -1.25, 3.0], [1e-7, -0.0, 65504.0]], dtype=np.float32)).all()
assert i.dtype == np.int64 and i.shape == () and int(i) == -123456789012
base = np.arange(-12, 12).reshape(2, 3, 4)
for dt in ["f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "?"]:
    a = np.abs(base) if dt.startswith("u") else base
    np.save(d + "/np_" + dt.replace("?", "b") + ".npy", a.astype(dt))
np.save(d + "/np_fortran.npy", np.asfortranarray(base.astype("f4")))
"#
    );
    let status = std::process::Command::new("python3").arg("-c").arg(&script).status().expect("python3 runs");
    assert!(status.success(), "the numpy side failed");
    let base: Vec<i64> = (-12..12).collect();
    for dt in ["f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b"] {
        let t = read_npy(dir.path().join(format!("np_{dt}.npy"))).unwrap();
        assert_eq!(t.shape(), &[2, 3, 4], "{dt}");
        let want: Vec<i64> = match dt {
            "b" => base.iter().map(|&v| (v != 0) as i64).collect(),
            _ if dt.starts_with('u') => base.iter().map(|v| v.abs()).collect(),
            _ => base.clone(),
        };
        assert_eq!(t.dtype() == mase_ir::tensor::DType::Bool, dt == "b", "{dt}: booleans read as bool");
        let got: Vec<i64> = t.to_i64().iter().copied().collect();
        assert_eq!(got, want, "{dt}");
    }
    let fort = read_npy(dir.path().join("np_fortran.npy")).unwrap();
    assert_eq!(f32_data(&fort), base.iter().map(|&v| v as f32).collect::<Vec<_>>());
}

/// Model inputs: every integer and boolean dtype converts to f32 exactly (values up to 2^24 in
/// magnitude, seeded random ones and the bounds), floats as the general reader reads them.
#[test]
fn model_inputs_of_other_dtypes_become_f32() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let dir = tempfile::tempdir().unwrap();
    let limit = 1i64 << 24;
    type Enc = fn(i64) -> Vec<u8>;
    let cases: [(&str, i64, i64, Enc); 9] = [
        ("|i1", -128, 127, |x| vec![x as i8 as u8]),
        ("<i2", i16::MIN as i64, i16::MAX as i64, |x| (x as i16).to_le_bytes().to_vec()),
        ("<i4", -limit, limit, |x| (x as i32).to_le_bytes().to_vec()),
        ("<i8", -limit, limit, |x| x.to_le_bytes().to_vec()),
        ("|u1", 0, 255, |x| vec![x as u8]),
        ("<u2", 0, u16::MAX as i64, |x| (x as u16).to_le_bytes().to_vec()),
        ("<u4", 0, limit, |x| (x as u32).to_le_bytes().to_vec()),
        ("<u8", 0, limit, |x| (x as u64).to_le_bytes().to_vec()),
        ("|b1", 0, 1, |x| vec![x as u8]),
    ];
    for (descr, lo, hi, enc) in cases {
        let mut vals: Vec<i64> = (0..10).map(|_| rng.gen_range(lo..=hi)).collect();
        vals[0] = lo;
        vals[1] = hi;
        let data: Vec<u8> = vals.iter().flat_map(|&v| enc(v)).collect();
        let p = dir.path().join(format!("{}.npy", &descr[1..]));
        std::fs::write(&p, npy_file(1, descr, false, "(2, 5)", &data)).unwrap();
        let t = read_npy_input(&p).unwrap_or_else(|e| panic!("{descr}: {e}"));
        assert_eq!(t.shape(), &[2, 5], "{descr}");
        let got = f32_data(&t);
        // Exact: converting back gives the integer the file holds.
        assert_eq!(got.iter().map(|&f| f as i64).collect::<Vec<_>>(), vals, "{descr}");
    }
    // Floats: f8 rounded to the nearest f32, f4 unchanged.
    let vals64: Vec<f64> = (0..6).map(|_| rng.gen_range(-1e3..1e3)).collect();
    let p = dir.path().join("f8.npy");
    std::fs::write(
        &p,
        npy_file(1, "<f8", false, "(6,)", &vals64.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>()),
    )
    .unwrap();
    assert_eq!(f32_data(&read_npy_input(&p).unwrap()), vals64.iter().map(|&v| v as f32).collect::<Vec<_>>());
}

/// Model inputs that f32 cannot hold are errors naming the file, the dtype, the element and the
/// value; never a message from deep inside the model about an i64 tensor.
#[test]
fn model_inputs_that_f32_cannot_hold_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let too_big = (1i64 << 24) + 1;
    let p = dir.path().join("ids.npy");
    let data: Vec<u8> = [3i64, -too_big].iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&p, npy_file(1, "<i8", false, "(2,)", &data)).unwrap();
    let e = read_npy_input(&p).unwrap_err().to_string();
    for want in ["ids.npy", "'<i8'", "element 1", &(-too_big).to_string(), "float32"] {
        assert!(e.contains(want), "missing {want:?} in: {e}");
    }
    assert!(!e.contains("i64"), "{e}");

    let p = dir.path().join("huge.npy");
    let data: Vec<u8> = [1.0f64, 1e300].iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&p, npy_file(1, "<f8", false, "(2,)", &data)).unwrap();
    let e = read_npy_input(&p).unwrap_err().to_string();
    for want in ["huge.npy", "'<f8'", "element 1", "float32"] {
        assert!(e.contains(want), "missing {want:?} in: {e}");
    }

    let p = dir.path().join("complex.npy");
    std::fs::write(&p, npy_file(1, "<c8", false, "(1,)", &[0; 8])).unwrap();
    let e = read_npy_input(&p).unwrap_err().to_string();
    assert!(e.contains("complex.npy") && e.contains("'<c8'"), "{e}");
}
