//! Exact division L_p(x) = (x − 1)/p as a low-half multiplication (DESIGN.md §2).
//!
//! When p divides y = x − 1 and y/p < 2^k', then y/p = y·p^(−1) mod 2^k' (multiply both sides of
//! y = p·(y/p) by p^(−1) modulo 2^k'). So the division is one multiplication of which only the
//! low k' bits are kept: no quotient estimation, no remainder, no correction. k' is a whole number
//! of k-bit digits covering |p|, so y/p < p < 2^k' always holds for x − 1 < p² (the decryption
//! case: x = c^(p−1) mod p² ≡ 1 mod p).
//!
//! The model computes the product row by row, one digit of y per step, as a digit-serial
//! multiplier does; digit i of the result is final after step i.

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{One, Zero};

use super::{check_digit_bits, to_digits, HwError};
use crate::prime::mod_inverse;

/// Constants of the exact division by one odd p.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExactDivider {
    divisor: BigUint,
    digit_bits: u32,
    digits: usize,
    inverse: BigUint,
}

/// One row of the low-half product.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExactDivStep {
    /// Digit i of y = x − 1.
    pub y_digit: u128,
    /// Partial product after the row: Σ_{j ≤ i} y_j·p^(−1)·2^(j·k) mod 2^k'.
    pub partial: BigUint,
}

/// Every row of one exact division and its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExactDivTrace {
    /// y = x − 1.
    pub x_minus_1: BigUint,
    /// One entry per digit of the low half.
    pub steps: Vec<ExactDivStep>,
    /// (x − 1)/p = y·p^(−1) mod 2^k'.
    pub result: BigUint,
}

impl ExactDivider {
    /// Constants for divisor p and digit width k: k' = ⌈|p|/k⌉·k and p^(−1) mod 2^k'.
    ///
    /// Errors: p even or p ≤ 1; k outside 8..=128.
    pub fn new(divisor: &BigUint, digit_bits: u32) -> Result<Self, HwError> {
        check_digit_bits(digit_bits)?;
        if divisor.is_even() || divisor <= &BigUint::one() {
            return Err(HwError::InvalidModulus);
        }
        let digits = divisor.bits().div_ceil(u64::from(digit_bits)) as usize;
        let two_k = BigUint::one() << (digits * digit_bits as usize);
        let inverse = mod_inverse(divisor, &two_k).expect("an odd number is invertible mod 2^k'");
        Ok(Self { divisor: divisor.clone(), digit_bits, digits, inverse })
    }

    /// The divisor p.
    pub fn divisor(&self) -> &BigUint {
        &self.divisor
    }

    /// The digit width k in bits.
    pub fn digit_bits(&self) -> u32 {
        self.digit_bits
    }

    /// Digits of the low half: ⌈|p|/k⌉.
    pub fn digits(&self) -> usize {
        self.digits
    }

    /// k' = digits·k, the width of the low half in bits.
    pub fn low_bits(&self) -> usize {
        self.digits * self.digit_bits as usize
    }

    /// p^(−1) mod 2^k'.
    pub fn inverse(&self) -> &BigUint {
        &self.inverse
    }

    /// L_p(x) = (x − 1)/p = ((x − 1)·p^(−1)) mod 2^k'.
    ///
    /// Valid when p | (x − 1) and (x − 1)/p < 2^k' (checked in debug builds); otherwise the
    /// result is the low-half product all the same, not a quotient.
    ///
    /// # Panics
    /// If x = 0.
    pub fn l(&self, x: &BigUint) -> BigUint {
        self.rows(x, None).1
    }

    /// [`l`](Self::l) with every row of the low-half product recorded.
    ///
    /// # Panics
    /// If x = 0.
    pub fn l_trace(&self, x: &BigUint) -> ExactDivTrace {
        let mut steps = Vec::with_capacity(self.digits);
        let (x_minus_1, result) = self.rows(x, Some(&mut steps));
        ExactDivTrace { x_minus_1, steps, result }
    }

