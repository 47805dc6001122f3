//! Building a Verilog design into a Verilator model, loading it, and driving it.
//!
//! [`Model::build`] turns a [`ModelSpec`] into a shared object in the cache and loads it:
//!
//! 1. A content key is computed over the Verilog text, the top module name, the ports, the clock,
//!    the trace flag, the Verilator and C++ compiler versions, the build flags and the shim format.
//!    If `<cache_dir>/<key>/libecrt_model.so` exists it is loaded at once.
//! 2. Otherwise, in a private staging directory: `verilator --cc -O3 --x-assign fast
//!    --x-initial fast --output-split-cfuncs 500` generates C++; the ports Verilator declared in `Vtop.h` are checked against
//!    the spec; Verilator's makefile compiles `Vtop__ALL.a` (what `verilator --build` would run,
//!    with `-fPIC -O2`) while the generated `extern "C"` shim compiles beside it; the Verilator
//!    runtime is compiled once per Verilator version (in parallel, the first time); everything is
//!    linked with `g++ -shared`; the directory is renamed into place (atomic, so concurrent
//!    builders of one design are safe).
//!
//! All tool output goes to `build.log`; a failed build returns [`SimError::Build`] with the log's
//! tail and keeps the whole log in `<cache_dir>/failed/<key>.log`.
//!
//! # Clock convention
//!
//! [`Model::tick`] runs one full clock cycle on the clock port: clock ← 1, eval, clock ← 0, eval.
//! Registers written in `always @(posedge clock)` (what rust-hdl emits) update exactly once per
//! tick, from the inputs set before the tick; outputs read after the tick show the new register
//! values and the combinational logic after them. Simulation time advances two units per cycle:
//! cycle k (0-based) is at time 2k with the clock low and the inputs of that cycle applied, and has
//! its rising edge at 2k+1. A VCD therefore has a timestamp per half cycle.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use libloading::Library;
use num_bigint::BigUint;
use serde::Serialize;

use crate::cache::{content_key, ensure_dir, keep_failed_log, key_lock, publish, staging_dir};
use crate::error::{Result, SimError};
use crate::mangle::cpp_port_name;
use crate::ports::{parse_ports, Port, PortDir};
use crate::progress::Spinner;
use crate::runtime::{cxx_flags, ensure_runtime};
use crate::shim::{self, parse_model_header, storage_bytes, ShimPort, MODEL_CLASS, SHIM_FORMAT};
use crate::toolchain::{cxx, cxx_version, verilator_version, Log};

/// File name of a built model inside its cache entry.
const LIB_NAME: &str = "libecrt_model.so";

/// Verilator options used for every model (besides `--trace`, `--top-module` and the paths).
///
/// `--output-split-cfuncs 500` splits Verilator's evaluation functions into pieces of at most 500
/// statements. Without it a large design gets a few functions of thousands of lines, on which
/// g++ 12 at `-O2` or `-Os` spends minutes in alias analysis (measured on the 2048-bit exponentiation
/// unit: 327 s for one file, 18 s for the whole build with splitting), for no gain in speed.
const VERILATOR_FLAGS: &[&str] = &[
    "--cc",
    "-O3",
    "--x-assign",
    "fast",
    "--x-initial",
    "fast",
    "--no-timing",
    "-Wno-fatal",
    "--output-split-cfuncs",
    "500",
    "-CFLAGS",
    "-fPIC -O2",
    "--prefix",
    MODEL_CLASS,
];

/// Variables for Verilator's makefile (what `verilator --build -MAKEFLAGS ...` would pass).
/// `OPT_FAST=-O2` for the per-cycle code, because the makefile otherwise appends `-Os` after the
/// `-CFLAGS`; `OPT_SLOW=-O0` for code that runs once (construction, initial settling), which
/// compiles ten times faster than at `-O1`.
const MAKE_VARS: &[&str] = &["OPT_FAST=-O2", "OPT_SLOW=-O0", "OPT_GLOBAL=-O2"];

/// Libraries and linker options for the shared object. `-z defs` turns a missing symbol into a link
/// error instead of a crash at load time; `-Bsymbolic` binds the model's own runtime copy.
const LINK_FLAGS: &[&str] = &["-pthread", "-latomic", "-Wl,-z,defs", "-Wl,-Bsymbolic"];

/// What to build: the Verilog source, its top module, the ports to expose, the clock, tracing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelSpec {
    /// The complete Verilog source text (every module the top instantiates).
    #[serde(skip)]
    pub verilog: String,
    /// The top module's name (rust-hdl's `generate_verilog` calls it `top`).
    pub top: String,
    /// The ports to expose, a subset of the top module's ports (others stay 0 / unread).
    pub ports: Vec<Port>,
    /// The 1-bit input that [`Model::tick`] toggles, if any.
    pub clock: Option<String>,
    /// Build with VCD tracing support ([`Model::open_vcd`]); costs speed even when no VCD is open.
    pub trace: bool,
}

