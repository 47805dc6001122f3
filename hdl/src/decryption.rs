//! The eCRT decryption core (docs/architecture.md, "The decryption core"): both primes' paths on
//! one exponentiation unit, and the final correction.
//!
//! - [`decrypt_core`]: the core;
//! - [`correction`]: the sum of the two primes' terms and its single correction;
//! - [`deep_core`]: a core on the deep loop's lanes, several decryptions in flight (not yet in
//!   the accelerator).

pub mod correction;
pub mod decrypt_core;
pub mod deep_core;
