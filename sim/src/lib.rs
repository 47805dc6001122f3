//! ecrt-sim: cycle-accurate simulation of emitted Verilog with Verilator, driven from Rust, and
//! FPGA resource estimates with Yosys.
//!
//! The harness is generic: it builds *any* Verilog design (rust-hdl's output or hand-written) into a
//! shared object at run time and loads it, so a new configuration needs no rebuild of the Rust
//! program. Builds are cached by content; the Verilator runtime is compiled once per Verilator
//! version.
//!
//! ```no_run
//! use ecrt_sim::{BuildOptions, Model, ModelSpec};
//! # fn main() -> Result<(), ecrt_sim::SimError> {
//! let verilog = "module top(clock,a,b,s);\n input wire clock;\n input wire [129:0] a;\n \
//!                input wire [129:0] b;\n output reg [130:0] s;\n \
//!                always @(posedge clock) s <= a + b;\nendmodule\n";
//! let spec = ModelSpec::from_verilog(verilog, "top")?;
//! let mut model = Model::build(&spec, &BuildOptions { progress: true, ..Default::default() })?;
//! model.set_u64("a", 40)?;
//! model.set_u64("b", 2)?;
//! model.tick()?;
//! assert_eq!(model.get_u64("s").ok(), None); // 131 bits do not fit a u64: use get_biguint
//! assert_eq!(model.get_biguint("s")?, 42u32.into());
//! let stats = model.run(1_000_000)?;
//! println!("{:.2} M cycles/s", stats.cycles_per_second() / 1e6);
//! # Ok(()) }
//! ```
//!
//! Modules: [`verilator`] (build, load, drive), [`ports`] (port types and the Verilog port parser),
//! [`mod@estimate`] (Yosys resource estimates), [`mod@timing`] (logic delay) and [`mod@fanout`]
//! (register fanout), and the cache location in [`default_cache_dir`].
//! Requirements at run time: `verilator` (5.x), `g++`, `make`, and `yosys` for estimates.

#![warn(missing_docs)]

pub mod accelerator;
mod cache;
pub mod deep_core;
pub mod deep_mul;
pub mod delay_mul;
pub mod error;
pub mod estimate;
pub mod fanout;
pub mod fold_mul;
mod hierarchy;
pub mod lane_exp;
pub mod lane_mul;
mod mangle;
pub mod modexp;
pub mod ports;
mod progress;
mod runtime;
mod shim;
mod synth;
pub mod timing;
mod toolchain;
pub mod verilator;

pub use cache::default_cache_dir;
pub use error::{Result, SimError};
pub use estimate::{estimate, EstimateMethod, EstimateOptions, ModuleResources, ResourceEstimate};
pub use fanout::{estimate_with_fanout, fanout, FanoutReport, NetFanout};
pub use mangle::cpp_port_name;
pub use ports::{module_names, parse_ports, Port, PortDir};
pub use timing::{logic_delay, TimingEstimate};
pub use toolchain::{verilator_version, yosys_version};
pub use verilator::{BuildInfo, BuildOptions, Model, ModelSpec, PortId, PortRef, RunStats};
