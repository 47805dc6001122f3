//! Exact division L_p(x) = (x − 1)/p on the Montgomery multiplier
//! (docs/background.md#exact-division-by-p).
//!
//! The hardware has no divider and no low-half multiplier: it runs one more pass of its Montgomery
//! digit loop, with the modulus M = R − p and M′ = −M^(−1) = p^(−1) mod 2^k, on y = x − 1 and the
//! multiplicand 1. A REDC of y by M is (y + Q·M)/R with Q = −y·M^(−1) = y·p^(−1) mod R. When
//! p divides y and y/p < R, Q = y/p, and
//!
//!   (y + Q·(R − p))/R = (y − Q·p)/R + Q = Q = y/p.
//!
//! So the loop's result is the quotient itself, exactly: no estimation, no correction, and the
//! same datapath, constants loaded like any other modulus (M is odd because p is). The "− 1" is
//! applied as the multiplier digits of x are resolved (a borrow into the first digit).

use num_bigint::BigUint;
use num_traits::{One, Zero};

use super::{HwError, MontMulTrace, MontgomeryContext};

/// Constants of the exact division by one odd p on a multiplier of s digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExactDivider {
    divisor: BigUint,
    ctx: MontgomeryContext,
}

// The divisor is a prime of a key: wiped when dropped.
impl Drop for ExactDivider {
    fn drop(&mut self) {
        crate::key::wipe(&mut self.divisor);
    }
}

/// One exact division, every step recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExactDivTrace {
    /// y = x − 1.
    pub x_minus_1: BigUint,
    /// The Montgomery loop on (y, 1) modulo R − p; its result is y/p.
    pub mont: MontMulTrace,
    /// (x − 1)/p.
    pub result: BigUint,
}

impl ExactDivider {
    /// Constants for divisor p on a multiplier of `digits` digits of k bits: M = R − p,
    /// M′ = p^(−1) mod 2^k.
    ///
    /// Errors: p even, p ≤ 1 or p ≥ R/2; k outside 8..=128.
    pub fn new(divisor: &BigUint, digit_bits: u32, digits: usize) -> Result<Self, HwError> {
        super::check_digit_bits(digit_bits)?;
        let r = BigUint::one() << (digits * digit_bits as usize);
        if divisor <= &BigUint::one() || divisor >= &(&r >> 1u32) {
            return Err(HwError::InvalidModulus);
        }
        let ctx = MontgomeryContext::with_digits(&(&r - divisor), digit_bits, digits)?;
        Ok(Self { divisor: divisor.clone(), ctx })
    }

    /// The divisor p.
    pub fn divisor(&self) -> &BigUint {
        &self.divisor
    }

    /// The multiplier's constants for the modulus M = R − p.
    pub fn ctx(&self) -> &MontgomeryContext {
        &self.ctx
    }

    /// L_p(x) = (x − 1)/p.
    ///
    /// Valid when p | (x − 1) and x − 1 < 2M (checked in debug builds); otherwise the result is
    /// the REDC all the same, not a quotient.
    ///
    /// # Panics
    /// If x = 0.
    pub fn l(&self, x: &BigUint) -> BigUint {
        self.l_trace(x).result
    }

    /// [`l`](Self::l) with every step of the loop recorded.
    ///
    /// # Panics
    /// If x = 0.
    pub fn l_trace(&self, x: &BigUint) -> ExactDivTrace {
        assert!(!x.is_zero(), "L_p(0) is undefined");
        let y = x - 1u32;
        debug_assert!((&y % &self.divisor).is_zero(), "p does not divide x − 1");
        let mont = self.ctx.mont_mul_trace(&y, &BigUint::one());
        debug_assert_eq!(&mont.result * &self.divisor, y, "the REDC by R − p is not the quotient");
        ExactDivTrace { x_minus_1: y, result: mont.result.clone(), mont }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prime::random_prime;
    use num_bigint::RandBigInt;
    use proptest::prelude::*;
    use rand::{rngs::StdRng, SeedableRng};

    /// Digits of a multiplier for moduli of 2·|p| bits: R > 4p².
    fn digits_for(p: &BigUint, k: u32) -> usize {
        (2 * p.bits() + 2).div_ceil(u64::from(k)) as usize
    }

    fn check(div: &ExactDivider, quotient: &BigUint) {
        let x = quotient * div.divisor() + 1u32;
        let trace = div.l_trace(&x);
        assert_eq!(&trace.result, quotient);
        assert_eq!(trace.x_minus_1, &x - 1u32);
        assert_eq!(trace.mont.steps.len(), div.ctx().digits());
        assert_eq!(trace.mont.steps.last().unwrap().t_after, trace.result);
    }

    #[test]
    fn constants() {
        let mut rng = StdRng::seed_from_u64(30);
        for k in [8u32, 17, 24, 64, 68, 128] {
            for bits in [16u64, 33, 64, 256] {
                let p = random_prime(bits, &mut rng);
                let div = ExactDivider::new(&p, k, digits_for(&p, k)).unwrap();
                let r = BigUint::one() << div.ctx().r_bits();
                assert_eq!(div.ctx().modulus() + &p, r);
                // M′ = −M^(−1) = p^(−1) mod 2^k.
                let two_k = BigUint::one() << k;
                assert_eq!(&p * BigUint::from(div.ctx().n_prime()) % &two_k, BigUint::one());
            }
        }
        let eleven = BigUint::from(11u32);
        assert_eq!(ExactDivider::new(&BigUint::from(10u32), 17, 2), Err(HwError::InvalidModulus));
        assert_eq!(ExactDivider::new(&BigUint::from(1u32), 17, 2), Err(HwError::InvalidModulus));
        assert_eq!(ExactDivider::new(&eleven, 200, 2), Err(HwError::DigitBits(200)));
        assert_eq!(ExactDivider::new(&BigUint::from(1u32 << 16 | 1), 8, 2), Err(HwError::InvalidModulus));
    }

    #[test]
    fn divides_decryption_values() {
        let mut rng = StdRng::seed_from_u64(31);
        for k in [8u32, 17, 24, 64, 68, 128] {
            for bits in [16u64, 32, 100, 256] {
                let p = random_prime(bits, &mut rng);
                let div = ExactDivider::new(&p, k, digits_for(&p, k)).unwrap();
                let p2 = &p * &p;
                // x = c^(p−1) mod p² for random units c: x ≡ 1 (mod p), (x − 1)/p < p.
                for _ in 0..4 {
                    let c = rng.gen_biguint_below(&p2);
                    if (&c % &p).is_zero() {
                        continue;
                    }
                    let x = c.modpow(&(&p - 1u32), &p2);
                    assert_eq!(div.l(&x), (&x - 1u32) / &p);
                }
                for q in [BigUint::zero(), BigUint::one(), &p - 1u32] {
                    check(&div, &q);
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn exact_division_property(seed in any::<u64>(), bits in 2u64..600, k in 8u32..=128) {
            let mut rng = StdRng::seed_from_u64(seed);
            let mut p = rng.gen_biguint(bits);
            p.set_bit(bits - 1, true);
            p.set_bit(0, true);
            prop_assume!(p > BigUint::one());
            let div = ExactDivider::new(&p, k, digits_for(&p, k)).unwrap();
            let quotient = rng.gen_biguint_below(&p);
            check(&div, &quotient);
        }
    }
}
