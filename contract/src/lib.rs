//! # ecrt-contract
//!
//! What the ecrt accelerator and its hosts agree on, with no RTL in it: the configuration
//! ([`config`]), the stream framing and the register map ([`interface`]), the 17-bit limb packing
//! ([`limbs`]), the FPGA parts and their resources ([`part`]), the clocks a logic delay allows ([`clock`]), the constants a host loads for a key ([`host`]), and the register sequences that
//! probe a card and load a key ([`session`]), with a software model of the register block
//! ([`register_model`]). `ecrt-hdl` builds its RTL from these definitions; the driver, the
//! emulator, the simulator harness and `docs/interface.md` read the same ones.

pub mod clock;
pub mod config;
pub mod host;
pub mod interface;
pub mod limbs;
pub mod part;
pub mod register_model;
pub mod session;
