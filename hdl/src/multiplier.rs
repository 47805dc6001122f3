//! The Montgomery multiplier (docs/architecture.md, "The Montgomery multiplier"): one multiplier
//! per core with two modes on the same DSP48E1s, the folding mode (k limbs of the multiplier per
//! step, inside the Montgomery domain) and the classic mode (one digit per step, exact quotient).
//!
//! - [`fold_mul`]: the multiplier, two interleaved slots, both modes;
//! - [`fold_operands`]: a slot's operands, B in windows and A's exact digits k at a time;
//! - [`b_windows`], [`window_pieces`]: B in 23-bit windows for the 24×17 a·b products, and where
//!   the pieces of those products land;
//! - [`fold_base`]: stage 1's column addends;
//! - [`fold_sum`]: stage 2's column sums and redistribution;
//! - [`fold_normalize`]: the result's normalized limbs;
//! - [`mul_add`]: the DSP48E1 leaves, `p = c + x·y`; [`pre_add_mul`]: the one on the pre-adder;
//! - [`deep_mul`]: the deep-loop multiplier, every stage a register and at most one adder, k + 3
//!   interleaved lanes, folding mode only (not yet in the exponentiation unit);
//! - [`column_addends`], [`redistribute`]: its column addends and its redistribution;
//! - [`delay_mul`]: the delayed-quotient multiplier, a two-cycle loop with no DSP on it, two
//!   interleaved lanes, folding mode only (not yet in an exponentiation unit).

pub mod b_windows;
pub mod column_addends;
pub mod deep_mul;
pub mod delay_mul;
pub mod digit_window_mul;
pub mod fold_base;
pub mod fold_mul;
pub mod fold_normalize;
pub mod fold_operands;
pub mod fold_sum;
pub mod mul_add;
pub mod pre_add_mul;
pub mod quotient_sum;
pub mod redistribute;
pub mod window_pieces;