impl ModelSpec {
    /// A spec with the ports read from the Verilog text itself ([`parse_ports`]). The clock is the
    /// 1-bit input named `clock` (rust-hdl's name) or else `clk`, if there is one; tracing is off.
    pub fn from_verilog(verilog: impl Into<String>, top: &str) -> Result<Self> {
        let verilog = verilog.into();
        let ports = parse_ports(&verilog, top)?;
        let clock = ["clock", "clk"]
            .into_iter()
            .find(|c| ports.iter().any(|p| p.name == *c && p.dir == PortDir::Input && p.width == 1))
            .map(str::to_owned);
        Ok(ModelSpec { verilog, top: top.to_owned(), ports, clock, trace: false })
    }

    /// The same spec with tracing on or off.
    pub fn with_trace(mut self, trace: bool) -> Self {
        self.trace = trace;
        self
    }

    /// The same spec with another clock port (or none, to drive the clock by hand).
    pub fn with_clock(mut self, clock: Option<&str>) -> Self {
        self.clock = clock.map(str::to_owned);
        self
    }

    /// Checks the spec for consistency: ports unique and non-empty, clock a 1-bit input.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(SimError::Spec(m));
        if self.top.is_empty() {
            return bad("empty top module name".into());
        }
        let mut seen = HashMap::new();
        for p in &self.ports {
            if p.width == 0 {
                return bad(format!("port `{}` has width 0", p.name));
            }
            if seen.insert(cpp_port_name(&p.name), &p.name).is_some() {
                return bad(format!("port `{}` is listed twice", p.name));
            }
        }
        if let Some(c) = &self.clock {
            match self.ports.iter().find(|p| &p.name == c) {
                Some(p) if p.dir == PortDir::Input && p.width == 1 => {}
                Some(_) => return bad(format!("clock `{c}` must be a 1-bit input")),
                None => return bad(format!("clock `{c}` is not among the ports")),
            }
        }
        Ok(())
    }

    /// The content key of the built model: 32 hex digits over everything that affects the build
    /// (source, top, ports, clock, trace, Verilator and C++ compiler versions, flags, shim format).
    pub fn cache_key(&self) -> Result<String> {
        let meta = serde_json::to_string(self).map_err(|e| SimError::Spec(e.to_string()))?;
        let compiler = cxx();
        Ok(content_key(&[
            format!("ecrt-sim model, shim format {SHIM_FORMAT}").as_bytes(),
            verilator_version()?.as_bytes(),
            compiler.as_bytes(),
            cxx_version()?.as_bytes(),
            VERILATOR_FLAGS.join("\u{1}").as_bytes(),
            MAKE_VARS.join("\u{1}").as_bytes(),
            LINK_FLAGS.join("\u{1}").as_bytes(),
            meta.as_bytes(),
            self.verilog.as_bytes(),
        ]))
    }
}

/// Where and how to build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildOptions {
    /// The cache directory (see [`default_cache_dir`](crate::default_cache_dir)).
    pub cache_dir: PathBuf,
    /// Show a spinner with the current step and elapsed time on stderr while building.
    pub progress: bool,
}

impl BuildOptions {
    /// Options with the given cache directory and no progress display.
    pub fn new(cache_dir: impl Into<PathBuf>) -> Self {
        BuildOptions { cache_dir: cache_dir.into(), progress: false }
    }
}

impl Default for BuildOptions {
    /// The [`default_cache_dir`](crate::default_cache_dir), no progress display.
    fn default() -> Self {
        BuildOptions::new(crate::cache::default_cache_dir())
    }
}

/// A resolved port of a particular design: indexes the model's ports without a string lookup.
///
/// Get one with [`Model::port_id`]; it is valid for every model built from the same spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PortId {
    design: u64,
    index: usize,
}

impl PortId {
    /// The position of the port in [`Model::ports`].
    pub fn index(self) -> usize {
        self.index
    }
}

mod sealed {
    pub trait Sealed {}
}

/// Something that names a port: a [`PortId`] (fast) or a port name (`&str`, `String`).
pub trait PortRef: sealed::Sealed {
    /// The index of the port in `model`.
    fn resolve(&self, model: &Model) -> Result<usize>;
}

impl sealed::Sealed for PortId {}
impl PortRef for PortId {
    #[inline]
    fn resolve(&self, model: &Model) -> Result<usize> {
        if self.design == model.design && self.index < model.ports.len() {
            Ok(self.index)
        } else {
            Err(SimError::ForeignPort { index: self.index })
        }
    }
}

