//! # ecrt-hdl
//!
//! The ecrt accelerator described in rust-hdl, emitted as Verilog for Virtex-7. Its sizes, framing,
//! register map and key constants come from `ecrt-contract`, re-exported here.

pub use ecrt_contract::{config, host, interface, limbs, part};

pub mod accelerator;
pub mod b_windows;
pub mod board;
pub mod correction;
pub mod decrypt_core;
pub mod emit;
pub mod fold_base;
pub mod fold_mul;
pub mod fold_normalize;
pub mod fold_operands;
pub mod fold_sum;
pub mod modexp;
pub mod mul_add;
pub mod registers;
pub mod slot_control;
pub mod stream_in;
pub mod stream_out;
#[doc(hidden)]
pub mod testing;
pub mod window_pieces;

testing::clocked!(
    mul_add::MulAddReg,
    mul_add::LoopMulAddReg,
    slot_control::SlotControl,
    fold_operands::FoldOperands,
    fold_mul::FoldMul,
    modexp::ModExp,
    correction::Correction,
    decrypt_core::DecryptCore,
    registers::Registers,
    stream_in::StreamIn,
    stream_out::StreamOut,
    accelerator::Accelerator
);

/// `n` default values: the children or ports of a block `n` limbs wide.
pub(crate) fn many<T: Default>(n: usize) -> Vec<T> {
    (0..n).map(|_| T::default()).collect()
}
