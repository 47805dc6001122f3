//! Bit-exact model of the arithmetic the ecrt hardware performs.
//!
//! Everything here computes exactly what the digit-serial datapath computes, step by step, so that
//! the rust-hdl blocks and the Verilator model can be compared against it value for value. The
//! mathematics is docs/background.md (in particular "The data flow of one prime"); the hardware
//! constraints are its "The hardware" and "Constant time". The algorithm is eCRT-Paillier and the
//! architecture MESA from "Cost-Effective Optimization and Implementation of the CRT-Paillier
//! Decryption Algorithm for Enhanced Performance" (arXiv 2506.17935): its eCRT-Paillier algorithm
//! (merged precomputed constant t_p, no judgments inside Montgomery multiplications) and its
//! full-pipeline architecture (exponent split into segments handled by successive stages).
//!
//! One job per file:
//! - [`montgomery`]: digit-serial Montgomery multiplication without final subtraction (Walter 1999),
//!   wide REDC, entering and leaving the Montgomery domain;
//! - [`fold`]: the high-radix multiplier, k limbs of the multiplier per step, with Orup's
//!   pre-scaled modulus so that no quotient is computed;
//! - [`fold_classic`]: the same multiplier's digit-serial mode with an exact quotient, for the
//!   few operations that need one;
//! - [`wide`]: 24×17 products, the multiplicand in 23-bit windows (the accelerator's layout; the
//!   earlier 17-bit limbs stay as [`Multiplicand::Limbs`]);
//! - [`exponent`]: exponentiation schedules inside the domain (right-to-left with pipeline segments,
//!   left-to-right fixed window) and their cost;
//! - [`exact_div`]: L_p(x) = (x − 1)/p as one more Montgomery loop, modulo R − p;
//! - [`ecrt`]: the per-prime datapath and the eCRT postprocessing with its single final correction.
//!
//! Digits are `u128` because the digit width k is a parameter from [`MIN_DIGIT_BITS`] to
//! [`MAX_DIGIT_BITS`]; multi-digit values are [`BigUint`].

pub mod delay_timing;
pub mod ecrt;
pub mod exact_div;
pub mod exponent;
pub mod fold;
pub mod fold_classic;
pub mod fold_delayed;
pub mod montgomery;
pub mod wide;

pub use delay_timing::{tree_levels, tree_levels_with_base, DelayTiming};
pub use ecrt::{
    postprocess_cost, DelayedEcrtKey, EcrtHwKey, EcrtTrace, FoldEcrtKey, PostprocessCost, Postprocessing,
    PrimeConstants, PrimePathTrace,
};
pub use exact_div::{ExactDivTrace, ExactDivider};
pub use exponent::{
    exp_in_domain, mont_exp, schedule_cost, segment_ranges, DomainMultiplier, ExpStates, ExpTrace, RtlState, RtlStep,
    Schedule, WindowStep, MAX_WINDOW_BITS,
};
pub use fold::{
    limbs_value, FoldContext, FoldMultiplier, FoldShape, FoldStep, FoldTrace, FoldValue, MAX_LIMBS_PER_STEP,
};
pub use fold_classic::{
    exact_limbs, ClassicOp, ClassicPass, ClassicShape, ClassicStep, ClassicTrace, DeepClassicTrace, DelayedClassicTrace,
};
pub use fold_delayed::{DelayedFoldContext, DelayedShape, DelayedStep, DelayedTrace, MAX_QUOTIENT_DELAY};
pub use montgomery::{MontMulTrace, MontStep, MontgomeryContext};
pub use wide::{Multiplicand, LIMB_BITS};

use num_bigint::BigUint;

/// Smallest supported digit width k in bits.
pub const MIN_DIGIT_BITS: u32 = 8;
/// Largest supported digit width k in bits (a digit is held in a `u128`).
pub const MAX_DIGIT_BITS: u32 = 128;

