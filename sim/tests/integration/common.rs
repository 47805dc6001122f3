//! Shared by the integration tests: build options on the workspace cache.

use ecrt_sim::BuildOptions;

/// Builds go to the default cache (`target/ecrt-sim`), so the Verilator runtime is compiled once.
pub fn opts() -> BuildOptions {
    BuildOptions { cache_dir: ecrt_sim::default_cache_dir(), progress: false }
}
