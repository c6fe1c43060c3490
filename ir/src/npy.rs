//! numpy `.npy` files in and out.
//!
//! Reading accepts format versions 1.0, 2.0 and 3.0, any rank (including 0-d), C or Fortran
//! order, and little-endian (or byte-order-free) element types: `f2`, `f4`, `f8` become f32
//! tensors (`f8` rounded to the nearest f32; a finite value outside the f32 range is an error);
//! `i1`, `i2`, `i4`, `i8`, `u1`, `u2`, `u4`, `u8` become i64 tensors (a `u8` value above
//! `i64::MAX` is an error) and `b1` bool tensors. Writing produces version 1.0 files with `<f4`,
//! `<i8`, `<i4` or `|b1` data in C order, readable by `numpy.load`.
//!
//! A file given as a model input is read by [`read_npy_as`] for the element type the graph
//! input has, converting other dtypes where that is exact, see there.
//!
//! The format: the magic `\x93NUMPY`, a major and minor version byte, the header length
//! (u16 for 1.0, u32 for 2.0/3.0, little-endian), an ASCII (UTF-8 for 3.0) header holding a
//! Python dict literal with keys `descr`, `fortran_order` and `shape`, padded with spaces and a
//! newline, then the raw elements.

use std::path::Path;

use ndarray::{ArrayD, IxDyn, ShapeBuilder};

use crate::error::{Error, Result};
use crate::tensor::{DType, Tensor};

const MAGIC: &[u8] = b"\x93NUMPY";
const SUPPORTED: &str = "<f2, <f4, <f8, |i1, <i2, <i4, <i8, |u1, <u2, <u4, <u8, |b1";

/// Reads a `.npy` file into a tensor. Errors name the file and what is wrong with it.
pub fn read_npy(path: impl AsRef<Path>) -> Result<Tensor> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    parse_npy(&bytes).map_err(|m| Error::file(path, format!("not a readable .npy file: {m}")))
}

/// Integers of at most this magnitude are exact in f32 (24-bit significand).
const F32_EXACT_INT: i64 = 1 << 24;

/// Reads a `.npy` file given as a float32 model input: [`read_npy_as`] with [`DType::F32`].
pub fn read_npy_input(path: impl AsRef<Path>) -> Result<Tensor> {
    read_npy_as(path, DType::F32)
}

/// Reads a `.npy` file given as a model input whose element type is `want`, converting the
/// file's dtype where that is exact:
/// - float32 inputs: `f4` as is; `f2` exactly; `f8` rounded to the nearest f32 (an error if a
///   finite value is outside the f32 range); integer and boolean dtypes exactly when every value
///   has a magnitude of at most 2^24 (16777216). A NaN or an infinity is an error naming the
///   first index: no model input is meant to hold one, and it would poison every result.
/// - int64 / int32 inputs (token ids, masks): any integer dtype whose values fit, and `b1` as 0
///   and 1; a float file is an error (token ids are never fractional: convert with
///   `x.astype(np.int64)` if the floats are whole).
/// - bool inputs: `b1`, or integers that are all 0 or 1.
///
/// Errors name the file, its dtype and what the input expects.
pub fn read_npy_as(path: impl AsRef<Path>, want: DType) -> Result<Tensor> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let (descr, t) =
        parse(&bytes).map_err(|m| Error::file(path, format!("not a readable .npy file: {m}")))?;
    let wrong = |why: String| {
        Error::file(
            path,
            format!("the model input is {}; this file holds '{descr}' data: {why}", want.name()),
        )
    };
    let out = match (want, t) {
        (DType::F32, t @ Tensor::F32(_)) => t,
        (DType::F32, Tensor::Bool(a)) => Tensor::F32(a.mapv(|v| f32::from(u8::from(v)))),
        (DType::F32, t) => {
            let a = t.to_i64();
            if let Some((i, v)) = a.iter().enumerate().find(|(_, v)| v.unsigned_abs() > F32_EXACT_INT as u64)
            {
                return Err(wrong(format!(
                    "integers convert exactly only up to magnitude {F32_EXACT_INT}, but element {i} \
                     (row-major) is {v}. Convert it in numpy (x.astype(np.float32)) if rounding is acceptable"
                )));
            }
            Tensor::F32(a.mapv(|v| v as f32))
        }
        (DType::I64, Tensor::F32(_)) | (DType::I32, Tensor::F32(_)) | (DType::Bool, Tensor::F32(_)) => {
            return Err(wrong(
                "float data is not converted to integers or booleans; write the file with the input's \
                 dtype (e.g. x.astype(np.int64))"
                    .into(),
            ))
        }
        (DType::I64, t) => Tensor::I64(t.to_i64()),
        (DType::I32, t) => {
            let a = t.to_i64();
            if let Some((i, v)) = a.iter().enumerate().find(|(_, &v)| i32::try_from(v).is_err()) {
                return Err(wrong(format!("element {i} (row-major) is {v}, outside the int32 range")));
            }
            Tensor::I32(a.mapv(|v| v as i32))
        }
        (DType::Bool, t @ Tensor::Bool(_)) => t,
        (DType::Bool, t) => {
            let a = t.to_i64();
            if let Some((i, v)) = a.iter().enumerate().find(|(_, &v)| v != 0 && v != 1) {
                return Err(wrong(format!(
                    "element {i} (row-major) is {v}; a boolean input takes 0 and 1 only"
                )));
            }
            Tensor::Bool(a.mapv(|v| v != 0))
        }
    };
    if let Some(i) = out.first_non_finite() {
        let v = out.as_f32().and_then(|a| a.iter().nth(i).copied()).unwrap_or(f32::NAN);
        return Err(Error::file(
            path,
            format!("element {i} (row-major) is {v}; model inputs must be finite (no NaN or infinity)"),
        ));
    }
    Ok(out)
}

