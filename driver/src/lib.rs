//! # ecrt-driver
//!
//! The host side of ecrt: one decryption API over backends ([`backend::Backend`]), JSON-lines
//! batches in python-paillier's formats ([`jsonl`]), and the `ecrt` command built on them.
//! Backends: the CPU ([`cpu`]) and the accelerator's Verilator model ([`sim`]); the XDMA backend
//! comes with the board driver.

pub mod backend;
pub mod batch;
pub mod cpu;
pub mod jsonl;
pub mod sim;
