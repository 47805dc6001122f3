//! Copies of a register for its loads, so that no register drives more than
//! [`MAX_REGISTER_FANOUT`](crate::part::MAX_REGISTER_FANOUT) of them: on 7-series parts routing, not
//! logic, is most of a path, and a net's routing grows with its loads (UG949: replicate
//! high-fanout registers).
//!
//! - [`replicas`]: copies of one register, each loaded from the same input;
//! - [`toggles`]: flip-flops that toggle every cycle, such as the multiplier's slot phase.
//!
//! Copies with the same input are what synthesis merges as equivalent registers, so each is kept
//! (`keep` for Yosys on its process, `keep` and `dont_touch` for Vivado on its register).

pub mod replicas;
pub mod toggles;

/// Limbs (windows, columns) that read one copy of a select. A limb's multiplexer loads the select
/// with each of its bits (17 to 24), and synthesis splits some over two LUTs: three 19-bit limbs
/// measured 60 to 78 loads a copy, two stay below
/// [`MAX_REGISTER_FANOUT`](crate::part::MAX_REGISTER_FANOUT).
pub const LIMBS_PER_COPY: usize = 2;

/// Copies of a select for `limbs` limbs, [`LIMBS_PER_COPY`] each.
pub fn copies(limbs: usize) -> usize {
    limbs.div_ceil(LIMBS_PER_COPY)
}
