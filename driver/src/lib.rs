//! # ecrt-driver
//!
//! The host side of ecrt. [`api::Decryptor`] is the API applications use: open a backend, load a
//! key, submit ciphertexts and take plaintexts in order, with a bounded queue, per-item errors and
//! timeouts. Backends: the CPU ([`cpu`]), the accelerator's Verilator model ([`sim`]) and the
//! board behind Xilinx's XDMA driver ([`xdma`]), which [`emulate`] can stand in for with a FUSE
//! file system backed by the Verilator model. [`jsonl`] reads and writes python-paillier's
//! formats; the `ecrt` command is built on all of them.

pub mod api;
pub mod backend;
pub mod batch;
pub mod cpu;
pub mod emulate;
pub mod engine;
pub mod jsonl;
pub mod sim;
pub mod xdma;