/// Writes a tensor as a `.npy` file (`<f4`, `<i8`, `<i4` or `|b1`, C order, format 1.0).
pub fn write_npy(path: impl AsRef<Path>, t: &Tensor) -> Result<()> {
    let path = path.as_ref();
    std::fs::write(path, encode_npy(t)).map_err(|e| Error::io(path, e))
}

/// The bytes of a `.npy` file holding `t`.
pub fn encode_npy(t: &Tensor) -> Vec<u8> {
    let descr = match t {
        Tensor::F32(_) => "<f4",
        Tensor::I64(_) => "<i8",
        Tensor::I32(_) => "<i4",
        Tensor::Bool(_) => "|b1",
    };
    let dims: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Pad so that magic + version + length + header is a multiple of 64 bytes.
    let unpadded = MAGIC.len() + 2 + 2 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(MAGIC.len() + 4 + header.len() + t.len() * 8);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    match t {
        Tensor::F32(a) => a.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        Tensor::I64(a) => a.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        Tensor::I32(a) => a.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        Tensor::Bool(a) => a.iter().for_each(|&v| out.push(u8::from(v))),
    }
    out
}

/// Element types the reader understands.
#[derive(Debug, Clone, Copy)]
enum Elem {
    F16,
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    Bool,
}

impl Elem {
    fn size(self) -> usize {
        match self {
            Elem::I8 | Elem::U8 | Elem::Bool => 1,
            Elem::F16 | Elem::I16 | Elem::U16 => 2,
            Elem::F32 | Elem::I32 | Elem::U32 => 4,
            Elem::F64 | Elem::I64 | Elem::U64 => 8,
        }
    }

    fn parse(descr: &str) -> std::result::Result<Elem, String> {
        let unsupported = || format!("unsupported dtype '{descr}' (supported: {SUPPORTED})");
        let (order, code) = match descr.as_bytes().first() {
            Some(b'<' | b'>' | b'|' | b'=') => descr.split_at(1),
            _ => ("", descr),
        };
        let elem = match code {
            "f2" | "e" => Elem::F16,
            "f4" | "f" => Elem::F32,
            "f8" | "d" => Elem::F64,
            "i1" | "b" => Elem::I8,
            "i2" | "h" => Elem::I16,
            "i4" | "i" => Elem::I32,
            "i8" | "q" => Elem::I64,
            "u1" | "B" => Elem::U8,
            "u2" | "H" => Elem::U16,
            "u4" | "I" => Elem::U32,
            "u8" | "Q" => Elem::U64,
            "b1" | "?" => Elem::Bool,
            _ => return Err(unsupported()),
        };
        if order == ">" && elem.size() > 1 {
            return Err(format!(
                "dtype '{descr}' is big-endian; only little-endian data is supported ({SUPPORTED})"
            ));
        }
        Ok(elem)
    }
}

/// A value of the header dict.
enum Value {
    Str(String),
    Bool(bool),
    Tuple(Vec<i64>),
    Other(String),
}

impl Value {
    /// The value as the header spells it, for messages.
    fn describe(&self) -> String {
        match self {
            Value::Str(s) => format!("'{s}'"),
            Value::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            Value::Tuple(d) => format!("{d:?}"),
            Value::Other(w) => w.clone(),
        }
    }
}