impl sealed::Sealed for &str {}
impl PortRef for &str {
    fn resolve(&self, model: &Model) -> Result<usize> {
        model.index.get(*self).copied().ok_or_else(|| SimError::UnknownPort {
            name: (*self).to_owned(),
            available: model.ports.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", "),
        })
    }
}

impl sealed::Sealed for String {}
impl PortRef for String {
    fn resolve(&self, model: &Model) -> Result<usize> {
        self.as_str().resolve(model)
    }
}

impl sealed::Sealed for &String {}
impl PortRef for &String {
    fn resolve(&self, model: &Model) -> Result<usize> {
        self.as_str().resolve(model)
    }
}

/// Timing of a [`Model::run`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RunStats {
    /// Clock cycles simulated.
    pub cycles: u64,
    /// Wall-clock time taken.
    pub elapsed: Duration,
}

impl RunStats {
    /// Simulated cycles per wall-clock second.
    pub fn cycles_per_second(&self) -> f64 {
        self.cycles as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// How a model came to be loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BuildInfo {
    /// The content key (the name of the cache entry).
    pub key: String,
    /// The loaded shared object.
    pub library: PathBuf,
    /// True when the shared object was already in the cache.
    pub cached: bool,
    /// Time spent in [`Model::build`], including loading.
    pub duration: Duration,
}

#[derive(Clone, Copy, Debug)]
enum Storage {
    U8,
    U16,
    U32,
    U64,
    /// `VlWide<N>`: N 32-bit words, least significant first.
    Wide(usize),
}

impl Storage {
    fn of(width: u32) -> Self {
        match storage_bytes(width) {
            1 => Storage::U8,
            2 => Storage::U16,
            4 if width <= 32 => Storage::U32,
            8 if width <= 64 => Storage::U64,
            b => Storage::Wide(b / 4),
        }
    }
}

struct Slot {
    ptr: NonNull<u8>,
    storage: Storage,
    /// Mask of the valid bits of the most significant 32-bit word.
    top_mask: u32,
}

type FnVoid = unsafe extern "C" fn(*mut c_void);
type FnU64 = unsafe extern "C" fn(*mut c_void) -> u64;

/// The shim's functions, copied out of the library (valid while `Model::_lib` lives).
struct Api {
    delete: FnVoid,
    eval: FnVoid,
    tick: unsafe extern "C" fn(*mut c_void, u64),
    cycles: FnU64,
    time: FnU64,
    got_finish: unsafe extern "C" fn(*mut c_void) -> c_int,
    trace_open: unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int,
    trace_close: FnVoid,
    trace_flush: FnVoid,
}

/// A loaded, running Verilator model of one design.
///
/// Port values are passed as little-endian 32-bit words (`[u32]`), `u64` or [`BigUint`]. Ports may be
/// named by string or, in hot loops, by a [`PortId`]. Dropping the model frees the C++ model (and
/// closes an open VCD).
pub struct Model {
    handle: NonNull<c_void>,
    api: Api,
    ports: Vec<Port>,
    slots: Vec<Slot>,
    index: HashMap<String, usize>,
    clock: Option<usize>,
    design: u64,
    trace: bool,
    vcd: Option<PathBuf>,
    top: String,
    info: BuildInfo,
    // Last: dropped after `Drop::drop` has freed the model.
    _lib: Library,
}

// SAFETY: a Verilated model has no affinity to the thread that created it; it must only not be used
// from two threads at once, which `&mut self` on every mutating method (and `!Sync`) guarantees. The
// raw pointers point into memory owned by that model.
unsafe impl Send for Model {}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("top", &self.top)
            .field("ports", &self.ports)
            .field("cycles", &self.cycles())
            .field("trace", &self.trace)
            .field("library", &self.info.library)
            .finish()
    }
}

impl Model {
    /// Builds (or takes from the cache) the model described by `spec`, and loads it.
    pub fn build(spec: &ModelSpec, opts: &BuildOptions) -> Result<Model> {
        let start = Instant::now();
        spec.validate()?;
        let key = spec.cache_key()?;
        let dir = opts.cache_dir.join(&key);
        let lib = dir.join(LIB_NAME);
        if lib.is_file() {
            return Model::load(spec, &key, &lib, true, start);
        }
        let lock = key_lock(&key);
        let _guard = lock.lock().unwrap_or_else(|e| e.into_inner());
        if lib.is_file() {
            return Model::load(spec, &key, &lib, true, start);
        }
        let spinner = Spinner::new(opts.progress, &format!("ecrt-sim: building `{}`", spec.top));
        match build_into(spec, &key, &opts.cache_dir, &dir, &spinner) {
            Ok(()) => spinner.done(&format!("ecrt-sim: built Verilator model `{}`", spec.top)),
            Err(e) => {
                spinner.clear();
                return Err(e);
            }
        }
        Model::load(spec, &key, &lib, false, start)
    }

