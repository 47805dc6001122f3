//! The shell around the cores (docs/architecture.md, "The accelerator"): the accelerator's top
//! and what the XDMA IP talks to.
//!
//! - [`accelerator`]: the top, `cores` decryption cores behind the dispatcher and the collector;
//! - [`registers`]: the AXI4-Lite register block (identification, status, key loading);
//! - `axi_lite`: the AXI4-Lite slave's ports, declared once for the top and the register block;
//! - [`stream_in`]: the request stream's parser and the dispatcher;
//! - [`stream_out`]: the result collector and the result stream.

pub mod accelerator;
mod axi_lite;
pub mod registers;
pub mod stream_in;
pub mod stream_out;
