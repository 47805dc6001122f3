//! Digit-serial Montgomery multiplication without final subtraction (Walter 1999).
//!
//! With R = 2^(k·s) > 4N, the loop below maps a, b < 2N to a result < 2N, so results feed straight
//! back as operands and no comparison ("judgment") is needed inside an exponentiation
//! (docs/background.md#montgomery-multiplication-without-a-final-subtraction). The loop consumes
//! one k-bit digit of `a` per step against the whole of `b`, which is what a digit-serial hardware
//! multiplier does; the per-step values are exposed as traces.
//!
//! The result is a function of the product a·b alone: T = (a·b + Q·N)/R where Q < R and
//! Q ≡ −a·b·N^(−1) (mod R) is unique. The intermediate steps depend on which operand is
//! digit-serial (`a`), so traces are bit-exact only with the same operand order.

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{One, Zero};

use super::{check_digit_bits, digit_mask, low_u128, to_digits, HwError};

/// Constants of a Montgomery multiplier for one odd modulus N and digit width k.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MontgomeryContext {
    modulus: BigUint,
    digit_bits: u32,
    digits: usize,
    n_prime: u128,
    r_mod_n: BigUint,
    r2_mod_n: BigUint,
    r3_mod_n: BigUint,
}

// The modulus may be p² (and the constants follow from it): wiped when dropped.
impl Drop for MontgomeryContext {
    fn drop(&mut self) {
        for x in [&mut self.modulus, &mut self.r_mod_n, &mut self.r2_mod_n, &mut self.r3_mod_n] {
            crate::key::wipe(x);
        }
        zeroize::Zeroize::zeroize(&mut self.n_prime);
    }
}

/// The state after one digit step of the Montgomery loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MontStep {
    /// Digit a_i of the digit-serial operand consumed by this step (0 in a wide REDC).
    pub a_digit: u128,
    /// Quotient digit q_i = (T mod 2^k)·N′ mod 2^k.
    pub q_digit: u128,
    /// T after the step: (T + a_i·b + q_i·N) / 2^k.
    pub t_after: BigUint,
}

/// Every step of one Montgomery multiplication (or wide REDC) and its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MontMulTrace {
    /// One entry per digit step, s in all.
    pub steps: Vec<MontStep>,
    /// The final T (equal to the last step's `t_after`).
    pub result: BigUint,
}

impl MontgomeryContext {
    /// Constants for modulus N and digit width k: s = the smallest number of digits with
    /// R = 2^(k·s) > 4N, N′ = −N^(−1) mod 2^k, and R, R², R³ mod N.
    ///
    /// Errors: N even or N ≤ 1; k outside 8..=128.
    pub fn new(modulus: &BigUint, digit_bits: u32) -> Result<Self, HwError> {
        check_digit_bits(digit_bits)?;
        // 2^m > 4N ⇔ m ≥ bits(4N) = bits(N) + 2.
        let digits = (modulus.bits() + 2).div_ceil(u64::from(digit_bits)) as usize;
        Self::with_digits(modulus, digit_bits, digits)
    }

