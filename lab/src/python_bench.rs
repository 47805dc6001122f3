//! The report of `python -m ecrt.bench` (python/ecrt/bench.py writes it): the Python package
//! against phe in one Python process. Read here only, for the figures page.

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
