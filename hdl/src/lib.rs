//! # ecrt-hdl
//!
//! The ecrt accelerator described in rust-hdl, emitted as Verilog for Virtex-7. Its sizes, framing,
//! register map and key constants come from `ecrt-contract`, re-exported here.
//!
//! One block per file, in the groups of docs/architecture.md: the Montgomery multiplier
//! ([`multiplier`]), the exponentiation unit ([`exponentiation`]), the decryption core
//! ([`decryption`]) and the shell around the cores ([`shell`]); [`emit`] writes the Verilog and its
//! manifest, [`board`] the board design for Vivado; [`fanout`] holds the register copies that
//! keep every net's loads few.

pub use ecrt_contract::{config, host, interface, limbs, part};

pub mod board;
pub mod decryption;
pub mod emit;
pub mod exponentiation;
pub mod fanout;
pub mod multiplier;
pub mod shell;
#[doc(hidden)]
pub mod testing;

testing::clocked!(
    fanout::replicas::Replicas<rust_hdl::prelude::Bits<3>>,
    fanout::replicas::ReplicaSets<rust_hdl::prelude::Bits<3>>,
    fanout::toggles::Toggles,
    multiplier::mul_add::MulAddReg,
    multiplier::mul_add::LoopMulAddReg,
    multiplier::mul_add::QuotientMul,
    multiplier::mul_add::CascadeMulAdd<18, 35>,
    multiplier::pre_add_mul::PreAddQuotientMul,
    multiplier::digit_window_mul::DigitWindowMul,
    multiplier::quotient_sum::QuotientSum,
    multiplier::fold_operands::FoldOperands,
    multiplier::fold_mul::FoldMul,
    multiplier::deep_mul::DeepMul,
    multiplier::delay_mul::DelayMul,
    multiplier::column_addends::ColumnAddends,
    exponentiation::slot_control::SlotControl,
    exponentiation::modexp::ModExp,
    exponentiation::lane_exp::LaneExp,
    exponentiation::lane_exp::DelayExp,
    decryption::correction::Correction,
    decryption::decrypt_core::DecryptCore,
    decryption::deep_core::DeepCore,
    decryption::deep_core::DelayCore,
    shell::registers::Registers,
    shell::stream_in::StreamIn,
    shell::stream_out::StreamOut,
    shell::accelerator::Accelerator
);

/// `n` default values: the children or ports of a block `n` limbs wide.
pub(crate) fn many<T: Default>(n: usize) -> Vec<T> {
    (0..n).map(|_| T::default()).collect()
}