    /// Constants for modulus N over a given number of digits s (a multiplier row of fixed width).
    /// Only R = 2^(k·s) > N is required: operands and results stay below 2N when R > 4N; with a
    /// smaller R the loop is still an exact REDC (as in [`super::ExactDivider`]).
    ///
    /// Errors: N even, N ≤ 1 or N ≥ R; k outside 8..=128.
    pub fn with_digits(modulus: &BigUint, digit_bits: u32, digits: usize) -> Result<Self, HwError> {
        check_digit_bits(digit_bits)?;
        if modulus.is_even() || modulus <= &BigUint::one() || modulus.bits() > (digits * digit_bits as usize) as u64 {
            return Err(HwError::InvalidModulus);
        }
        // Newton's iteration for N^(−1) mod 2^128: an odd N is its own inverse mod 8 (3 bits),
        // and each step doubles the correct bits: 3 → 6 → … → 192.
        let n0 = low_u128(modulus);
        let mut inv = n0;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u128.wrapping_sub(n0.wrapping_mul(inv)));
        }
        debug_assert_eq!(n0.wrapping_mul(inv), 1);
        let n_prime = inv.wrapping_neg() & digit_mask(digit_bits);
        let r = BigUint::one() << (digits * digit_bits as usize);
        let r_mod_n = &r % modulus;
        let r2_mod_n = (&r_mod_n * &r_mod_n) % modulus;
        let r3_mod_n = (&r2_mod_n * &r_mod_n) % modulus;
        Ok(Self { modulus: modulus.clone(), digit_bits, digits, n_prime, r_mod_n, r2_mod_n, r3_mod_n })
    }

    /// The modulus N.
    pub fn modulus(&self) -> &BigUint {
        &self.modulus
    }

    /// The digit width k in bits.
    pub fn digit_bits(&self) -> u32 {
        self.digit_bits
    }

    /// The number of digit steps s of one multiplication.
    pub fn digits(&self) -> usize {
        self.digits
    }

    /// log2 R = k·s.
    pub fn r_bits(&self) -> usize {
        self.digits * self.digit_bits as usize
    }

    /// N′ = −N^(−1) mod 2^k.
    pub fn n_prime(&self) -> u128 {
        self.n_prime
    }

    /// R mod N: the Montgomery form of 1.
    pub fn r_mod_n(&self) -> &BigUint {
        &self.r_mod_n
    }

    /// R² mod N: multiplicand that takes a value into the Montgomery domain.
    pub fn r2_mod_n(&self) -> &BigUint {
        &self.r2_mod_n
    }

    /// R³ mod N: multiplicand that follows a wide REDC to land in the Montgomery domain.
    pub fn r3_mod_n(&self) -> &BigUint {
        &self.r3_mod_n
    }

    /// a·b·R^(−1) mod N, as a representative in [0, 2N).
    ///
    /// Inputs must satisfy a, b < 2N (checked in debug builds).
    pub fn mont_mul(&self, a: &BigUint, b: &BigUint) -> BigUint {
        self.digit_loop(BigUint::zero(), Some((a, b)), None)
    }

    /// [`mont_mul`](Self::mont_mul) with every digit step recorded.
    pub fn mont_mul_trace(&self, a: &BigUint, b: &BigUint) -> MontMulTrace {
        let mut steps = Vec::with_capacity(self.digits);
        let result = self.digit_loop(BigUint::zero(), Some((a, b)), Some(&mut steps));
        MontMulTrace { steps, result }
    }

    /// c·R^(−1) mod N in [0, 2N) for a wide input c < R·N: the same s digit steps as
    /// [`mont_mul`](Self::mont_mul) with T starting at c and nothing multiplied in.
    ///
    /// Bound: the result is (c + Q·N)/R with Q < R, hence < (R·N + R·N)/R = 2N. The quotient digits
    /// do not depend on whether c is loaded whole or its low s digits are streamed in one per step
    /// (with the high part added at the end): only the low digit of T feeds q_i.
    pub fn redc_wide(&self, c: &BigUint) -> BigUint {
        self.digit_loop(c.clone(), None, None)
    }

    /// [`redc_wide`](Self::redc_wide) with every digit step recorded (`a_digit` is 0 throughout).
    pub fn redc_wide_trace(&self, c: &BigUint) -> MontMulTrace {
        let mut steps = Vec::with_capacity(self.digits);
        let result = self.digit_loop(c.clone(), None, Some(&mut steps));
        MontMulTrace { steps, result }
    }

    /// x·R mod N in [0, 2N) for x < 2N: `mont_mul(x, R² mod N)`.
    pub fn to_montgomery(&self, x: &BigUint) -> BigUint {
        self.mont_mul(x, &self.r2_mod_n)
    }

    /// x·R^(−1) mod N for x < 2N: `mont_mul(x, 1)`.
    ///
    /// The result is fully reduced, in [0, N), for every x except x = N (which maps to N):
    /// it is (x + Q·N)/R < (2N + R·N)/R = N + 2N/R < N + 1, so it is at most N, and it equals N
    /// only when x·R^(−1) ≡ 0 (mod N), i.e. x ∈ {0, N}; x = 0 maps to 0. A unit x is never ≡ 0,
    /// so leaving the domain needs no correction.
    pub fn from_montgomery(&self, x: &BigUint) -> BigUint {
        self.mont_mul(x, &BigUint::one())
    }

    /// c·R mod N in [0, 2N) for a wide c < R·N: `mont_mul(redc_wide(c), R³ mod N)`
    /// = c·R^(−1)·R³·R^(−1) = c·R.
    ///
    /// For N = p² and a Paillier ciphertext c < n² = p²·q² this holds because |p| = |q| gives
    /// q < 2p, so q² < 4p² = 4N < R and c < n² = N·q² < R·N (symmetrically for N = q²).
    pub fn ciphertext_to_montgomery(&self, c: &BigUint) -> BigUint {
        self.mont_mul(&self.redc_wide(c), &self.r3_mod_n)
    }

    /// The one digit loop behind every operation: s steps of
    /// `T += a_i·b; q_i = (T mod 2^k)·N′ mod 2^k; T = (T + q_i·N) >> k`, starting from `t`.
    /// Without operands it is a plain REDC of `t`.
    fn digit_loop(
        &self,
        mut t: BigUint,
        operands: Option<(&BigUint, &BigUint)>,
        mut trace: Option<&mut Vec<MontStep>>,
    ) -> BigUint {
        let two_n = &self.modulus << 1u32;
        let a_digits = operands.map(|(a, b)| {
            debug_assert!(a < &two_n && b < &two_n, "Montgomery operand ≥ 2N");
            to_digits(a, self.digit_bits, self.digits)
        });
        debug_assert!(operands.is_some() || t < (&self.modulus << self.r_bits()), "wide REDC input ≥ R·N");
        let mask = digit_mask(self.digit_bits);
        for i in 0..self.digits {
            let a_digit = a_digits.as_ref().map_or(0, |d| d[i]);
            if let Some((_, b)) = operands {
                if a_digit != 0 {
                    t += b * a_digit;
                }
            }
            let q_digit = (low_u128(&t) & mask).wrapping_mul(self.n_prime) & mask;
            if q_digit != 0 {
                t += &self.modulus * q_digit;
            }
            debug_assert_eq!(low_u128(&t) & mask, 0, "quotient digit failed to clear T mod 2^k");
            t >>= self.digit_bits;
            if let Some((_, b)) = operands {
                // Walter's invariant: T < b + N after every step.
                debug_assert!(t < b + &self.modulus);
            }
            if let Some(steps) = trace.as_deref_mut() {
                steps.push(MontStep { a_digit, q_digit, t_after: t.clone() });
            }
        }
        debug_assert!(t < two_n, "Montgomery result ≥ 2N");
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prime::{mod_inverse, random_odd, random_prime_pair};
    use num_bigint::RandBigInt;
    use proptest::prelude::*;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    const WIDTHS: [u32; 6] = [8, 17, 24, 64, 68, 128];

    /// Independent closed form: (a·b + Q·N)/R with Q = −a·b·N^(−1) mod R, Q < R.
    fn closed_form(ctx: &MontgomeryContext, ab: &BigUint) -> BigUint {
        let r = BigUint::one() << ctx.r_bits();
        let n_inv = mod_inverse(ctx.modulus(), &r).unwrap();
        let q = (&r - (ab * n_inv) % &r) % &r;
        let sum = ab + q * ctx.modulus();
        assert!((&sum % &r).is_zero());
        sum >> ctx.r_bits()
    }

    fn check_mul(ctx: &MontgomeryContext, a: &BigUint, b: &BigUint) {
        let n = ctx.modulus();
        let r = BigUint::one() << ctx.r_bits();
        let r_inv = mod_inverse(&(&r % n), n).unwrap();
        let got = ctx.mont_mul(a, b);
        assert!(got < n << 1u32, "result ≥ 2N");
        assert_eq!(&got % n, (a * b % n) * r_inv % n);
        assert_eq!(got, closed_form(ctx, &(a * b)));
    }

    #[test]
    fn constants() {
        let mut rng = StdRng::seed_from_u64(1);
        for k in WIDTHS {
            for bits in [2u64, 64, 127, 128, 129, 1024] {
                let n = random_odd(bits, &mut rng);
                let ctx = MontgomeryContext::new(&n, k).unwrap();
                let r = BigUint::one() << ctx.r_bits();
                assert!(r > &n << 2u32);
                assert!(BigUint::one() << (ctx.r_bits() - k as usize) <= &n << 2u32, "s minimal");
                let two_k = BigUint::one() << k;
                assert_eq!((&n * ctx.n_prime() + 1u32) % &two_k, BigUint::zero());
                assert!(ctx.n_prime() <= digit_mask(k));
                assert_eq!(ctx.r_mod_n(), &(&r % &n));
                assert_eq!(ctx.r2_mod_n(), &(&r * &r % &n));
                assert_eq!(ctx.r3_mod_n(), &(&r * &r * &r % &n));
            }
        }
    }

    #[test]
    fn rejects_bad_moduli_and_widths() {
        for n in [0u32, 1, 2, 100] {
            assert_eq!(MontgomeryContext::new(&BigUint::from(n), 17), Err(HwError::InvalidModulus));
        }
        assert_eq!(MontgomeryContext::new(&BigUint::from(7u32), 7), Err(HwError::DigitBits(7)));
        assert_eq!(MontgomeryContext::new(&BigUint::from(7u32), 129), Err(HwError::DigitBits(129)));
    }

    #[test]
    fn mont_mul_random_and_edge_operands() {
        let mut rng = StdRng::seed_from_u64(2);
        for k in WIDTHS {
            for bits in [64u64, 100, 256, 521, 1024] {
                let n = random_odd(bits, &mut rng);
                let ctx = MontgomeryContext::new(&n, k).unwrap();
                let two_n = &n << 1u32;
                let edges = [BigUint::zero(), BigUint::one(), &n - 1u32, n.clone(), &two_n - 1u32];
                for a in &edges {
                    for b in &edges {
                        check_mul(&ctx, a, b);
                    }
                }
                for _ in 0..8 {
                    let a = rng.gen_biguint_below(&two_n);
                    let b = rng.gen_biguint_below(&two_n);
                    check_mul(&ctx, &a, &b);
                }
            }
        }
    }

    #[test]
    fn trace_matches_mont_mul_and_replays() {
        let mut rng = StdRng::seed_from_u64(3);
        for k in WIDTHS {
            let n = random_odd(300, &mut rng);
            let ctx = MontgomeryContext::new(&n, k).unwrap();
            let a = rng.gen_biguint_below(&(&n << 1u32));
            let b = rng.gen_biguint_below(&(&n << 1u32));
            let trace = ctx.mont_mul_trace(&a, &b);
            assert_eq!(trace.steps.len(), ctx.digits());
            assert_eq!(trace.result, ctx.mont_mul(&a, &b));
            assert_eq!(trace.result, trace.steps.last().unwrap().t_after);
            // Replay from the recorded digits alone.
            let a_digits = to_digits(&a, k, ctx.digits());
            let mut t = BigUint::zero();
            for (i, step) in trace.steps.iter().enumerate() {
                assert_eq!(step.a_digit, a_digits[i]);
                assert!(step.q_digit <= digit_mask(k));
                t = (t + &b * step.a_digit + &n * step.q_digit) >> k;
                assert_eq!(t, step.t_after);
            }
        }
    }

    #[test]
    fn redc_wide_and_ciphertext_entry() {
        let mut rng = StdRng::seed_from_u64(4);
        for (half_bits, k) in [(32u64, 8u32), (32, 128), (64, 17), (128, 24), (256, 64), (256, 68)] {
            let (p, q) = random_prime_pair(half_bits, &mut rng);
            let n2 = (&p * &q) * (&p * &q);
            for prime in [&p, &q] {
                let m = prime * prime;
                let ctx = MontgomeryContext::new(&m, k).unwrap();
                let r = BigUint::one() << ctx.r_bits();
                assert!(n2 < &r * &m, "c < n² must imply c < R·p²");
                let r_inv = mod_inverse(&(&r % &m), &m).unwrap();
                let mut inputs = vec![BigUint::zero(), BigUint::one(), &n2 - 1u32, &r * &m - 1u32];
                inputs.extend((0..6).map(|_| rng.gen_biguint_below(&n2)));
                for c in &inputs {
                    let red = ctx.redc_wide(c);
                    assert!(red < &m << 1u32);
                    assert_eq!(&red % &m, c % &m * &r_inv % &m);
                    assert_eq!(red, closed_form(&ctx, c));
                    let trace = ctx.redc_wide_trace(c);
                    assert_eq!(trace.result, red);
                    assert_eq!(trace.steps.len(), ctx.digits());
                    assert!(trace.steps.iter().all(|s| s.a_digit == 0));
                    if c < &n2 {
                        let cm = ctx.ciphertext_to_montgomery(c);
                        assert!(cm < &m << 1u32);
                        assert_eq!(cm % &m, c * &r % &m);
                    }
                }
            }
        }
    }

    #[test]
    fn domain_round_trip_and_full_reduction_on_exit() {
        let mut rng = StdRng::seed_from_u64(5);
        for k in WIDTHS {
            for bits in [64u64, 200, 512] {
                let n = random_odd(bits, &mut rng);
                let ctx = MontgomeryContext::new(&n, k).unwrap();
                let two_n = &n << 1u32;
                let mut xs = vec![BigUint::zero(), BigUint::one(), &n - 1u32, &n + 1u32, &two_n - 1u32];
                xs.extend((0..10).map(|_| rng.gen_biguint_below(&two_n)));
                for x in &xs {
                    let xm = ctx.to_montgomery(x);
                    assert!(xm < two_n);
                    assert_eq!(ctx.from_montgomery(&xm), x % &n, "round trip is fully reduced");
                    let out = ctx.from_montgomery(x);
                    assert!(out < n, "from_montgomery({x}) = {out} not < N");
                }
                // The single exception: N itself leaves the domain as N.
                assert_eq!(ctx.from_montgomery(&n), n);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn mont_mul_property(seed in any::<u64>(), bits in 2u64..700, k in 8u32..=128) {
            let mut rng = StdRng::seed_from_u64(seed);
            let n = random_odd(bits, &mut rng);
            let ctx = MontgomeryContext::new(&n, k).unwrap();
            let two_n = &n << 1u32;
            let a = rng.gen_biguint_below(&two_n);
            let b = if rng.gen_bool(0.2) { two_n.clone() - 1u32 } else { rng.gen_biguint_below(&two_n) };
            check_mul(&ctx, &a, &b);
            let c = rng.gen_biguint_below(&(&n << ctx.r_bits()));
            prop_assert_eq!(ctx.redc_wide(&c), closed_form(&ctx, &c));
        }
    }
}
