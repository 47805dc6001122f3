//! Shared by the integration tests: build options on the workspace cache, phe's test vectors, a
//! Yosys cache's entries.

use ecrt_sim::BuildOptions;
use std::path::PathBuf;

/// Builds go to the default cache (`target/ecrt-sim`), so the Verilator runtime is compiled once.
pub fn opts() -> BuildOptions {
    BuildOptions { cache_dir: ecrt_sim::default_cache_dir(), progress: false }
}

/// phe's test vectors of one key size (fixtures/vectors/phe-BITS.json): its private key and its
/// cases.
pub fn vectors(bits: u32) -> serde_json::Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../fixtures/vectors/phe-{bits}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A file's inode and modification time: a cache stores what it builds as a new file, so an
/// unchanged stamp shows that a call was served from the cache.
pub fn stamp(path: &std::path::Path) -> (u64, std::time::SystemTime) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).unwrap();
    (meta.ino(), meta.modified().unwrap())
}

/// A Yosys cache's entries: each name and [`stamp`].
pub fn cache_entries(cache: &std::path::Path) -> Vec<(std::ffi::OsString, (u64, std::time::SystemTime))> {
    let mut found: Vec<_> = std::fs::read_dir(cache.join("estimate"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name(), stamp(&e.path()))
        })
        .collect();
    found.sort();
    found
}
