//! Conversions between integers and the datapath's 17-bit limb vectors (exact or redundant).
//! Both run in time linear in the width: the host driver frames every request with them.

use num_bigint::BigUint;

/// Bits of a digit and of an exact limb.
pub const LIMB_BITS: usize = 17;
/// Bits of the multiplier's step counter: a multiplication has at most 2^STEP_BITS − 1 digits.
pub const STEP_BITS: usize = 10;

const LIMB_MASK: u64 = (1 << LIMB_BITS) - 1;

/// The exact 17-bit limbs of `x`, least significant first, `count` of them (x must fit).
pub fn to_limbs(x: &BigUint, count: usize) -> Vec<u64> {
    let mut limbs = vec![0u32; count];
    write_limbs(x, &mut limbs);
    limbs.into_iter().map(u64::from).collect()
}

/// Writes the exact 17-bit limbs of `x`, least significant first, one per `out` entry (x must
/// fit): [`to_limbs`] without the allocation, for the host's framing.
pub fn write_limbs(x: &BigUint, out: &mut [u32]) {
    assert!(x.bits() as usize <= LIMB_BITS * out.len(), "{} bits do not fit in {} limbs", x.bits(), out.len());
    // A bit reservoir fed 32 bits at a time: one pass over x's digits, no allocation.
    let mut digits = x.iter_u32_digits();
    let (mut reservoir, mut held) = (0u64, 0usize);
    for limb in out.iter_mut() {
        if held < LIMB_BITS {
            reservoir |= u64::from(digits.next().unwrap_or(0)) << held;
            held += 32;
        }
        *limb = (reservoir & LIMB_MASK) as u32;
        reservoir >>= LIMB_BITS;
        held -= LIMB_BITS;
    }
}

/// Σ limbs_j·2^(17j) for exact limbs (each below 2^17), by packing their bits: the inverse of
/// [`write_limbs`], one pass and one allocation (the result's: the digits are packed on the
/// stack up to [`STACK_DIGITS`]).
pub fn from_exact_limbs(limbs: impl ExactSizeIterator<Item = u32>) -> BigUint {
    let count = (limbs.len() * LIMB_BITS).div_ceil(32);
    let (mut stack, mut heap) = ([0u32; STACK_DIGITS], Vec::new());
    let digits = if count <= STACK_DIGITS {
        &mut stack[..count]
    } else {
        heap.resize(count, 0);
        &mut heap[..]
    };
    let (mut reservoir, mut held, mut next) = (0u64, 0usize, 0);
    for limb in limbs {
        debug_assert!(u64::from(limb) <= LIMB_MASK);
        reservoir |= u64::from(limb) << held;
        held += LIMB_BITS;
        if held >= 32 {
            digits[next] = reservoir as u32;
            (reservoir, held, next) = (reservoir >> 32, held - 32, next + 1);
        }
    }
    if held > 0 {
        digits[next] = reservoir as u32;
    }
    BigUint::from_slice(digits)
}

/// 32-bit digits [`from_exact_limbs`] packs without a heap buffer: a 4096-bit ciphertext's.
const STACK_DIGITS: usize = 256;

/// Σ limbs_j·2^(17j), for exact or redundant limbs.
pub fn from_limbs(limbs: impl IntoIterator<Item = u64>) -> BigUint {
    let limbs: Vec<u64> = limbs.into_iter().collect();
    // Each limb adds at most 64 bits at its offset: room for every limb plus the carries.
    let mut words = vec![0u64; (limbs.len() * LIMB_BITS).div_ceil(64) + 3];
    for (j, &l) in limbs.iter().enumerate() {
        let (mut index, offset) = (j * LIMB_BITS / 64, j * LIMB_BITS % 64);
        let shifted = u128::from(l) << offset;
        let mut carry = 0u128;
        for part in [shifted as u64, (shifted >> 64) as u64] {
            let sum = u128::from(words[index]) + u128::from(part) + carry;
            words[index] = sum as u64;
            carry = sum >> 64;
            index += 1;
        }
        while carry != 0 {
            let sum = u128::from(words[index]) + carry;
            words[index] = sum as u64;
            carry = sum >> 64;
            index += 1;
        }
    }
    BigUint::from_bytes_le(&words.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_traits::Zero;
    use proptest::prelude::*;

    fn naive_from_limbs(limbs: &[u64]) -> BigUint {
        limbs.iter().enumerate().fold(BigUint::zero(), |acc, (j, &l)| acc + (BigUint::from(l) << (j * LIMB_BITS)))
    }

    proptest! {
        #[test]
        fn limbs_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..1200), extra in 0usize..3) {
            let x = BigUint::from_bytes_le(&bytes);
            let count = (x.bits() as usize).div_ceil(LIMB_BITS) + extra;
            let limbs = to_limbs(&x, count);
            prop_assert!(limbs.iter().all(|&l| l <= LIMB_MASK));
            prop_assert_eq!(from_limbs(limbs.iter().copied()), x.clone());
            let mut written = vec![0u32; count];
            write_limbs(&x, &mut written);
            prop_assert!(written.iter().zip(&limbs).all(|(&w, &l)| u64::from(w) == l));
            prop_assert_eq!(from_exact_limbs(written.into_iter()), x);
        }

        #[test]
        fn redundant_limbs_sum_like_the_definition(limbs in proptest::collection::vec(any::<u64>(), 0..300)) {
            prop_assert_eq!(from_limbs(limbs.iter().copied()), naive_from_limbs(&limbs));
        }
    }
}