    fn load(spec: &ModelSpec, key: &str, path: &Path, cached: bool, start: Instant) -> Result<Model> {
        let load_err = |message: String| SimError::Load { path: path.to_owned(), message };
        // SAFETY: the library is one this crate built; loading runs only the C++ runtime's static
        // initializers.
        let lib = unsafe { Library::new(path) }.map_err(|e| load_err(e.to_string()))?;
        macro_rules! sym {
            ($name:literal, $ty:ty) => {{
                // SAFETY: the shim defines the symbol with exactly this signature.
                let s: libloading::Symbol<$ty> =
                    unsafe { lib.get(concat!($name, "\0").as_bytes()) }.map_err(|e| load_err(e.to_string()))?;
                *s
            }};
        }
        let abi = sym!("ecrt_abi_version", unsafe extern "C" fn() -> u32);
        // SAFETY: shim functions without preconditions.
        let version = unsafe { abi() };
        if version != SHIM_FORMAT {
            return Err(load_err(format!("shim format {version}, expected {SHIM_FORMAT}")));
        }
        let count = sym!("ecrt_port_count", unsafe extern "C" fn() -> u32);
        let name_of = sym!("ecrt_port_name", unsafe extern "C" fn(u32) -> *const c_char);
        let bytes_of = sym!("ecrt_port_bytes", unsafe extern "C" fn(u32) -> u32);
        // SAFETY: as above; names are static NUL-terminated strings or null.
        let n = unsafe { count() } as usize;
        if n != spec.ports.len() {
            return Err(load_err(format!("library has {n} ports, spec has {}", spec.ports.len())));
        }
        for (i, p) in spec.ports.iter().enumerate() {
            let name = unsafe { name_of(i as u32) };
            let name = if name.is_null() { "" } else { unsafe { CStr::from_ptr(name) }.to_str().unwrap_or("") };
            let bytes = unsafe { bytes_of(i as u32) } as usize;
            if name != p.name || bytes != storage_bytes(p.width) {
                return Err(load_err(format!(
                    "port {i} is `{name}` with {bytes} bytes, expected `{}` with {}",
                    p.name,
                    storage_bytes(p.width)
                )));
            }
        }
        let new = sym!("ecrt_new", unsafe extern "C" fn() -> *mut c_void);
        let port_ptr = sym!("ecrt_port_ptr", unsafe extern "C" fn(*mut c_void, u32) -> *mut c_void);
        let api = Api {
            delete: sym!("ecrt_delete", FnVoid),
            eval: sym!("ecrt_eval", FnVoid),
            tick: sym!("ecrt_tick", unsafe extern "C" fn(*mut c_void, u64)),
            cycles: sym!("ecrt_cycles", FnU64),
            time: sym!("ecrt_time", FnU64),
            got_finish: sym!("ecrt_got_finish", unsafe extern "C" fn(*mut c_void) -> c_int),
            trace_open: sym!("ecrt_trace_open", unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int),
            trace_close: sym!("ecrt_trace_close", FnVoid),
            trace_flush: sym!("ecrt_trace_flush", FnVoid),
        };
        // SAFETY: constructs a model; null on failure.
        let handle = NonNull::new(unsafe { new() }).ok_or_else(|| load_err("constructing the model failed".into()))?;
        let mut slots = Vec::with_capacity(n);
        for (i, p) in spec.ports.iter().enumerate() {
            // SAFETY: `handle` is live and `i` < port count.
            let ptr = unsafe { port_ptr(handle.as_ptr(), i as u32) };
            let Some(ptr) = NonNull::new(ptr.cast::<u8>()) else {
                // SAFETY: `handle` came from `ecrt_new` and is not used afterwards.
                unsafe { (api.delete)(handle.as_ptr()) };
                return Err(load_err(format!("no storage for port `{}`", p.name)));
            };
            let rem = p.width % 32;
            slots.push(Slot {
                ptr,
                storage: Storage::of(p.width),
                top_mask: if rem == 0 { u32::MAX } else { (1u32 << rem) - 1 },
            });
        }
        let index = spec.ports.iter().enumerate().map(|(i, p)| (p.name.clone(), i)).collect();
        let clock = spec.clock.as_ref().and_then(|c| spec.ports.iter().position(|p| &p.name == c));
        let design = u64::from_str_radix(&key[..16], 16).unwrap_or(0);
        Ok(Model {
            handle,
            api,
            ports: spec.ports.clone(),
            slots,
            index,
            clock,
            design,
            trace: spec.trace,
            vcd: None,
            top: spec.top.clone(),
            info: BuildInfo { key: key.to_owned(), library: path.to_owned(), cached, duration: start.elapsed() },
            _lib: lib,
        })
    }

