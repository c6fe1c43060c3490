//! A loaded Verilated model: the shared library (kept loaded for the process lifetime), one
//! instance, and direct pointers to its port storage. Only `eval` crosses the FFI per cycle.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use libloading::Library;

use crate::error::{Result, SimError};
use crate::shim::{Port, PortDir, SHIM_VERSION};
use crate::verilate::Build;

type NewFn = unsafe extern "C" fn() -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void);
type EvalFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type PortFn = unsafe extern "C" fn(*mut c_void, c_int) -> *mut c_void;
type LogFn = unsafe extern "C" fn() -> *const c_char;
type LogClearFn = unsafe extern "C" fn();
type TraceOpenFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int;
type TraceDumpFn = unsafe extern "C" fn(*mut c_void, u64);
type TraceCloseFn = unsafe extern "C" fn(*mut c_void);
type VersionFn = unsafe extern "C" fn() -> u32;

/// The entry points of one loaded library.
struct Api {
    new: NewFn,
    free: FreeFn,
    eval: EvalFn,
    port: PortFn,
    log: LogFn,
    log_clear: LogClearFn,
    trace_open: TraceOpenFn,
    trace_dump: TraceDumpFn,
    trace_close: TraceCloseFn,
}

/// Libraries are loaded once per path and never unloaded (Verilated runtimes keep thread-local
/// state that must outlive every instance).
fn load(path: &Path) -> Result<Arc<Api>> {
    static LIBS: OnceLock<Mutex<HashMap<PathBuf, Arc<Api>>>> = OnceLock::new();
    let mut libs = LIBS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(a) = libs.get(path) {
        return Ok(a.clone());
    }
    let err = |d: String| SimError::Load { path: path.to_path_buf(), detail: d };
    // SAFETY: the library is a mase-sim shim build; its initialisers only set up the Verilated runtime.
    let lib = unsafe { Library::new(path) }.map_err(|e| err(e.to_string()))?;
    let lib: &'static Library = Box::leak(Box::new(lib));
    macro_rules! sym {
        ($name:literal, $t:ty) => {{
            // SAFETY: the symbol's C signature is the one the shim generator emits (see shim.rs).
            let s: libloading::Symbol<$t> = unsafe { lib.get($name) }.map_err(|e| err(e.to_string()))?;
            *s
        }};
    }
    let version = sym!(b"mase_shim_version", VersionFn);
    // SAFETY: no arguments, returns a constant.
    let v = unsafe { version() };
    if v != SHIM_VERSION {
        return Err(err(format!("shim version {v}, expected {SHIM_VERSION}")));
    }
    let api = Arc::new(Api {
        new: sym!(b"mase_new", NewFn),
        free: sym!(b"mase_free", FreeFn),
        eval: sym!(b"mase_eval", EvalFn),
        port: sym!(b"mase_port", PortFn),
        log: sym!(b"mase_log", LogFn),
        log_clear: sym!(b"mase_log_clear", LogClearFn),
        trace_open: sym!(b"mase_trace_open", TraceOpenFn),
        trace_dump: sym!(b"mase_trace_dump", TraceDumpFn),
        trace_close: sym!(b"mase_trace_close", TraceCloseFn),
    });
    libs.insert(path.to_path_buf(), api.clone());
    Ok(api)
}

/// Where a port's value lives and how wide it is.
#[derive(Debug, Clone, Copy)]
struct PortPtr {
    ptr: *mut c_void,
    width: usize,
}

/// Direct access to a 1-bit port's storage, for the harness's hot loop. Valid while the `Model`
/// it came from lives (the harness holds both in one scope).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BitPort(*mut u8);

impl BitPort {
    /// Reads the bit.
    #[inline(always)]
    pub(crate) fn get(self) -> bool {
        // SAFETY: points at Verilator's CData storage of a 1-bit port of a live model.
        unsafe { *self.0 != 0 }
    }

    /// Writes the bit.
    #[inline(always)]
    pub(crate) fn set(self, v: bool) {
        // SAFETY: as in `get`.
        unsafe { *self.0 = v as u8 }
    }
}

/// Direct access to a port of at most 64 bits, typed as Verilator stores it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum NarrowPort {
    /// 1..=8 bits.
    U8(*mut u8),
    /// 9..=16 bits.
    U16(*mut u16),
    /// 17..=32 bits.
    U32(*mut u32),
    /// 33..=64 bits.
    U64(*mut u64),
}

