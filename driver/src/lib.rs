//! # ecrt-driver
//!
//! The host library of ecrt. [`api::Decryptor`] is the API applications use: open a backend, load
//! a key, submit ciphertexts and take plaintexts in order, with a bounded queue, per-item errors
//! and timeouts. [`backends`]: the CPU, the accelerator's Verilator model (`sim`), the board
//! behind Xilinx's XDMA driver, and the client of an `ecrt serve` that owns the devices and the
//! keys for many applications. [`jsonl`] reads and writes python-paillier's formats, [`key_file`]
//! its key files.
//!
//! Feature `sim` (the default): the Verilator backend (rust-hdl and the harness). Without it, the
//! library has the `cpu`, `xdma` and `service` backends and needs neither rust-hdl nor Verilator.

pub mod api;
pub mod backends;
pub mod batch;
pub mod engine;
pub mod files;
pub mod item;
pub mod jsonl;
pub mod key_file;
pub mod redact;