    /// The exposed ports, in spec order ([`PortId::index`] indexes this slice).
    pub fn ports(&self) -> &[Port] {
        &self.ports
    }

    /// The top module's name.
    pub fn top(&self) -> &str {
        &self.top
    }

    /// Where the model came from and how long building or loading took.
    pub fn build_info(&self) -> &BuildInfo {
        &self.info
    }

    /// Resolves a port name once, for string-free access in hot loops.
    pub fn port_id(&self, name: &str) -> Result<PortId> {
        Ok(PortId { design: self.design, index: name.resolve(self)? })
    }

    /// The description of a port.
    pub fn port(&self, port: impl PortRef) -> Result<&Port> {
        Ok(&self.ports[port.resolve(self)?])
    }

    fn input(&self, port: &impl PortRef) -> Result<usize> {
        let i = port.resolve(self)?;
        if self.ports[i].dir != PortDir::Input {
            return Err(SimError::NotAnInput { port: self.ports[i].name.clone() });
        }
        Ok(i)
    }

    fn too_wide(&self, i: usize, bits: u64) -> SimError {
        SimError::ValueTooWide { port: self.ports[i].name.clone(), width: self.ports[i].width, bits }
    }

    /// Drives an input port with a value given as little-endian 32-bit words. Missing high words
    /// are zero; extra words must be zero, and the value must fit the port's width.
    pub fn set(&mut self, port: impl PortRef, words: &[u32]) -> Result<()> {
        let i = self.input(&port)?;
        let width = self.ports[i].width;
        let bits = significant_bits(words);
        if bits > u64::from(width) {
            return Err(self.too_wide(i, bits));
        }
        let slot = &self.slots[i];
        let w = |k: usize| words.get(k).copied().unwrap_or(0);
        // SAFETY: `slot.ptr` points to the port's storage of the type given by `slot.storage`
        // (checked at load time), aligned for it, and the model is live.
        unsafe {
            match slot.storage {
                Storage::U8 => slot.ptr.as_ptr().write(w(0) as u8),
                Storage::U16 => slot.ptr.cast::<u16>().as_ptr().write(w(0) as u16),
                Storage::U32 => slot.ptr.cast::<u32>().as_ptr().write(w(0)),
                Storage::U64 => slot.ptr.cast::<u64>().as_ptr().write(u64::from(w(0)) | (u64::from(w(1)) << 32)),
                Storage::Wide(n) => {
                    let p = slot.ptr.cast::<u32>().as_ptr();
                    for k in 0..n {
                        p.add(k).write(w(k));
                    }
                }
            }
        }
        Ok(())
    }

    /// Drives an input port with a `u64`.
    pub fn set_u64(&mut self, port: impl PortRef, value: u64) -> Result<()> {
        let i = self.input(&port)?;
        let bits = u64::from(64 - value.leading_zeros());
        if bits > u64::from(self.ports[i].width) {
            return Err(self.too_wide(i, bits));
        }
        let slot = &self.slots[i];
        // SAFETY: as in `set`.
        unsafe {
            match slot.storage {
                Storage::U8 => slot.ptr.as_ptr().write(value as u8),
                Storage::U16 => slot.ptr.cast::<u16>().as_ptr().write(value as u16),
                Storage::U32 => slot.ptr.cast::<u32>().as_ptr().write(value as u32),
                Storage::U64 => slot.ptr.cast::<u64>().as_ptr().write(value),
                Storage::Wide(n) => {
                    let p = slot.ptr.cast::<u32>().as_ptr();
                    p.write(value as u32);
                    p.add(1).write((value >> 32) as u32);
                    for k in 2..n {
                        p.add(k).write(0);
                    }
                }
            }
        }
        Ok(())
    }

    /// Drives an input port with a boolean (any width; `true` is 1).
    pub fn set_bool(&mut self, port: impl PortRef, value: bool) -> Result<()> {
        self.set_u64(port, u64::from(value))
    }

    /// Drives an input port with a big unsigned integer.
    pub fn set_biguint(&mut self, port: impl PortRef, value: &BigUint) -> Result<()> {
        let i = port.resolve(self)?;
        if value.bits() > u64::from(self.ports[i].width) {
            // Report direction errors first, then width.
            self.input(&PortId { design: self.design, index: i })?;
            return Err(self.too_wide(i, value.bits()));
        }
        self.set(PortId { design: self.design, index: i }, &value.to_u32_digits())
    }

