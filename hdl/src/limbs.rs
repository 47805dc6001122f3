//! Conversions between integers and the datapath's 17-bit limb vectors (exact or redundant).

use num_bigint::BigUint;
use num_traits::Zero;

/// Bits of a digit and of an exact limb.
pub const LIMB_BITS: usize = 17;

/// The exact 17-bit limbs of `x`, least significant first, `count` of them (x must fit).
pub fn to_limbs(x: &BigUint, count: usize) -> Vec<u64> {
    assert!(x.bits() as usize <= LIMB_BITS * count, "{} bits do not fit in {count} limbs", x.bits());
    (0..count).map(|j| limb(x, j)).collect()
}

fn limb(x: &BigUint, j: usize) -> u64 {
    let mut v = 0;
    for bit in 0..LIMB_BITS {
        if x.bit((j * LIMB_BITS + bit) as u64) {
            v |= 1 << bit;
        }
    }
    v
}

/// Σ limbs_j·2^(17j), for exact or redundant limbs.
pub fn from_limbs(limbs: impl IntoIterator<Item = u64>) -> BigUint {
    limbs.into_iter().enumerate().fold(BigUint::zero(), |acc, (j, l)| acc + (BigUint::from(l) << (j * LIMB_BITS)))
}
