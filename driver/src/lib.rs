//! # ecrt-driver
//!
//! The host side of ecrt. [`api::Decryptor`] is the API applications use: open a backend, load a
//! key, submit ciphertexts and take plaintexts in order, with a bounded queue, per-item errors and
//! timeouts. Backends: the CPU ([`cpu`]), the accelerator's Verilator model (`sim`) and the
//! board behind Xilinx's XDMA driver ([`xdma`]), which `emulate` can stand in for with a FUSE
//! file system backed by the Verilator model, and a local [`service`] that owns the devices and
//! the keys for many applications. [`jsonl`] reads and writes python-paillier's
//! formats; the `ecrt` command is built on all of them.
//!
//! Features: `sim` (the Verilator backend: rust-hdl and the harness), `emulate` (the FUSE device),
//! `cli` (the `ecrt` command; all of them). Without them, the library has the `cpu` and `xdma`
//! backends and needs neither rust-hdl nor Verilator.

pub mod api;
pub mod backend;
pub mod batch;
pub mod chip;
pub mod cpu;
#[cfg(feature = "emulate")]
pub mod emulate;
pub mod engine;
/// docs/figures.md, rendered from the measurement records in docs/figures/.
#[cfg(feature = "cli")]
pub mod figures;
pub mod item;
pub mod jsonl;
pub mod key_file;
pub mod redact;
pub mod service;
#[cfg(feature = "sim")]
pub mod sim;
pub mod xdma;
