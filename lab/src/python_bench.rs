//! The reports of `python -m ecrt.bench` (python/ecrt/bench.py writes them): the Python package
//! against phe, and with `--fate` against FATE's fate_utils, in one Python process. Read here
//! only, for the figures page.

use crate::report::Figure;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `tool` of a Python bench report, by which a record is known as one.
pub const TOOL: &str = "python -m ecrt.bench";

/// What `python -m ecrt.bench --out` writes: medians of interleaved passes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PythonReport {
    /// [`TOOL`].
    pub tool: String,
    pub key_bits: Figure<usize>,
    /// Ciphertexts per pass.
    pub count: Figure<usize>,
    pub rounds: Figure<usize>,
    /// The threads of the all-threads pass.
    pub threads: Figure<usize>,
    /// Whether phe had gmpy2.
    pub gmpy2: bool,
    /// Seconds per pass, by pass: `phe`, `ecrt_1_thread`, `ecrt_{threads}_threads`.
    pub median_pass_s: BTreeMap<String, f64>,
    /// µs per decryption, by pass as `median_pass_s`.
    pub per_decryption_us: BTreeMap<String, Figure<f64>>,
    pub ratio_ecrt_1_thread_to_phe: Figure<f64>,
    pub ratio_ecrt_all_threads_to_phe: Figure<f64>,
    /// Throughput on all threads over one.
    pub thread_scaling: Figure<f64>,
    pub key_open_ms: KeyOpenTimes,
    /// Decryptions checked against phe's.
    pub verified: usize,
}

/// Opening a key, its checks included, ms.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeyOpenTimes {
    /// From a phe `PaillierPrivateKey`.
    pub phe_object: Figure<f64>,
    /// From a JWK file.
    pub jwk_file: Figure<f64>,
}

/// The `tool` of `python -m ecrt.bench --fate`'s report.
pub const FATE_TOOL: &str = "python -m ecrt.bench --fate";

/// What `python -m ecrt.bench --fate --json` writes: `ecrt.fate.Decryptor` against FATE's
/// `fate_utils`, medians of interleaved passes. Its keys are the same whatever `--threads` is.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FateReport {
    /// [`FATE_TOOL`].
    pub tool: String,
    pub key_bits: Figure<usize>,
    /// Ciphertexts in the vector.
    pub count: Figure<usize>,
    pub rounds: Figure<usize>,
    /// ecrt's threads, and fate_utils' processes, of the "all" passes.
    pub threads: Figure<usize>,
    pub fate_utils_version: String,
    /// Seconds per pass.
    pub median_pass_s: FatePasses,
    /// µs per decryption.
    pub per_decryption_us: FatePasses,
    pub ratio_ecrt_1_thread_to_fate_utils_1_thread: Figure<f64>,
    pub ratio_ecrt_all_threads_to_fate_utils_1_thread: Figure<f64>,
    pub ratio_ecrt_all_threads_to_fate_utils_all_processes: Figure<f64>,
    /// ecrt's throughput on all threads over one.
    pub thread_scaling: Figure<f64>,
    /// fate_utils' throughput in all processes over one thread.
    pub process_scaling_fate_utils: Figure<f64>,
    /// Opening a fate_utils `SK` in ecrt, its checks included, ms.
    pub key_open_ms: Figure<f64>,
    /// Decryptions checked against fate_utils', bit for bit.
    pub verified: usize,
}

/// A figure of each pass of [`FateReport`] (the report's `passes` describes them).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FatePasses {
    /// fate_utils' `sk.decrypt_to_encoded`: one thread, as it holds the GIL.
    pub fate_utils_1_thread: Figure<f64>,
    /// The same in a pool of `threads` processes, one slice of the vector each.
    pub fate_utils_all_processes: Figure<f64>,
    pub ecrt_1_thread: Figure<f64>,
    pub ecrt_all_threads: Figure<f64>,
}
