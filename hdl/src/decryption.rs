//! The eCRT decryption core (docs/architecture.md, "The decryption core"): both primes' paths on
//! one exponentiation unit, and the final correction.
//!
//! - [`decrypt_core`]: the core;
//! - [`correction`]: the sum of the two primes' terms and its single correction.

pub mod correction;
pub mod decrypt_core;
