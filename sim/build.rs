//! A fingerprint of the sources the accelerator's Verilog is emitted from (the HDL, its contract,
//! the golden model it takes constants from, and the locked dependency versions, rust-hdl's
//! among them): the emitted Verilog is cached on disk under it, so that a process that builds an
//! already-built configuration skips rust-hdl's emission (tens of seconds at full width).

use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let inputs = ["hdl/src", "hdl/Cargo.toml", "contract/src", "contract/Cargo.toml", "golden-model/src", "Cargo.lock"];
    let mut paths = Vec::new();
    for input in inputs {
        let path = root.join(input);
        println!("cargo:rerun-if-changed={}", path.display());
        if path.is_dir() {
            files(&path, &mut paths);
        } else {
            paths.push(path);
        }
    }
    paths.sort();
    // Two independent 64-bit hashes: a stale entry would need both to collide.
    let (mut a, mut b) = (DefaultHasher::new(), DefaultHasher::new());
    b.write(b"ecrt-sim emitted verilog");
    for path in &paths {
        let relative = path.strip_prefix(&root).unwrap_or(path).to_string_lossy().into_owned();
        let bytes = std::fs::read(path).unwrap_or_default();
        for h in [&mut a, &mut b] {
            h.write(relative.as_bytes());
            h.write_usize(bytes.len());
            h.write(&bytes);
        }
    }
    println!("cargo:rustc-env=ECRT_EMIT_FINGERPRINT={:016x}{:016x}", a.finish(), b.finish());
}
