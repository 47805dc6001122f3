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

/// Sets of copies one source register may load: at most
/// [`MAX_REGISTER_FANOUT`](crate::part::MAX_REGISTER_FANOUT) copies a set.
pub fn sets(copies: usize) -> usize {
    copies.div_ceil(crate::part::MAX_REGISTER_FANOUT)
}

/// `copies` copies for each of `groups` groups, each group's in [`sets`] of their own, a source
/// register each (copy c of group i at index i·C + c, C ≥ `copies`).
pub fn in_sets<T: rust_hdl::prelude::Synth>(copies: usize, groups: usize) -> replicas::ReplicaSets<T> {
    let n = sets(copies);
    replicas::ReplicaSets::new(groups * n, copies.div_ceil(n))
}
