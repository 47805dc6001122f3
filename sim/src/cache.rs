//! The on-disk cache: where it lives, content keys, and publishing finished entries atomically.
//!
//! Every entry is built in a private temporary directory inside the cache directory and then
//! renamed to its final name, which is the hex content key. A rename is atomic, so an entry either
//! exists complete or not at all; when two processes build the same entry, the second rename fails,
//! the loser discards its copy and uses the winner's. Within one process, builds of the same key
//! are serialized by [`key_lock`] so that parallel tests do not duplicate work.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use sha2::{Digest, Sha256};

use crate::error::{Result, SimError};

/// The cache directory to use when the caller has no preference.
///
/// In order: `$ECRT_SIM_CACHE`; `$CARGO_TARGET_DIR/ecrt-sim`; `<target>/ecrt-sim` where `<target>`
/// is the Cargo target directory that contains the running executable (found by its
/// `CACHEDIR.TAG`, so `target/debug/deps/x` and `target/release/x` both give `target/ecrt-sim`);
/// `$XDG_CACHE_HOME/ecrt-sim`; `~/.cache/ecrt-sim`; finally `<temp dir>/ecrt-sim`.
pub fn default_cache_dir() -> PathBuf {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(p) = env("ECRT_SIM_CACHE") {
        return p;
    }
    if let Some(p) = env("CARGO_TARGET_DIR") {
        return p.join("ecrt-sim");
    }
    if let Some(target) = std::env::current_exe().ok().as_deref().and_then(target_dir_of) {
        return target.join("ecrt-sim");
    }
    if let Some(p) = env("XDG_CACHE_HOME") {
        return p.join("ecrt-sim");
    }
    if let Some(h) = env("HOME") {
        return h.join(".cache").join("ecrt-sim");
    }
    std::env::temp_dir().join("ecrt-sim")
}

/// The Cargo target directory containing `exe`: the nearest ancestor holding `CACHEDIR.TAG`, or
/// else the parent of a `debug`/`release` directory whose own parent is named `target`.
fn target_dir_of(exe: &Path) -> Option<PathBuf> {
    let ancestors = exe.ancestors().skip(1);
    for dir in ancestors.clone().take(4) {
        if dir.join("CACHEDIR.TAG").is_file() {
            return Some(dir.to_path_buf());
        }
    }
    ancestors.take(4).find(|d| d.file_name().is_some_and(|n| n == "target")).map(Path::to_path_buf)
}

/// A content key: SHA-256 over length-framed parts, as 32 hex digits (128 bits).
pub(crate) fn content_key(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// A process-wide lock for one cache key.
pub(crate) fn key_lock(key: &str) -> Arc<Mutex<()>> {
    static LOCKS: OnceLock<Mutex<HashMap<String, Arc<Mutex<()>>>>> = OnceLock::new();
    let mut map = LOCKS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    map.entry(key.to_owned()).or_default().clone()
}

/// Creates the cache directory (and its `CACHEDIR.TAG`, so backup tools skip it), and removes
/// staging directories that builders killed more than a day ago left behind.
pub(crate) fn ensure_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| SimError::io(format!("creating cache dir {}", dir.display()), e))?;
    let tag = dir.join("CACHEDIR.TAG");
    if !tag.exists() {
        let _ = std::fs::write(
            &tag,
            "Signature: 8a477f597d28d172789f06886806bc55\n# ecrt-sim build cache: safe to delete.\n",
        );
    }
    let day = std::time::Duration::from_secs(24 * 3600);
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let stale = entry.file_name().to_string_lossy().starts_with(".tmp-")
            && entry.metadata().and_then(|m| m.modified()).is_ok_and(|t| t.elapsed().is_ok_and(|age| age > day));
        if stale {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    Ok(())
}

/// A fresh private directory inside `dir`, to become a cache entry with [`publish`].
pub(crate) fn staging_dir(dir: &Path, prefix: &str) -> Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(&format!(".tmp-{prefix}-"))
        .tempdir_in(dir)
        .map_err(|e| SimError::io(format!("creating a build directory in {}", dir.display()), e))
}

/// Renames the finished staging directory to `dest`. If another builder got there first, its entry
/// is kept and ours is deleted. Returns whether ours became the entry.
pub(crate) fn publish(staging: tempfile::TempDir, dest: &Path) -> Result<bool> {
    let src = staging.keep();
    match std::fs::rename(&src, dest) {
        Ok(()) => Ok(true),
        Err(_) if dest.is_dir() => {
            let _ = std::fs::remove_dir_all(&src);
            Ok(false)
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&src);
            Err(SimError::io(format!("moving {} to {}", src.display(), dest.display()), e))
        }
    }
}

/// Moves the log of a failed build out of its staging directory (which is deleted) to
/// `<cache_dir>/failed/<name>.log`, and points the error at it.
pub(crate) fn keep_failed_log(err: SimError, cache_dir: &Path, name: &str) -> SimError {
    match err {
        SimError::Build { stage, log, tail } => {
            let failed = cache_dir.join("failed");
            let dest = failed.join(format!("{name}.log"));
            let moved = std::fs::create_dir_all(&failed).and_then(|_| std::fs::copy(&log, &dest)).is_ok();
            SimError::Build { stage, log: if moved { dest } else { log }, tail }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_framed() {
        assert_ne!(content_key(&[b"ab", b"c"]), content_key(&[b"a", b"bc"]));
        assert_eq!(content_key(&[b"x"]).len(), 32);
    }

    #[test]
    fn target_dir_from_executable_path() {
        let t = tempfile::tempdir().unwrap();
        let target = t.path().join("tgt");
        std::fs::create_dir_all(target.join("debug/deps")).unwrap();
        std::fs::write(target.join("CACHEDIR.TAG"), "x").unwrap();
        assert_eq!(target_dir_of(&target.join("debug/deps/test-123")), Some(target.clone()));
        assert_eq!(target_dir_of(&target.join("release/ecrt")), Some(target));
        let plain = t.path().join("a/target/release/x");
        assert_eq!(target_dir_of(&plain), Some(t.path().join("a/target")));
        assert_eq!(target_dir_of(Path::new("/usr/local/bin/ecrt")), None);
    }

    #[test]
    fn publish_race_keeps_first() {
        let t = tempfile::tempdir().unwrap();
        let dest = t.path().join("entry");
        let a = staging_dir(t.path(), "k").unwrap();
        std::fs::write(a.path().join("f"), "a").unwrap();
        let b = staging_dir(t.path(), "k").unwrap();
        std::fs::write(b.path().join("f"), "b").unwrap();
        assert!(publish(a, &dest).unwrap());
        assert!(!publish(b, &dest).unwrap());
        assert_eq!(std::fs::read_to_string(dest.join("f")).unwrap(), "a");
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 1);
    }
}
