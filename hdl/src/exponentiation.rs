//! The exponentiation unit (docs/architecture.md, "Exponentiation unit"): the multiplier's two
//! interleaved slots, each with its key's constants, its exponent and its window table, run
//! through an exponent schedule fixed when the RTL is generated.
//!
//! - [`modexp`]: the unit, one [`crate::multiplier::fold_mul::FoldMul`] and two slots;
//! - [`slot_control`]: one slot's storage and sequencer;
//! - [`lane_exp`]: exponentiations in the deep-loop multiplier's lanes (not yet in the
//!   accelerator).

pub mod lane_exp;
pub mod modexp;
pub mod slot_control;
