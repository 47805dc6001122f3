//! Shared by the integration tests: build options on the workspace cache, phe's test vectors.

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
