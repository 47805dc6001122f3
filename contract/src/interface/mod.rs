//! The accelerator's host interface, defined once: the AXI4-Stream framing of requests and
//! results, and the AXI4-Lite register map. The RTL (`ecrt-hdl`'s `shell`: `registers`,
//! `stream_in`, `stream_out`) takes its constants from here, the driver encodes and decodes frames
//! with the helpers here, and `docs/interface.md` is rendered by [`markdown`] (a test keeps it
//! current).
//!
//! A frame is a sequence of 32-bit words; word k travels in lane (k mod L) of beat ⌊k/L⌋, with
//! L = stream_bits/32 lanes and lane i = TDATA[32i+31:32i]. As bytes (what XDMA moves), word k is
//! bytes 4k…4k+3, little-endian.
//!
//! - [`frames`]: the stream framing, its constants, encoders and decoders;
//! - [`registers`]: the register map, its fields and constants;
//! - [`markdown`]: `docs/interface.md`, rendered from both.

pub mod frames;
pub mod markdown;
pub mod registers;

pub use frames::*;
pub use markdown::{docs_path, markdown};
pub use registers::*;

#[cfg(test)]
mod tests;