    /// Reads a port (output or input) into `out` as little-endian 32-bit words; `out` must hold at
    /// least [`Port::words`] words, and further words are zeroed.
    pub fn get_into(&self, port: impl PortRef, out: &mut [u32]) -> Result<()> {
        let i = port.resolve(self)?;
        let need = self.ports[i].words();
        assert!(
            out.len() >= need,
            "get_into: buffer of {} words for port `{}` of {need} words",
            out.len(),
            self.ports[i].name
        );
        let slot = &self.slots[i];
        // SAFETY: as in `set`, reading.
        unsafe {
            match slot.storage {
                Storage::U8 => out[0] = u32::from(slot.ptr.as_ptr().read()),
                Storage::U16 => out[0] = u32::from(slot.ptr.cast::<u16>().as_ptr().read()),
                Storage::U32 => out[0] = slot.ptr.cast::<u32>().as_ptr().read(),
                Storage::U64 => {
                    let v = slot.ptr.cast::<u64>().as_ptr().read();
                    out[0] = v as u32;
                    out[1] = (v >> 32) as u32;
                }
                Storage::Wide(n) => {
                    let p = slot.ptr.cast::<u32>().as_ptr();
                    for (k, o) in out.iter_mut().take(n).enumerate() {
                        *o = p.add(k).read();
                    }
                }
            }
        }
        out[need - 1] &= slot.top_mask;
        out[need..].fill(0);
        Ok(())
    }

    /// Reads a port as little-endian 32-bit words ([`Port::words`] of them).
    pub fn get(&self, port: impl PortRef) -> Result<Vec<u32>> {
        let i = port.resolve(self)?;
        let mut out = vec![0u32; self.ports[i].words()];
        self.get_into(PortId { design: self.design, index: i }, &mut out)?;
        Ok(out)
    }

    /// Reads a port of at most 64 bits.
    pub fn get_u64(&self, port: impl PortRef) -> Result<u64> {
        let i = port.resolve(self)?;
        let width = self.ports[i].width;
        if width > 64 {
            return Err(SimError::PortTooWide { port: self.ports[i].name.clone(), width, target: "u64" });
        }
        let mut out = [0u32; 2];
        self.get_into(PortId { design: self.design, index: i }, &mut out)?;
        Ok(u64::from(out[0]) | (u64::from(out[1]) << 32))
    }

    /// Reads a port as a boolean (true if any bit is set).
    pub fn get_bool(&self, port: impl PortRef) -> Result<bool> {
        Ok(self.get(port)?.iter().any(|w| *w != 0))
    }

    /// Reads a port as a big unsigned integer.
    pub fn get_biguint(&self, port: impl PortRef) -> Result<BigUint> {
        Ok(BigUint::from_slice(&self.get(port)?))
    }

    /// Evaluates the model: propagates input changes through the combinational logic (and any edge
    /// of a hand-driven clock). Does not advance time or the cycle count.
    pub fn eval(&mut self) {
        // SAFETY: live model.
        unsafe { (self.api.eval)(self.handle.as_ptr()) }
    }

    /// One clock cycle on the clock port (see the module docs for the convention).
    pub fn tick(&mut self) -> Result<()> {
        if self.clock.is_none() {
            return Err(SimError::NoClock);
        }
        // SAFETY: live model.
        unsafe { (self.api.tick)(self.handle.as_ptr(), 1) };
        Ok(())
    }

    /// `cycles` clock cycles with the inputs held, timed: for measuring simulated cycles per second.
    pub fn run(&mut self, cycles: u64) -> Result<RunStats> {
        if self.clock.is_none() {
            return Err(SimError::NoClock);
        }
        let start = Instant::now();
        // SAFETY: live model.
        unsafe { (self.api.tick)(self.handle.as_ptr(), cycles) };
        Ok(RunStats { cycles, elapsed: start.elapsed() })
    }

    /// Clock cycles run so far by [`tick`](Model::tick) and [`run`](Model::run).
    pub fn cycles(&self) -> u64 {
        // SAFETY: live model.
        unsafe { (self.api.cycles)(self.handle.as_ptr()) }
    }

    /// Simulation time in half cycles (2 × [`cycles`](Model::cycles)).
    pub fn time(&self) -> u64 {
        // SAFETY: live model.
        unsafe { (self.api.time)(self.handle.as_ptr()) }
    }

    /// Whether the design executed `$finish`.
    pub fn finished(&self) -> bool {
        // SAFETY: live model.
        unsafe { (self.api.got_finish)(self.handle.as_ptr()) != 0 }
    }

    /// Whether the model was built with tracing.
    pub fn trace_enabled(&self) -> bool {
        self.trace
    }

