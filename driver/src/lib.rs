//! # ecrt-driver
//!
//! The host side of ecrt: one decryption API over backends ([`backend::Backend`]), JSON-lines
//! batches in python-paillier's formats ([`jsonl`]), and the `ecrt` command built on them.
//! Today the CPU backend ([`cpu`]) is the one implemented; the simulator and XDMA backends come
//! with the accelerator.

pub mod backend;
pub mod batch;
pub mod cpu;
pub mod jsonl;
