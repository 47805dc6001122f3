//! The eCRT decryption core (docs/architecture.md, "The decryption core"): both primes' paths on
//! one exponentiation unit, and the final correction.
//!
//! - [`decrypt_core`]: the two-slot engine's core, one decryption at a time;
//! - [`deep_core`]: the lanes engine's core, a decryption per pair of the deep loop's lanes;
//! - [`correction`]: the sum of the two primes' terms and its single correction.

pub mod correction;
pub mod decrypt_core;
pub mod deep_core;

/// Bits of a core's count of jobs in hand (the lanes engine's: one waiting for a pair, one a
/// pair, one in its correction; at most 11, at k = 16).
pub const JOB_COUNT_BITS: usize = 4;