/// A tiny parser for the Python dict literal in the header.
struct HeaderParser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl HeaderParser<'_> {
    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.pos).copied()
    }

    fn expect(&mut self, c: u8) -> std::result::Result<(), String> {
        match self.peek() {
            Some(x) if x == c => {
                self.pos += 1;
                Ok(())
            }
            other => Err(format!(
                "header: expected '{}' at byte {}, found {}",
                c as char,
                self.pos,
                other.map(|x| format!("'{}'", x as char)).unwrap_or_else(|| "the end".into())
            )),
        }
    }

    fn string(&mut self) -> std::result::Result<String, String> {
        let q = self
            .peek()
            .filter(|&c| c == b'\'' || c == b'"')
            .ok_or_else(|| format!("header: expected a quoted string at byte {}", self.pos))?;
        self.pos += 1;
        let start = self.pos;
        while self.pos < self.s.len() && self.s[self.pos] != q {
            self.pos += 1;
        }
        if self.pos >= self.s.len() {
            return Err("header: unterminated string".into());
        }
        let out = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
        self.pos += 1;
        Ok(out)
    }

    fn word(&mut self) -> String {
        self.skip_ws();
        let start = self.pos;
        while self.pos < self.s.len()
            && (self.s[self.pos].is_ascii_alphanumeric() || self.s[self.pos] == b'_')
        {
            self.pos += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.pos]).into_owned()
    }

    fn value(&mut self) -> std::result::Result<Value, String> {
        match self.peek() {
            Some(b'\'' | b'"') => Ok(Value::Str(self.string()?)),
            Some(b'(') => {
                self.pos += 1;
                let mut dims = Vec::new();
                loop {
                    if self.peek() == Some(b')') {
                        self.pos += 1;
                        break;
                    }
                    let minus = self.peek() == Some(b'-');
                    if minus {
                        self.pos += 1;
                    }
                    let w = format!("{}{}", if minus { "-" } else { "" }, self.word());
                    let digits = w.strip_suffix('L').unwrap_or(&w);
                    let d =
                        digits.parse::<i64>().map_err(|_| format!("header: bad shape dimension '{w}'"))?;
                    dims.push(d);
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b')') => {}
                        _ => return Err("header: the shape tuple is not closed".into()),
                    }
                }
                Ok(Value::Tuple(dims))
            }
            Some(b'[' | b'{') => Err("header: structured dtypes are not supported".into()),
            Some(_) => match self.word().as_str() {
                "True" => Ok(Value::Bool(true)),
                "False" => Ok(Value::Bool(false)),
                "" => Err(format!("header: unexpected character at byte {}", self.pos)),
                w => Ok(Value::Other(w.to_string())),
            },
            None => Err("header: ends inside the dict".into()),
        }
    }

    fn dict(&mut self) -> std::result::Result<Vec<(String, Value)>, String> {
        self.expect(b'{')?;
        let mut out = Vec::new();
        loop {
            if self.peek() == Some(b'}') {
                self.pos += 1;
                return Ok(out);
            }
            let key = self.string()?;
            self.expect(b':')?;
            let v = self.value()?;
            out.push((key, v));
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {}
                _ => return Err("header: expected ',' or '}' after a value".into()),
            }
        }
    }
}

/// Parses the bytes of a `.npy` file. The error says what is wrong (bad magic, version,
/// header, dtype, or a data size that disagrees with the shape).
pub fn parse_npy(bytes: &[u8]) -> std::result::Result<Tensor, String> {
    parse(bytes).map(|(_, t)| t)
}

