//! The crate's integration tests, one module per subject, in one binary: the test harness
//! runs them in parallel with one another, and the crate's dependencies are linked once.

mod accelerator;
mod common;
mod deep_core;
mod deep_mul;
mod delay_mul;
mod estimate;
mod estimate_methods;
mod fanout;
mod fold_mul;
mod lane_exp;
mod modexp;
mod ports;
mod timing;
mod verilator;