/// Errors of the hardware model: invalid configurations and inputs outside a block's contract.
///
/// Violations of internal invariants (a Montgomery operand ≥ 2N, say) are programming errors and
/// are caught by debug assertions instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HwError {
    /// A Montgomery modulus or an exact divisor must be odd and greater than 1.
    #[error("modulus must be odd and greater than 1")]
    InvalidModulus,
    /// The digit width is outside [`MIN_DIGIT_BITS`]..=[`MAX_DIGIT_BITS`].
    #[error("digit width {0} bits is outside {MIN_DIGIT_BITS}..={MAX_DIGIT_BITS}")]
    DigitBits(u32),
    /// The exponent does not fit in the fixed exponent length.
    #[error("exponent has {exponent_bits} bits but the schedule is fixed to {exp_bits} bits")]
    ExponentTooLong {
        /// Bit length of the offending exponent.
        exponent_bits: u64,
        /// The configured exponent length L.
        exp_bits: usize,
    },
    /// The schedule cannot be applied to this exponent length.
    #[error("invalid schedule: {0}")]
    InvalidSchedule(String),
    /// p and q do not form a key the datapath supports.
    #[error("invalid key: {0}")]
    InvalidKey(&'static str),
    /// A ciphertext must satisfy 0 < c < n².
    #[error("ciphertext outside 0 < c < n²")]
    CiphertextOutOfRange,
    /// The ciphertext is divisible by p or q: not a Paillier ciphertext, no defined plaintext.
    #[error("ciphertext shares a factor with n")]
    NotAUnit,
}

/// Checks a digit width against the supported range.
pub(crate) fn check_digit_bits(digit_bits: u32) -> Result<(), HwError> {
    if (MIN_DIGIT_BITS..=MAX_DIGIT_BITS).contains(&digit_bits) {
        Ok(())
    } else {
        Err(HwError::DigitBits(digit_bits))
    }
}

/// 2^k − 1 for a digit width k ≤ 128.
pub fn digit_mask(digit_bits: u32) -> u128 {
    if digit_bits >= 128 {
        u128::MAX
    } else {
        (1u128 << digit_bits) - 1
    }
}

/// The low 128 bits of `x`.
pub(crate) fn low_u128(x: &BigUint) -> u128 {
    let mut words = x.iter_u64_digits();
    let lo = words.next().unwrap_or(0) as u128;
    let hi = words.next().unwrap_or(0) as u128;
    lo | (hi << 64)
}

/// The `count` least significant k-bit digits of `x`, least significant first (higher digits of
/// `x`, if any, are ignored: a register of `count` digits holds only these).
pub fn to_digits(x: &BigUint, digit_bits: u32, count: usize) -> Vec<u128> {
    let words = x.to_u64_digits();
    let word = |j: usize| words.get(j).copied().unwrap_or(0) as u128;
    let mask = digit_mask(digit_bits);
    (0..count)
        .map(|i| {
            let offset = i * digit_bits as usize;
            let (w, sh) = (offset / 64, (offset % 64) as u32);
            // 128 − sh valid bits from two words; a third word supplies the rest when sh > 0.
            let mut v = (word(w) | (word(w + 1) << 64)) >> sh;
            if sh > 0 {
                v |= word(w + 2) << (128 - sh);
            }
            v & mask
        })
        .collect()
}

/// The value of k-bit digits, least significant first (the inverse of [`to_digits`]).
pub fn from_digits(digits: &[u128], digit_bits: u32) -> BigUint {
    digits.iter().rev().fold(BigUint::default(), |acc, &d| (acc << digit_bits) + d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::RandBigInt;
    use rand::{rngs::StdRng, SeedableRng};

    #[test]
    fn digits_round_trip_at_every_width() {
        let mut rng = StdRng::seed_from_u64(10);
        for k in MIN_DIGIT_BITS..=MAX_DIGIT_BITS {
            let x = rng.gen_biguint(700);
            let count = 700usize.div_ceil(k as usize);
            let d = to_digits(&x, k, count);
            assert!(d.iter().all(|&v| v <= digit_mask(k)));
            assert_eq!(from_digits(&d, k), x, "k = {k}");
        }
    }

    #[test]
    fn digit_width_is_checked() {
        assert_eq!(check_digit_bits(7), Err(HwError::DigitBits(7)));
        assert_eq!(check_digit_bits(129), Err(HwError::DigitBits(129)));
        assert!(check_digit_bits(8).is_ok() && check_digit_bits(128).is_ok());
    }
}
