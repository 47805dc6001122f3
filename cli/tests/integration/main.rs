//! The crate's integration tests, one module per subject, in one binary: the test harness
//! runs them in parallel with one another, and the crate's dependencies are linked once.

mod bitstream;
mod cli;
mod emulate;
mod phe_interop;
mod secrets;
mod service;
mod service_hardening;
mod xdma;
