//! Where decryptions run, under [`crate::api::Decryptor`]: the host's cores ([`cpu`]), the
//! accelerator's Verilator model ([`sim`]), the board behind Xilinx's XDMA driver ([`xdma`]),
//! and an `ecrt serve` that owns the devices and keys ([`service`]). [`BackendKind`] is the one
//! list of them that the command, the service's configuration and the Python package parse.
//!
//! [`Backend`] is the raw layer for backends that decrypt whole batches (the CPU and the
//! Verilator model); the XDMA backend and the service stream.

use num_bigint::BigUint;
use std::fmt;
use std::str::FromStr;

pub mod cpu;
pub mod service;
#[cfg(feature = "sim")]
pub mod sim;
pub mod xdma;

/// A backend by name, as `--backend`, the service's `backend =` and Python's `backend=` spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// The host's cores, OpenSSL's constant-time exponentiation.
    Cpu,
    /// The accelerator's Verilator model.
    Sim,
    /// The accelerator behind Xilinx's XDMA driver (a board, or the emulated device).
    Xdma,
    /// An `ecrt serve` on this host.
    Service,
}

impl BackendKind {
    /// Every backend, in the order help texts list them.
    pub const ALL: [BackendKind; 4] = [BackendKind::Cpu, BackendKind::Sim, BackendKind::Xdma, BackendKind::Service];

    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Sim => "sim",
            BackendKind::Xdma => "xdma",
            BackendKind::Service => "service",
        }
    }

    /// The names, for help texts and errors: "cpu, sim, xdma or service".
    pub fn names() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|k| k.name()).collect();
        let (last, rest) = names.split_last().expect("backends");
        format!("{} or {last}", rest.join(", "))
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BackendKind {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == text)
            .ok_or_else(|| format!("the backend is {}, not {:?}", Self::names(), crate::redact::redacted(text)))
    }
}

/// A decryption engine with a private key loaded.
pub trait Backend: Sync {
    /// The backend's name, as `--backend` spells it.
    fn name(&self) -> &'static str;
    /// Decrypts ciphertexts already checked against the public key (0 < c < n², gcd(c, n) = 1),
    /// one result per input, in order. An item's error is reported in its place; an error that
    /// stops the whole batch is returned as such.
    fn decrypt_batch(&self, ciphertexts: &[BigUint]) -> anyhow::Result<Vec<Result<BigUint, String>>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backends_parse_by_name() {
        for kind in BackendKind::ALL {
            assert_eq!(kind.name().parse(), Ok(kind));
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{kind}\""));
        }
        let error = "gpu".parse::<BackendKind>().unwrap_err();
        assert!(error.contains("cpu, sim, xdma or service"), "{error}");
    }
}