    /// Starts writing a VCD of all signals to `path` (closing one already open). Requires a model
    /// built with [`ModelSpec::trace`]. One time unit is half a clock cycle (the file's
    /// `$timescale` says 1ps: Verilator's default unit, not a real time); see the module docs. The
    /// state at the current time is written at the next tick or when the VCD is closed.
    pub fn open_vcd(&mut self, path: impl AsRef<Path>) -> Result<()> {
        if !self.trace {
            return Err(SimError::TraceDisabled);
        }
        let path = path.as_ref();
        self.close_vcd();
        // Fail here with a proper error rather than inside the runtime.
        std::fs::File::create(path).map_err(|e| SimError::io(format!("creating VCD {}", path.display()), e))?;
        let c = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| SimError::io("VCD path", std::io::Error::other("NUL in path")))?;
        // SAFETY: live model; `c` outlives the call.
        let rc = unsafe { (self.api.trace_open)(self.handle.as_ptr(), c.as_ptr()) };
        if rc != 0 {
            return Err(SimError::io(
                format!("opening VCD {}", path.display()),
                std::io::Error::other(format!("code {rc}")),
            ));
        }
        self.vcd = Some(path.to_owned());
        Ok(())
    }

    /// Writes the current state, then closes the VCD (if one is open).
    pub fn close_vcd(&mut self) {
        if self.vcd.take().is_some() {
            // SAFETY: live model.
            unsafe { (self.api.trace_close)(self.handle.as_ptr()) }
        }
    }

    /// Flushes the VCD's buffered output to disk.
    pub fn flush_vcd(&mut self) {
        if self.vcd.is_some() {
            // SAFETY: live model.
            unsafe { (self.api.trace_flush)(self.handle.as_ptr()) }
        }
    }

    /// The path of the open VCD, if any.
    pub fn vcd_path(&self) -> Option<&Path> {
        self.vcd.as_deref()
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: the handle came from `ecrt_new` and is freed exactly once; the library is still
        // loaded (`_lib` is dropped after this).
        unsafe { (self.api.delete)(self.handle.as_ptr()) }
    }
}

fn significant_bits(words: &[u32]) -> u64 {
    match words.iter().rposition(|w| *w != 0) {
        Some(k) => 32 * k as u64 + u64::from(32 - words[k].leading_zeros()),
        None => 0,
    }
}

/// Builds the model into `dest` (through a staging directory). On failure the log is kept in
/// `<cache_dir>/failed/<key>.log`.
fn build_into(spec: &ModelSpec, key: &str, cache_dir: &Path, dest: &Path, spinner: &Spinner) -> Result<()> {
    ensure_dir(cache_dir)?;
    let staging = staging_dir(cache_dir, key)?;
    let log = Log::create(staging.path().join("build.log"))?;
    build_steps(spec, key, cache_dir, staging.path(), &log, spinner).map_err(|e| keep_failed_log(e, cache_dir, key))?;
    if dest.is_dir() && !dest.join(LIB_NAME).is_file() {
        // A damaged entry (e.g. files deleted by hand): replace it.
        let _ = std::fs::remove_dir_all(dest);
    }
    publish(staging, dest)?;
    Ok(())
}

