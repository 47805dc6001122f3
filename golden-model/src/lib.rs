//! # ecrt-golden
//!
//! The software reference of ecrt: Paillier keys, encryption and three decryptions (textbook,
//! CRT, eCRT), python-paillier's formats, and a bit-exact model of every algorithm the hardware runs.
//! Every other level of ecrt (rust-hdl simulation, Verilator, the driver) is checked against it.

pub mod encoding;
pub mod hw;
pub mod key;
pub mod paillier;
pub mod phe_format;
pub mod prime;

pub use key::{KeyError, PrivateKey, PublicKey};
pub use paillier::CiphertextError;