/// [`parse_npy`], also returning the file's dtype (`descr`) for messages.
fn parse(bytes: &[u8]) -> std::result::Result<(String, Tensor), String> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err("bad magic: the file does not start with \\x93NUMPY".into());
    }
    let (major, minor) = match bytes.get(6..8) {
        Some(v) => (v[0], v[1]),
        None => return Err("truncated: the file ends inside the version bytes".into()),
    };
    let (len_size, header_len) = match major {
        1 => (2, bytes.get(8..10).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)),
        2 | 3 => (4, bytes.get(8..12).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)),
        _ => return Err(format!("unsupported format version {major}.{minor} (supported: 1.0, 2.0, 3.0)")),
    };
    let header_len = header_len.ok_or("truncated: the file ends inside the header length")?;
    let start: usize = 8 + len_size;
    let header = bytes.get(start..start.saturating_add(header_len)).ok_or_else(|| {
        format!("truncated: the header should be {header_len} bytes but the file ends first")
    })?;
    let data = &bytes[start + header_len..];
    let mut p = HeaderParser { s: header, pos: 0 };
    let dict = p.dict()?;
    let get = |k: &str| dict.iter().find(|(key, _)| key == k).map(|(_, v)| v);
    let descr = match get("descr") {
        Some(Value::Str(s)) => s.clone(),
        Some(v) => {
            return Err(format!(
                "header: 'descr' is {}; only simple dtypes ({SUPPORTED}) are supported",
                v.describe()
            ))
        }
        None => return Err("header: the key 'descr' is missing".into()),
    };
    let fortran = match get("fortran_order") {
        Some(Value::Bool(b)) => *b,
        Some(v) => {
            return Err(format!("header: 'fortran_order' is {}, expected True or False", v.describe()))
        }
        None => return Err("header: the key 'fortran_order' is missing".into()),
    };
    let shape: Vec<usize> = match get("shape") {
        Some(Value::Tuple(d)) => d
            .iter()
            .map(|&x| {
                usize::try_from(x).map_err(|_| format!("header: negative dimension {x} in the shape {d:?}"))
            })
            .collect::<std::result::Result<_, _>>()?,
        Some(v) => return Err(format!("header: 'shape' is {}, expected a tuple of integers", v.describe())),
        None => return Err("header: the key 'shape' is missing".into()),
    };
    let elem = Elem::parse(&descr)?;
    let count = shape
        .iter()
        .try_fold(1usize, |p, &d| p.checked_mul(d))
        .ok_or_else(|| format!("header: the element count of shape {shape:?} overflows"))?;
    let want = count
        .checked_mul(elem.size())
        .ok_or_else(|| format!("header: the byte size of shape {shape:?} overflows"))?;
    if data.len() < want {
        return Err(format!(
            "truncated: shape {shape:?} of '{descr}' needs {want} data bytes but only {} follow the header",
            data.len()
        ));
    }
    if data.len() > want {
        return Err(format!(
            "{} unexpected bytes after the {want} data bytes of shape {shape:?} of '{descr}'",
            data.len() - want
        ));
    }
    let chunks = data.chunks_exact(elem.size());
    let b2 = |c: &[u8]| [c[0], c[1]];
    let b4 = |c: &[u8]| [c[0], c[1], c[2], c[3]];
    let b8 = |c: &[u8]| [c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]];
    let values = match elem {
        Elem::F16 => Values::F(chunks.map(|c| f16_to_f32(u16::from_le_bytes(b2(c)))).collect()),
        Elem::F32 => Values::F(chunks.map(|c| f32::from_le_bytes(b4(c))).collect()),
        Elem::F64 => Values::F(
            chunks
                .enumerate()
                .map(|(i, c)| {
                    let v = f64::from_le_bytes(b8(c));
                    let f = v as f32;
                    if v.is_finite() && !f.is_finite() {
                        Err(format!("'{descr}' element {i} (file order) is {v:e}, outside the float32 range"))
                    } else {
                        Ok(f)
                    }
                })
                .collect::<std::result::Result<_, _>>()?,
        ),
        Elem::I8 => Values::I(chunks.map(|c| c[0] as i8 as i64).collect()),
        Elem::I16 => Values::I(chunks.map(|c| i16::from_le_bytes(b2(c)) as i64).collect()),
        Elem::I32 => Values::I(chunks.map(|c| i32::from_le_bytes(b4(c)) as i64).collect()),
        Elem::I64 => Values::I(chunks.map(|c| i64::from_le_bytes(b8(c))).collect()),
        Elem::U8 => Values::I(chunks.map(|c| c[0] as i64).collect()),
        Elem::U16 => Values::I(chunks.map(|c| u16::from_le_bytes(b2(c)) as i64).collect()),
        Elem::U32 => Values::I(chunks.map(|c| u32::from_le_bytes(b4(c)) as i64).collect()),
        Elem::U64 => Values::I(
            chunks
                .map(|c| {
                    let v = u64::from_le_bytes(b8(c));
                    i64::try_from(v).map_err(|_| format!("'{descr}' value {v} does not fit in i64"))
                })
                .collect::<std::result::Result<_, _>>()?,
        ),
        Elem::Bool => Values::B(chunks.map(|c| c[0] != 0).collect()),
    };
    let dims = IxDyn(&shape).set_f(fortran);
    let bad = |e: ndarray::ShapeError| format!("shape {shape:?}: {e}");
    // Store every tensor in standard (row-major) layout, whatever the file's order.
    Ok((
        descr,
        match values {
            Values::F(v) => {
                Tensor::F32(ArrayD::from_shape_vec(dims, v).map_err(bad)?.as_standard_layout().into_owned())
            }
            Values::I(v) => {
                Tensor::I64(ArrayD::from_shape_vec(dims, v).map_err(bad)?.as_standard_layout().into_owned())
            }
            Values::B(v) => {
                Tensor::Bool(ArrayD::from_shape_vec(dims, v).map_err(bad)?.as_standard_layout().into_owned())
            }
        },
    ))
}

/// Decoded element values before they get their shape.
enum Values {
    F(Vec<f32>),
    I(Vec<i64>),
    B(Vec<bool>),
}

/// IEEE half precision to single precision (exact).
fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let mant = (h & 0x3ff) as u32;
    let bits = match (exp, mant) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: value = m · 2^-24.
            let v = m as f32 * (2.0f32).powi(-24);
            return if sign != 0 { -v } else { v };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}
