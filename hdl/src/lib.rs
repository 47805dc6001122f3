//! # ecrt-hdl
//!
//! The ecrt accelerator described in rust-hdl, emitted as Verilog for Virtex-7.

pub mod column;
pub mod config;
pub mod emit;
pub mod host;
pub mod limbs;
pub mod modexp;
pub mod montmul;
pub mod mul_add;
pub mod slot_control;
pub mod slot_operands;
#[doc(hidden)]
pub mod testing;

testing::clocked!(
    mul_add::MulAddReg,
    column::Column,
    montmul::MontMul,
    slot_control::SlotControl,
    slot_operands::SlotOperands,
    modexp::ModExp
);

/// `n` default values: the children or ports of a block `n` limbs wide.
pub(crate) fn many<T: Default>(n: usize) -> Vec<T> {
    (0..n).map(|_| T::default()).collect()
}