/// The steps of a build, in the staging directory `dir`.
fn build_steps(spec: &ModelSpec, key: &str, cache_dir: &Path, dir: &Path, log: &Log, spinner: &Spinner) -> Result<()> {
    log.note(&format!("# ecrt-sim build of `{}` (key {key})", spec.top))?;
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text)
            .map_err(|e| SimError::io(format!("writing {}", dir.join(name).display()), e))
    };
    write("top.v", &spec.verilog)?;
    let meta = serde_json::json!({
        "spec": spec,
        "verilator": verilator_version()?,
        "cxx": format!("{} ({})", cxx(), cxx_version()?),
        "shim_format": SHIM_FORMAT,
    });
    write("spec.json", &serde_json::to_string_pretty(&meta).unwrap_or_default())?;

    std::thread::scope(|s| -> Result<()> {
        // The runtime (normally cached already) compiles while Verilator runs.
        let runtime = s.spawn(|| ensure_runtime(cache_dir, &Spinner::new(false, "")));

        // What `verilator --build` does, in two steps, so that the shim (which needs only the
        // generated header) compiles while make compiles the model.
        spinner.step("verilating");
        let obj = dir.join("obj");
        let mut cmd = Command::new("verilator");
        cmd.args(VERILATOR_FLAGS);
        if spec.trace {
            cmd.arg("--trace");
        }
        cmd.arg("--top-module").arg(&spec.top).arg("--Mdir").arg(&obj).arg(dir.join("top.v")).current_dir(dir);
        log.run(&mut cmd, "verilator")?;

        spinner.step("compiling the model and the shim");
        let jobs = std::thread::available_parallelism().map_or(2, |n| n.get()).to_string();
        let mut cmd = Command::new("make");
        cmd.arg("-C").arg(&obj).arg("-f").arg(format!("{MODEL_CLASS}.mk")).arg("-j").arg(&jobs).args(MAKE_VARS);
        let make_start = Instant::now();
        let make = log.spawn(&mut cmd)?;

        let shim_ports = resolve_ports(spec, &obj);
        let shim_compiled = shim_ports.and_then(|ports| {
            let clock = spec.clock.as_ref().map(|c| cpp_port_name(c));
            write("shim.cpp", &shim::generate(&ports, clock.as_deref(), spec.trace)?)?;
            let mut cmd = Command::new(cxx());
            cmd.args(cxx_flags(spec.trace)?)
                .arg("-I")
                .arg(&obj)
                .arg("-c")
                .arg("-o")
                .arg(dir.join("shim.o"))
                .arg(dir.join("shim.cpp"));
            log.run(&mut cmd, "compiling the shim")
        });
        let made = log.wait(make, "compiling the model (make)");
        shim_compiled?;
        made?;
        log.note(&format!("# compiling the model (make): {:.2} s", make_start.elapsed().as_secs_f64()))?;

        if !runtime.is_finished() {
            spinner.step("compiling the Verilator runtime (once per Verilator version)");
        }
        let objects = match runtime.join() {
            Ok(r) => r?,
            Err(_) => return Err(log.failure("compiling the Verilator runtime (panicked)")),
        };
        spinner.step("linking");
        let mut cmd = Command::new(cxx());
        cmd.arg("-shared")
            .arg("-fPIC")
            .arg("-o")
            .arg(dir.join(LIB_NAME))
            .arg(dir.join("shim.o"))
            .arg(obj.join(format!("{MODEL_CLASS}__ALL.a")))
            .args(&objects)
            .args(LINK_FLAGS);
        log.run(&mut cmd, "linking the model")?;
        Ok(())
    })?;

    // Objects are not needed once linked; keep the generated sources and the log.
    for entry in std::fs::read_dir(dir.join("obj")).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.extension().is_some_and(|e| e == "o" || e == "a") {
            let _ = std::fs::remove_file(p);
        }
    }
    let _ = std::fs::remove_file(dir.join("shim.o"));
    Ok(())
}

/// Checks the spec's ports against the ports Verilator generated, and gives their C++ names.
fn resolve_ports(spec: &ModelSpec, obj: &Path) -> Result<Vec<ShimPort>> {
    let header_path = obj.join(format!("{MODEL_CLASS}.h"));
    let header = std::fs::read_to_string(&header_path)
        .map_err(|e| SimError::io(format!("reading {}", header_path.display()), e))?;
    let generated = parse_model_header(&header);
    let mut out = Vec::with_capacity(spec.ports.len());
    for p in &spec.ports {
        let cpp = cpp_port_name(&p.name);
        let Some(h) = generated.iter().find(|h| h.cpp == cpp) else {
            let names: Vec<&str> = generated.iter().map(|h| h.cpp.as_str()).collect();
            return Err(SimError::Spec(format!(
                "port `{}` (C++ `{cpp}`) is not a port of the verilated `{}` (its ports, as C++ names: {})",
                p.name,
                spec.top,
                names.join(", ")
            )));
        };
        if h.dir != Some(p.dir) || h.width != p.width {
            return Err(SimError::Spec(format!(
                "port `{}` is {:?} {} bits in the spec but {} {} bits in the verilated model",
                p.name,
                p.dir,
                p.width,
                match h.dir {
                    Some(PortDir::Input) => "Input",
                    Some(PortDir::Output) => "Output",
                    None => "Inout",
                },
                h.width
            )));
        }
        out.push(ShimPort { name: p.name.clone(), cpp, bytes: h.bytes });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_of_words() {
        assert_eq!(significant_bits(&[]), 0);
        assert_eq!(significant_bits(&[0, 0]), 0);
        assert_eq!(significant_bits(&[1]), 1);
        assert_eq!(significant_bits(&[0, 1]), 33);
        assert_eq!(significant_bits(&[5, 0x8000_0000, 0]), 64);
    }

    #[test]
    fn spec_validation() {
        let v = "module top(clock,a,b); input wire clock; input wire [7:0] a; output reg [7:0] b; endmodule";
        let s = ModelSpec::from_verilog(v, "top").unwrap();
        assert_eq!(s.clock.as_deref(), Some("clock"));
        s.validate().unwrap();
        assert!(s.clone().with_clock(Some("a")).validate().is_err());
        assert!(s.clone().with_clock(Some("nope")).validate().is_err());
        let mut d = s.clone();
        d.ports.push(Port::input("a", 3));
        assert!(d.validate().is_err());
        assert!(s.clone().with_clock(None).validate().is_ok());
    }
}