impl NarrowPort {
    /// Reads the value.
    #[inline(always)]
    pub(crate) fn get(self) -> u64 {
        // SAFETY: each variant points at storage of its type in a live model.
        unsafe {
            match self {
                NarrowPort::U8(p) => *p as u64,
                NarrowPort::U16(p) => *p as u64,
                NarrowPort::U32(p) => *p as u64,
                NarrowPort::U64(p) => *p,
            }
        }
    }

    /// Writes a value already masked to the port width.
    #[inline(always)]
    pub(crate) fn set(self, v: u64) {
        // SAFETY: as in `get`.
        unsafe {
            match self {
                NarrowPort::U8(p) => *p = v as u8,
                NarrowPort::U16(p) => *p = v as u16,
                NarrowPort::U32(p) => *p = v as u32,
                NarrowPort::U64(p) => *p = v,
            }
        }
    }
}

/// One instance of a Verilated model. Not `Send`: a Verilated context is driven from one thread.
pub struct Model {
    api: Arc<Api>,
    handle: *mut c_void,
    ports: Vec<PortPtr>,
    names: HashMap<String, usize>,
    spec_ports: Vec<Port>,
    traced: bool,
}

impl Model {
    /// Loads the build's library and creates an instance.
    pub fn new(build: &Build) -> Result<Model> {
        let api = load(&build.lib)?;
        // SAFETY: mase_new allocates a fresh instance; freed in Drop.
        let handle = unsafe { (api.new)() };
        let mut ports = Vec::new();
        for (i, p) in build.spec.ports.iter().enumerate() {
            // SAFETY: i is within the port table generated from the same port list.
            let ptr = unsafe { (api.port)(handle, i as c_int) };
            if ptr.is_null() {
                return Err(SimError::Load {
                    path: build.lib.clone(),
                    detail: format!("no port {}", p.name),
                });
            }
            ports.push(PortPtr { ptr, width: p.width });
        }
        let names = build.spec.ports.iter().enumerate().map(|(i, p)| (p.name.clone(), i)).collect();
        // SAFETY: clears this thread's log buffer.
        unsafe { (api.log_clear)() };
        Ok(Model {
            api,
            handle,
            ports,
            names,
            spec_ports: build.spec.ports.clone(),
            traced: build.spec.trace,
        })
    }

    /// Index of port `name` (for the fast accessors).
    pub fn port_index(&self, name: &str) -> Result<usize> {
        self.names.get(name).copied().ok_or_else(|| {
            let names: Vec<&str> = self.spec_ports.iter().map(|p| p.name.as_str()).collect();
            SimError::Invalid(format!("model has no port `{name}`; ports: {}", names.join(", ")))
        })
    }

    /// The port list.
    pub fn ports(&self) -> &[Port] {
        &self.spec_ports
    }

    /// Evaluates the model. On `$fatal`, `$stop` or a failed assertion returns the model's log.
    #[inline(always)]
    pub fn eval(&mut self) -> std::result::Result<(), String> {
        // SAFETY: handle is live until Drop.
        if unsafe { (self.api.eval)(self.handle) } != 0 {
            return Err(self.take_log());
        }
        Ok(())
    }

    /// What the model printed on this thread since the last call, cleared.
    pub fn take_log(&mut self) -> String {
        // SAFETY: returns a NUL-terminated thread-local buffer valid until the next shim call.
        let s = unsafe { CStr::from_ptr((self.api.log)()) }.to_string_lossy().into_owned();
        // SAFETY: clears the same buffer.
        unsafe { (self.api.log_clear)() };
        s
    }

    /// Writes a port of at most 64 bits (the value is masked to the port width).
    #[inline(always)]
    pub fn set(&mut self, idx: usize, v: u64) {
        let p = self.ports[idx];
        let v = if p.width >= 64 { v } else { v & ((1u64 << p.width) - 1) };
        // SAFETY: ptr addresses Verilator's storage for this port, of the type its width implies.
        unsafe {
            match p.width {
                0..=8 => *(p.ptr as *mut u8) = v as u8,
                9..=16 => *(p.ptr as *mut u16) = v as u16,
                17..=32 => *(p.ptr as *mut u32) = v as u32,
                33..=64 => *(p.ptr as *mut u64) = v,
                _ => {
                    let w = p.ptr as *mut u32;
                    *w = v as u32;
                    *w.add(1) = (v >> 32) as u32;
                    for i in 2..p.width.div_ceil(32) {
                        *w.add(i) = 0;
                    }
                }
            }
        }
    }

