//! One submission's outcome: its plaintext or why it has none. Every layer (the API, the engine,
//! the backends) speaks these types.

use num_bigint::BigUint;
use std::time::Duration;

/// Why one ciphertext has no plaintext.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ItemError {
    /// Not a ciphertext under the key (outside 0 < c < n²); never sent to the backend.
    #[error("not a valid ciphertext: {0}")]
    Invalid(String),
    /// The accelerator answered with an error status.
    #[error("the accelerator answered with error status {0:#04x}")]
    Status(u8),
    /// The result did not survive the transfer.
    #[error("corrupted result: {0}")]
    Corrupted(String),
    /// The backend failed this item alone.
    #[error("{0}")]
    Backend(String),
    /// No result came within the timeout (the device is slow, or stalled).
    #[error("no result within {} s", .0.as_secs_f64())]
    Timeout(Duration),
    /// The backend failed before answering this item (or had failed before it was submitted).
    #[error("not decrypted: {0}")]
    Lost(String),
}

/// One submitted ciphertext's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The submission's sequence number (from 0), as [`crate::api::Decryptor::submit`] returned it.
    pub ticket: u64,
    pub result: Result<BigUint, ItemError>,
}
