//! The raw layer under [`crate::api::Decryptor`] for backends that decrypt whole batches: the
//! CPU here, the Verilator model in [`crate::sim`]. The XDMA backend streams ([`crate::xdma`]).

use crate::batch::parallel_map;
use crate::cpu::{CpuKey, Scratch};
use ecrt_golden::PrivateKey;
use num_bigint::BigUint;

/// A decryption engine with a private key loaded.
pub trait Backend: Sync {
    /// The backend's name, as `--backend` spells it.
    fn name(&self) -> &'static str;
    /// Decrypts ciphertexts already checked against the public key (0 < c < n², gcd(c, n) = 1),
    /// one result per input, in order. An item's error is reported in its place; an error that
    /// stops the whole batch is returned as such.
    fn decrypt_batch(&self, ciphertexts: &[BigUint]) -> anyhow::Result<Vec<Result<BigUint, String>>>;
}

/// eCRT on the host CPU, one OpenSSL context per worker thread.
pub struct CpuBackend {
    key: CpuKey,
    threads: usize,
}

impl CpuBackend {
    pub fn new(key: &PrivateKey, threads: usize) -> anyhow::Result<Self> {
        Ok(CpuBackend { key: CpuKey::new(key)?, threads })
    }
}

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn decrypt_batch(&self, ciphertexts: &[BigUint]) -> anyhow::Result<Vec<Result<BigUint, String>>> {
        Ok(parallel_map(ciphertexts, self.threads, "decrypt", Scratch::new, |scratch, c| {
            self.key.decrypt_ecrt(c, scratch).map_err(|e| format!("OpenSSL failed: {e}"))
        })?)
    }
}
