//! The client of an `ecrt serve` on this host: [`client::ServiceClient`] asks it for its keys, a
//! public key, its status or metrics, and opens a key as the engine behind
//! `BackendSpec::Service`; [`protocol`] is the wire protocol both sides speak, [`status`] what the
//! service reports about itself.

pub mod client;
pub mod protocol;
pub mod status;

pub use client::{ServiceClient, ServiceError};
pub use status::ServiceStatus;

/// The key id clients ask for: the first 8 bytes of SHA-256 over n's big-endian bytes, in hex.
pub fn key_id(n: &num_bigint::BigUint) -> String {
    let digest = openssl::sha::sha256(&n.to_bytes_be());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}