    /// Reads a port's low 64 bits.
    #[inline(always)]
    pub fn get(&self, idx: usize) -> u64 {
        let p = self.ports[idx];
        // SAFETY: as in `set`.
        unsafe {
            match p.width {
                0..=8 => *(p.ptr as *const u8) as u64,
                9..=16 => *(p.ptr as *const u16) as u64,
                17..=32 => *(p.ptr as *const u32) as u64,
                33..=64 => *(p.ptr as *const u64),
                _ => {
                    let w = p.ptr as *const u32;
                    (*w as u64) | ((*w.add(1) as u64) << 32)
                }
            }
        }
    }

    /// Writes a port of any width from 32-bit words, least significant first (missing words = 0;
    /// bits above the width are cleared).
    pub fn set_words(&mut self, idx: usize, words: &[u32]) {
        let p = self.ports[idx];
        if p.width <= 64 {
            let v = words.first().copied().unwrap_or(0) as u64
                | (words.get(1).copied().unwrap_or(0) as u64) << 32;
            self.set(idx, v);
            return;
        }
        let n = p.width.div_ceil(32);
        let w = p.ptr as *mut u32;
        for i in 0..n {
            let mut x = words.get(i).copied().unwrap_or(0);
            if i == n - 1 && !p.width.is_multiple_of(32) {
                x &= (1u32 << (p.width % 32)) - 1;
            }
            // SAFETY: a VlWide of n words.
            unsafe { *w.add(i) = x };
        }
    }

    /// Reads a port of any width as 32-bit words, least significant first (`ceil(width/32)` words).
    pub fn get_words(&self, idx: usize, out: &mut Vec<u32>) {
        let p = self.ports[idx];
        out.clear();
        if p.width <= 64 {
            let v = self.get(idx);
            out.push(v as u32);
            if p.width > 32 {
                out.push((v >> 32) as u32);
            }
            return;
        }
        let w = p.ptr as *const u32;
        // SAFETY: a VlWide of ceil(width/32) words.
        out.extend((0..p.width.div_ceil(32)).map(|i| unsafe { *w.add(i) }));
    }

    /// A direct handle to 1-bit port `idx` (None when it is wider).
    pub(crate) fn bit_port(&self, idx: usize) -> Option<BitPort> {
        let p = self.ports[idx];
        (p.width == 1).then_some(BitPort(p.ptr as *mut u8))
    }

    /// A direct handle to port `idx` when it is at most 64 bits wide.
    pub(crate) fn narrow_port(&self, idx: usize) -> Option<NarrowPort> {
        let p = self.ports[idx];
        Some(match p.width {
            0..=8 => NarrowPort::U8(p.ptr as *mut u8),
            9..=16 => NarrowPort::U16(p.ptr as *mut u16),
            17..=32 => NarrowPort::U32(p.ptr as *mut u32),
            33..=64 => NarrowPort::U64(p.ptr as *mut u64),
            _ => return None,
        })
    }

    /// Width of port `idx`.
    pub fn width(&self, idx: usize) -> usize {
        self.ports[idx].width
    }

    /// Whether this is a traced build.
    pub fn traced(&self) -> bool {
        self.traced
    }

    /// Starts a VCD file (traced builds only).
    pub fn trace_open(&mut self, path: &Path) -> Result<()> {
        let c = CString::new(path.to_string_lossy().as_bytes())
            .map_err(|_| SimError::Invalid(format!("VCD path {} contains NUL", path.display())))?;
        // SAFETY: handle live, c a valid C string.
        if unsafe { (self.api.trace_open)(self.handle, c.as_ptr()) } != 0 {
            return Err(SimError::Invalid("VCD requested from a build without tracing".into()));
        }
        Ok(())
    }

    /// Dumps the current signal values at `time` (no-op without an open VCD).
    pub fn trace_dump(&mut self, time: u64) {
        // SAFETY: handle live.
        unsafe { (self.api.trace_dump)(self.handle, time) };
    }

    /// Closes the VCD file.
    pub fn trace_close(&mut self) {
        // SAFETY: handle live.
        unsafe { (self.api.trace_close)(self.handle) };
    }

    /// Ports driven by the model, for convenience.
    pub fn outputs(&self) -> impl Iterator<Item = &Port> {
        self.spec_ports.iter().filter(|p| p.dir == PortDir::Out)
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: frees the instance created in `new`, exactly once.
        unsafe { (self.api.free)(self.handle) };
    }
}
