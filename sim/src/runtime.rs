//! The Verilator runtime (`verilated.cpp`, `verilated_threads.cpp`, `verilated_vcd_c.cpp`),
//! compiled once per Verilator and compiler version into the cache and linked into every model.
//!
//! Compiling the runtime takes longer than verilating and compiling most designs, so it is done
//! once: `<cache_dir>/runtime-<key>/` holds the objects. It is compiled with tracing support, which
//! changes nothing for models built without `--trace` (the runtime sources do not depend on
//! `VM_TRACE`), so one runtime serves every model.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cache::{content_key, ensure_dir, keep_failed_log, key_lock, publish, staging_dir};
use crate::error::Result;
use crate::progress::Spinner;
use crate::toolchain::{cxx, cxx_version, verilator_root, verilator_version, Log};

/// Bump when the way the runtime is compiled changes.
const RUNTIME_FORMAT: &str = "ecrt-sim runtime 1";

/// The runtime sources, in `<VERILATOR_ROOT>/include`.
const SOURCES: &[&str] = &["verilated", "verilated_threads", "verilated_vcd_c"];

/// Flags for every C++ file that includes Verilator headers (as in Verilator's `verilated.mk`,
/// plus position-independent code for the shared object). `trace` sets `VM_TRACE`.
pub(crate) fn cxx_flags(trace: bool) -> Result<Vec<String>> {
    let root = verilator_root()?;
    let inc = root.join("include");
    let t = u8::from(trace);
    let mut flags = vec![
        format!("-I{}", inc.display()),
        format!("-I{}", inc.join("vltstd").display()),
        "-DVM_COVERAGE=0".into(),
        "-DVM_SC=0".into(),
        format!("-DVM_TRACE={t}"),
        "-DVM_TRACE_FST=0".into(),
        format!("-DVM_TRACE_VCD={t}"),
    ];
    flags.extend(
        [
            "-faligned-new",
            "-fcf-protection=none",
            "-Wno-bool-operation",
            "-Wno-sign-compare",
            "-Wno-uninitialized",
            "-Wno-unused-but-set-variable",
            "-Wno-unused-parameter",
            "-Wno-unused-variable",
            "-Wno-shadow",
            "-fPIC",
            "-O2",
        ]
        .map(String::from),
    );
    Ok(flags)
}

/// Returns the runtime object files, compiling them into the cache first if needed.
pub(crate) fn ensure_runtime(cache_dir: &Path, spinner: &Spinner) -> Result<Vec<PathBuf>> {
    let flags = cxx_flags(true)?;
    let compiler = cxx();
    let key = content_key(&[
        RUNTIME_FORMAT.as_bytes(),
        verilator_version()?.as_bytes(),
        compiler.as_bytes(),
        cxx_version()?.as_bytes(),
        flags.join(" ").as_bytes(),
    ]);
    let name = format!("runtime-{key}");
    let dir = cache_dir.join(&name);
    let objects: Vec<PathBuf> = SOURCES.iter().map(|s| dir.join(format!("{s}.o"))).collect();
    if objects.iter().all(|o| o.is_file()) {
        return Ok(objects);
    }
    let lock = key_lock(&name);
    let _guard = lock.lock().unwrap_or_else(|e| e.into_inner());
    if objects.iter().all(|o| o.is_file()) {
        return Ok(objects);
    }
    ensure_dir(cache_dir)?;
    spinner.step("compiling the Verilator runtime (once per Verilator version)");
    let staging = staging_dir(cache_dir, "runtime")?;
    let log = Log::create(staging.path().join("runtime.log"))?;
    let build = || -> Result<()> {
        let inc = verilator_root()?.join("include");
        let mut children = Vec::new();
        for s in SOURCES {
            let mut cmd = Command::new(&compiler);
            cmd.args(&flags)
                .arg("-c")
                .arg("-o")
                .arg(staging.path().join(format!("{s}.o")))
                .arg(inc.join(format!("{s}.cpp")));
            children.push((s, log.spawn(&mut cmd)?));
        }
        let mut first_err = None;
        for (s, child) in children {
            if let Err(e) = log.wait(child, &format!("compiling the Verilator runtime ({s}.cpp)")) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    };
    build().map_err(|e| keep_failed_log(e, cache_dir, &name))?;
    publish(staging, &dir)?;
    Ok(objects)
}