    /// The row loop shared by [`l`](Self::l) and [`l_trace`](Self::l_trace): returns (x − 1, L).
    fn rows(&self, x: &BigUint, mut trace: Option<&mut Vec<ExactDivStep>>) -> (BigUint, BigUint) {
        assert!(!x.is_zero(), "L_p(0) is undefined");
        let y = x - 1u32;
        debug_assert!((&y % &self.divisor).is_zero(), "p does not divide x − 1");
        let low_bits = self.low_bits();
        let k = self.digit_bits as usize;
        // Only the low k' bits of y reach the low half of the product.
        let y_digits = to_digits(&y, self.digit_bits, self.digits);
        let mask = low_mask(low_bits);
        let mut partial = BigUint::zero();
        for (i, &y_digit) in y_digits.iter().enumerate() {
            // Row i needs only the low k' − i·k bits of p^(−1).
            let row = ((&self.inverse & low_mask(low_bits - i * k)) * y_digit) << (i * k);
            partial = (partial + row) & &mask;
            if let Some(steps) = trace.as_deref_mut() {
                steps.push(ExactDivStep { y_digit, partial: partial.clone() });
            }
        }
        debug_assert_eq!(&partial * &self.divisor, y, "(x − 1)/p does not fit in k' bits");
        (y, partial)
    }
}

/// 2^bits − 1.
fn low_mask(bits: usize) -> BigUint {
    (BigUint::one() << bits) - 1u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prime::random_prime;
    use num_bigint::RandBigInt;
    use proptest::prelude::*;
    use rand::{rngs::StdRng, SeedableRng};

    fn check(div: &ExactDivider, quotient: &BigUint) {
        let x = quotient * div.divisor() + 1u32;
        let trace = div.l_trace(&x);
        assert_eq!(&trace.result, quotient);
        assert_eq!(div.l(&x), trace.result);
        assert_eq!(trace.x_minus_1, &x - 1u32);
        assert_eq!(trace.steps.len(), div.digits());
        assert_eq!(trace.steps.last().unwrap().partial, trace.result);
        // Digit i of the result is final after row i.
        let k = div.digit_bits();
        let final_digits = to_digits(&trace.result, k, div.digits());
        for (i, step) in trace.steps.iter().enumerate() {
            assert_eq!(to_digits(&step.partial, k, i + 1), final_digits[..=i]);
        }
    }

    #[test]
    fn constants() {
        let mut rng = StdRng::seed_from_u64(30);
        for k in [8u32, 17, 24, 64, 68, 128] {
            for bits in [16u64, 33, 64, 256] {
                let p = random_prime(bits, &mut rng);
                let div = ExactDivider::new(&p, k).unwrap();
                assert!(div.low_bits() as u64 >= bits && (div.low_bits() as u64) < bits + u64::from(k));
                assert_eq!(div.low_bits() % k as usize, 0);
                let two_k = BigUint::one() << div.low_bits();
                assert_eq!(&p * div.inverse() % &two_k, BigUint::one());
            }
        }
        assert_eq!(ExactDivider::new(&BigUint::from(10u32), 17), Err(HwError::InvalidModulus));
        assert_eq!(ExactDivider::new(&BigUint::from(1u32), 17), Err(HwError::InvalidModulus));
        assert_eq!(ExactDivider::new(&BigUint::from(11u32), 200), Err(HwError::DigitBits(200)));
    }

    #[test]
    fn divides_decryption_values() {
        let mut rng = StdRng::seed_from_u64(31);
        for k in [8u32, 17, 24, 64, 68, 128] {
            for bits in [16u64, 32, 100, 256] {
                let p = random_prime(bits, &mut rng);
                let div = ExactDivider::new(&p, k).unwrap();
                let p2 = &p * &p;
                // x = c^(p−1) mod p² for random units c: x ≡ 1 (mod p), (x − 1)/p < p.
                for _ in 0..4 {
                    let c = rng.gen_biguint_below(&p2);
                    if (&c % &p).is_zero() {
                        continue;
                    }
                    let x = c.modpow(&(&p - 1u32), &p2);
                    let want = (&x - 1u32) / &p;
                    assert_eq!(div.l(&x), want);
                }
                for q in [BigUint::zero(), BigUint::one(), &p - 1u32, (BigUint::one() << div.low_bits()) - 1u32] {
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
            let div = ExactDivider::new(&p, k).unwrap();
            let quotient = rng.gen_biguint(div.low_bits() as u64);
            check(&div, &quotient);
        }
    }
}
