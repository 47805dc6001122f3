//! The shell around the cores (docs/architecture.md, "The accelerator"): the accelerator's top
//! and what the XDMA IP talks to.
//!
//! - [`accelerator`]: the top, `cores` decryption cores behind the dispatcher and the collector;
//! - [`registers`]: the AXI4-Lite register block (identification, status, key loading);
//! - [`stream_in`]: the request stream's parser and the dispatcher;
//! - [`stream_out`]: the result collector and the result stream.

pub mod accelerator;
pub mod registers;
pub mod stream_in;
pub mod stream_out;
