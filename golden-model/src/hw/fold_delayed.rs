//! The folding multiplication with its quotient delayed by d steps: the algorithm of a
//! multiplier whose loop is shorter than the pipeline of its reduction products (`ecrt-hdl`'s
//! delayed-quotient multiplier, compared with [`DelayedFoldContext::mul_trace`] step by step).
//!
//! In the folding step ([`super::fold`]) T's low limbs are the quotient and T_low·M̂ lands in
//! every column of the new T, its low ones too: the next quotient waits for the products of this
//! one, so the loop holds the whole product pipeline (the deep loop's turn of k + 3 cycles). Scaling
//! the modulus d·r bits further (Orup, ARITH 1995, the same scaled modulus taken over d + 1 digits)
//! lifts the products above the next d quotients:
//!
//! ```text
//! Ñ = N′·N with N′ = −N^(−1) mod 2^(r(d+1)), so Ñ ≡ −1 (mod 2^(r(d+1))),
//! H = (Ñ + 1)/2^(r(d+1)) = 2^(−r(d+1)) mod N,
//! step i:  T ← T_high + A_i·B + Q_(i−d)·H
//! ```
//!
//! where Q_i is the low k limbs of T at step i (Q_j = 0 for j ≤ 0). A quotient's products are
//! needed d steps after it is known, so a loop of one addition and one redistribution can run a
//! step a turn while they go through registered DSPs and a cascade.
//!
//! Why it holds: with the products still pending added back,
//! V_i = T_i + Σ_(j=i−d)^(i−1) Q_j·H·2^(r(j+d+1−i)) follows the undelayed recurrence
//! V_(i+1) = (V_i + Q_i·Ñ)/2^r + A_i·B, and Q_i ≡ V_i (mod 2^r). The result is V_n after the n
//! steps that take A's digits: d more steps (the drain) take A = 0, land the pending products,
//! and keep each step's low limbs L_i (no longer a quotient) instead of dropping them, so that
//! V_n = T·2^(rd) + Σ_(e<d) L_(n+e)·2^(re) ≡ A·B·2^(−r(n−1)) (mod N).
//!
//! The loop: a step's products do not depend on T, so their column sums (the fold's, with Q's
//! limbs in place of T's low ones and no T) are redistributed into limbs y_j < 2^18 + 2^7 ahead of
//! it, and the loop only adds T's high limbs in two short stages:
//!
//! ```text
//! s_j = y_j + t_(j+k)                    (< 2^18 + 2^17 + 2^7 + 3)
//! t′_j = lo17(s_j) + (s_(j−1) >> 17)     (< 2^17 + 3)
//! ```
//!
//! so T's limbs are normalized after every step and the result is the drain's low limbs and T's,
//! as they are. The quotient is taken from the first stage: Q_(i+1) = Σ_(j<k) s_j·2^(17j), each
//! limb as stage A sums it, and T's limb k then takes no carry from s_(k−1) (it is in Q), so
//! Q_(i+1) + 2^r·T_(i+1)'s limbs from k up is T_(i+1)'s value: a quotient is known a stage
//! earlier than from T's limbs, which makes the hardware's quotient path a turn shorter. Steps
//! whose next step takes no quotient (the last of A's digits and the drain) pass every carry up.
//!
//! Range, as for the undelayed fold with Ñ < 2^(r(d+1))·N: Q_i < 3.01·2^r (its limbs are below
//! 1.5·2^18), so Q_i·Ñ/2^r < 3.01·2^(r(d+1))·N and operands below X = 2^(r(d+1)+3)·N give a result
//! below X/2 + 0.38·X when R = 2^(r(n−1)) ≥ 2X: operands have d·k limbs more than the undelayed
//! fold's, and n = ⌈(|N| + 4)/r⌉ + 2 + d. T stays below 2^(r+1)·X. With d = 0 it has the folding
//! multiplication's constants and steps (T normalized takes other quotients: the products agree
//! modulo N).

use num_bigint::BigUint;

use super::exponent::DomainMultiplier;
use super::fold::{
    column_sums, fold_domain_multiplier, redistribute, scaled_inverse, FoldMultiplier, FoldValue, MAX_LIMBS_PER_STEP,
};
use super::fold_classic::ClassicShape;
use super::wide::{Multiplicand, LIMB_BITS};
use super::{to_digits, HwError, MontgomeryContext};

/// The largest quotient delay modelled, in steps.
pub const MAX_QUOTIENT_DELAY: usize = 16;

/// The sizes of a delayed-quotient folding multiplier for moduli of up to `modulus_bits` bits
/// (|N| below), k limbs per step and a quotient delay of d steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct DelayedShape {
    /// k: limbs of the multiplier consumed per step.
    pub limbs_per_step: usize,
    /// d: steps between a quotient and its products' landing.
    pub quotient_delay: usize,
    /// n = ⌈(|N| + 4)/(17k)⌉ + 2 + d: steps that take A's digits (then d drain steps).
    pub steps: usize,
    /// ⌈(|N| + 17k·(d + 1) + 3)/17⌉: limbs of an operand or a result (X = 2^(17k(d+1)+3)·N).
    pub operand_limbs: usize,
    /// ⌈|N|/17⌉: limbs of N and of H.
    pub modulus_limbs: usize,
    /// ⌈(|N| + 17k·(d + 2) + 4)/17⌉: limbs of T (T < 2^(17k+1)·X).
    pub columns: usize,
}

impl DelayedShape {
    /// The sizes for `modulus_bits`-bit moduli, k limbs per step and a delay of d steps.
    ///
    /// Errors: k outside 1..=16, d over [`MAX_QUOTIENT_DELAY`], or no modulus bits.
    pub fn new(modulus_bits: usize, limbs_per_step: usize, quotient_delay: usize) -> Result<Self, HwError> {
        if !(1..=MAX_LIMBS_PER_STEP).contains(&limbs_per_step) {
            return Err(HwError::InvalidSchedule(format!(
                "{limbs_per_step} limbs per step (need 1..={MAX_LIMBS_PER_STEP})"
            )));
        }
        if quotient_delay > MAX_QUOTIENT_DELAY {
            return Err(HwError::InvalidSchedule(format!(
                "a quotient delay of {quotient_delay} steps (at most {MAX_QUOTIENT_DELAY})"
            )));
        }
        if modulus_bits < 2 {
            return Err(HwError::InvalidModulus);
        }
        let limb = LIMB_BITS as usize;
        let r = limb * limbs_per_step;
        Ok(Self {
            limbs_per_step,
            quotient_delay,
            steps: (modulus_bits + 4).div_ceil(r) + 2 + quotient_delay,
            operand_limbs: (modulus_bits + r * (quotient_delay + 1) + 3).div_ceil(limb),
            modulus_limbs: modulus_bits.div_ceil(limb),
            columns: (modulus_bits + r * (quotient_delay + 2) + 4).div_ceil(limb),
        })
    }

    /// Steps of a multiplication: n with A's digits, then d that drain the pending products.
    pub fn total_steps(&self) -> usize {
        self.steps + self.quotient_delay
    }

    /// Digits of a classic pass with the same R = 2^(17k·(n−1)): k·(n − 1).
    pub fn classic_digits(&self) -> usize {
        self.limbs_per_step * (self.steps - 1)
    }
}

/// One step of a delayed-quotient multiplication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelayedStep {
    /// The k digits of the multiplier the step consumed (0 in the drain).
    pub a_digits: Vec<u64>,
    /// The quotient whose products landed in this step: the one taken d steps before (0 in the
    /// first d steps).
    pub quotient: Vec<u64>,
    /// The quotient this step took, Q_i: the previous step's low stage-A sums (0 in the first
    /// step and the drain).
    pub taken: Vec<u64>,
    /// T's normalized limbs after the step (`columns` of them, each < 2^17 + 3), limb k without
    /// the carry of s_(k−1) when the next step takes a quotient.
    pub t: Vec<u64>,
}

/// Every step of one delayed-quotient multiplication and its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelayedTrace {
    /// n + d entries: the steps with A's digits, then the drain.
    pub steps: Vec<DelayedStep>,
    /// The result in normalized limbs.
    pub result: FoldValue,
}

/// The constants of a delayed-quotient folding multiplier for one odd modulus N.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelayedFoldContext {
    modulus: BigUint,
    shape: DelayedShape,
    h: Vec<u64>,
    bound: BigUint,
    classic: MontgomeryContext,
    multiplicand: Multiplicand,
}

// The modulus may be p² (and the constants follow from it): wiped when dropped.
impl Drop for DelayedFoldContext {
    fn drop(&mut self) {
        crate::key::wipe(&mut self.modulus);
        crate::key::wipe(&mut self.bound);
        zeroize::Zeroize::zeroize(&mut self.h);
    }
}

impl DelayedFoldContext {
    /// Constants for modulus N, k limbs per step and a quotient delay of d steps, sized for every
    /// modulus of up to `width_bits` bits: H = 2^(−17k(d+1)) mod N, X = 2^(17k(d+1)+3)·N, and the
    /// classic multiplier with the same R = 2^(17k·(n−1)).
    ///
    /// Errors: N even, N ≤ 1 or wider than `width_bits`; k or d out of range.
    pub fn new(
        modulus: &BigUint,
        width_bits: usize,
        limbs_per_step: usize,
        quotient_delay: usize,
    ) -> Result<Self, HwError> {
        if modulus.bits() as usize > width_bits {
            return Err(HwError::InvalidModulus);
        }
        let shape = DelayedShape::new(width_bits, limbs_per_step, quotient_delay)?;
        let scale = LIMB_BITS as usize * limbs_per_step * (quotient_delay + 1);
        let classic = MontgomeryContext::with_digits(modulus, LIMB_BITS, shape.classic_digits())?;
        let h = scaled_inverse(modulus, scale).ok_or(HwError::InvalidModulus)?;
        let h = to_digits(&h, LIMB_BITS, shape.modulus_limbs).into_iter().map(|d| d as u64).collect();
        Ok(Self {
            modulus: modulus.clone(),
            shape,
            h,
            bound: modulus << (scale + 3),
            classic,
            multiplicand: Multiplicand::default(),
        })
    }

    /// The same multiplier with B held as `multiplicand` for its a·b products.
    pub fn with_multiplicand(mut self, multiplicand: Multiplicand) -> Self {
        self.multiplicand = multiplicand;
        self
    }

    /// The modulus N.
    pub fn modulus(&self) -> &BigUint {
        &self.modulus
    }

    /// The multiplier's sizes.
    pub fn shape(&self) -> &DelayedShape {
        &self.shape
    }

    /// The exact limbs of H = 2^(−17k(d+1)) mod N (as many as N has).
    pub fn h(&self) -> &[u64] {
        &self.h
    }

    /// X = 2^(17k(d+1)+3)·N: every operand and result is below it.
    pub fn bound(&self) -> &BigUint {
        &self.bound
    }

    /// The classic multiplication with the same R, as values: the way into and out of the domain.
    pub fn classic(&self) -> &MontgomeryContext {
        &self.classic
    }

    /// x < X in exact limbs.
    pub fn exact(&self, x: &BigUint) -> FoldValue {
        debug_assert!(x < &self.bound, "value ≥ X");
        FoldValue::from_limbs(to_digits(x, LIMB_BITS, self.shape.operand_limbs).into_iter().map(|d| d as u64).collect())
    }

    /// a·b·R^(−1) mod N, a representative below X, in normalized limbs.
    pub fn mul(&self, a: &FoldValue, b: &FoldValue) -> FoldValue {
        self.run(a, b, None)
    }

    /// [`mul`](Self::mul) with every step recorded.
    pub fn mul_trace(&self, a: &FoldValue, b: &FoldValue) -> DelayedTrace {
        let mut steps = Vec::with_capacity(self.shape.total_steps());
        let result = self.run(a, b, Some(&mut steps));
        DelayedTrace { steps, result }
    }

    fn run(&self, a: &FoldValue, b: &FoldValue, mut trace: Option<&mut Vec<DelayedStep>>) -> FoldValue {
        let DelayedShape { limbs_per_step: k, quotient_delay: d, steps: n, operand_limbs, columns, .. } = self.shape;
        debug_assert!(a.value() < self.bound && b.value() < self.bound, "operand ≥ X");
        let digits: Vec<u64> = to_digits(&a.value(), LIMB_BITS, k * n).into_iter().map(|x| x as u64).collect();
        let b_windows = self.multiplicand.windows(b.limbs(), operand_limbs);
        let zero = vec![0u64; k];
        // Quotients in flight, oldest first: the ones taken at the last d steps.
        let mut pending: std::collections::VecDeque<Vec<u64>> = (0..d).map(|_| zero.clone()).collect();
        // The drain's low limbs, kept below T's.
        let mut kept: Vec<u64> = Vec::with_capacity(d * k);
        let mut t = vec![0u64; columns];
        let mut next_quotient = zero.clone();
        let no_t = vec![0u64; columns];
        for i in 0..n + d {
            let taken = if i < n { std::mem::take(&mut next_quotient) } else { zero.clone() };
            let quotient = if i < n {
                pending.push_back(taken.clone());
                pending.pop_front().expect("d + 1 quotients in flight")
            } else {
                kept.extend_from_slice(&t[..k]);
                pending.pop_front().expect("a pending quotient per drain step")
            };
            let a_digits = if i < n { &digits[i * k..(i + 1) * k] } else { &zero[..] };
            let products = column_sums(&no_t, &quotient, &self.h, a_digits, b.limbs(), b_windows.as_deref());
            let s = stage_a(&t, &redistribute(&products), k);
            let quotient_next = i + 1 < n;
            if quotient_next {
                next_quotient = s[..k].to_vec();
            }
            t = stage_b(&s, quotient_next.then_some(k));
            if let Some(steps) = trace.as_deref_mut() {
                steps.push(DelayedStep { a_digits: a_digits.to_vec(), quotient, taken, t: t.clone() });
            }
        }
        // V_n = T·2^(rd) + the drain's low limbs: below X, so its limbs past the operand's are 0.
        let mut limbs: Vec<u64> = kept.into_iter().chain(t).collect();
        debug_assert!(limbs[operand_limbs..].iter().all(|&l| l == 0), "result ≥ 2^(17·operand limbs)");
        limbs.truncate(operand_limbs);
        FoldValue::from_limbs(limbs)
    }
}

/// The loop's two stages: T's limbs from `shift` up (its high limbs: k in a step) added to a
/// turn's redistributed products y, each sum s_j = y_j + t_(j+shift) split into its low 17 bits
/// and its carry into the next limb: t′_j = lo17(s_j) + (s_(j−1) >> 17) < 2^17 + 3.
pub(super) fn loop_step(t: &[u64], y: &[u64], shift: usize) -> Vec<u64> {
    stage_b(&stage_a(t, y, shift), None)
}

/// Stage A: s_j = y_j + t_(j+shift) (< 2^19).
fn stage_a(t: &[u64], y: &[u64], shift: usize) -> Vec<u64> {
    let s: Vec<u64> = (0..y.len()).map(|j| y[j] + t.get(j + shift).copied().unwrap_or(0)).collect();
    debug_assert!(s.iter().all(|&x| x < 1 << 19) && s[s.len() - 1] >> LIMB_BITS == 0, "T overflows");
    s
}

/// Stage B: t′_j = lo17(s_j) + (s_(j−1) >> 17), but for limb `split` (the first above a quotient
/// taken from the sums), which keeps lo17(s_j) alone.
fn stage_b(s: &[u64], split: Option<usize>) -> Vec<u64> {
    const LOW: u64 = (1 << LIMB_BITS) - 1;
    (0..s.len()).map(|j| (s[j] & LOW) + if j >= 1 && Some(j) != split { s[j - 1] >> LIMB_BITS } else { 0 }).collect()
}

fold_domain_multiplier!(DelayedFoldContext);

impl FoldMultiplier for DelayedFoldContext {
    fn classic_shape(&self) -> ClassicShape {
        ClassicShape::from(self.shape())
    }
    fn m_hat_limbs(&self) -> &[u64] {
        self.h()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::fold::{check_edge_operands, check_product, limbs_value, FoldContext};
    use crate::hw::{exp_in_domain, Schedule};
    use crate::prime::random_odd;
    use num_bigint::RandBigInt;
    use num_traits::{One, Zero};
    use proptest::prelude::*;
    use rand::{rngs::StdRng, SeedableRng};

    const MULTIPLICANDS: [Multiplicand; 2] = [Multiplicand::Limbs, Multiplicand::Windows];

    fn context(n: &BigUint, k: usize, d: usize, multiplicand: Multiplicand) -> DelayedFoldContext {
        DelayedFoldContext::new(n, n.bits() as usize, k, d).unwrap().with_multiplicand(multiplicand)
    }

    fn check(ctx: &DelayedFoldContext, a: &FoldValue, b: &FoldValue) -> FoldValue {
        check_product(ctx.modulus(), ctx.bound(), ctx.shape().classic_digits(), a, b, ctx.mul(a, b))
    }

    #[test]
    fn without_delay_it_has_the_folding_multiplications_constants() {
        let mut rng = StdRng::seed_from_u64(1);
        for (k, multiplicand) in [1usize, 3, 4, 8].into_iter().flat_map(|k| MULTIPLICANDS.map(|m| (k, m))) {
            let n = random_odd(500, &mut rng);
            let fold = FoldContext::new(&n, k).unwrap().with_multiplicand(multiplicand);
            let delayed = context(&n, k, 0, multiplicand);
            assert_eq!(delayed.h(), fold.m_hat());
            assert_eq!(delayed.bound(), fold.bound());
            let a = fold.exact(&rng.gen_biguint_below(fold.bound()));
            let b = fold.mul(&a, &fold.exact(&rng.gen_biguint_below(fold.bound())));
            // T kept normalized takes other quotients: the products agree modulo N.
            let trace = delayed.mul_trace(&a, &b);
            assert_eq!(trace.steps.len(), fold.steps());
            let digits = delayed.shape().classic_digits();
            let t = check_product(&n, delayed.bound(), digits, &a, &b, trace.result);
            assert_eq!(fold.mul(&a, &b).value() % &n, t.value() % &n, "k = {k}");
        }
    }

    #[test]
    fn sizes_for_a_2048_bit_modulus() {
        // (k, d, steps, operand limbs, columns): d·k limbs more, d steps more.
        for (k, d, steps, operands, columns) in [(3, 0, 43, 124, 127), (3, 3, 46, 133, 136), (3, 6, 49, 142, 145)] {
            let shape = DelayedShape::new(2048, k, d).unwrap();
            assert_eq!((shape.steps, shape.operand_limbs, shape.columns), (steps, operands, columns), "k {k} d {d}");
            assert_eq!(shape.total_steps(), steps + d);
        }
    }

    #[test]
    fn h_is_the_inverse_of_two_to_the_scaled_r() {
        let mut rng = StdRng::seed_from_u64(2);
        for (k, d) in [(1, 0), (1, 5), (3, 3), (8, 2), (16, 1)] {
            let n = random_odd(300, &mut rng);
            let ctx = context(&n, k, d, Multiplicand::Windows);
            let h = limbs_value(ctx.h());
            assert!(h < n);
            assert!((h << (17 * k * (d + 1))) % &n == BigUint::one());
        }
    }

    #[test]
    fn rejects_bad_parameters() {
        let n = BigUint::from(1_000_003u32);
        assert!(DelayedFoldContext::new(&n, 20, 0, 1).is_err());
        assert!(DelayedFoldContext::new(&n, 20, 3, MAX_QUOTIENT_DELAY + 1).is_err());
        assert!(DelayedFoldContext::new(&n, 19, 3, 1).is_err(), "N wider than the width");
        assert_eq!(DelayedFoldContext::new(&BigUint::from(100u32), 8, 2, 1), Err(HwError::InvalidModulus));
    }

    #[test]
    fn edge_operands_stay_in_range() {
        let mut rng = StdRng::seed_from_u64(3);
        for (k, d) in [(1, 1), (1, 4), (2, 3), (3, 3), (3, 6), (4, 4), (8, 2), (16, 1)] {
            for multiplicand in MULTIPLICANDS {
                for bits in [2u64, 17, 100, 521] {
                    let n = random_odd(bits, &mut rng);
                    let ctx = context(&n, k, d, multiplicand);
                    check_edge_operands(&n, ctx.bound(), |x| ctx.exact(x), |a, b| check(&ctx, a, b));
                }
            }
        }
    }

    #[test]
    fn steps_follow_the_undelayed_recurrence_with_the_pending_products() {
        let mut rng = StdRng::seed_from_u64(4);
        for (k, d) in [(1, 3), (3, 3), (4, 2)] {
            let n = random_odd(400, &mut rng);
            let ctx = context(&n, k, d, Multiplicand::Windows);
            let r = LIMB_BITS as usize * k;
            let scaled = (limbs_value(ctx.h()) << (r * (d + 1))) - 1u32; // Ñ
            let a = ctx.exact(&rng.gen_biguint_below(ctx.bound()));
            let b = ctx.exact(&rng.gen_biguint_below(ctx.bound()));
            let trace = ctx.mul_trace(&a, &b);
            let h = limbs_value(ctx.h());
            let steps = ctx.shape().steps;
            assert_eq!(trace.steps.len(), steps + d);
            // V_(i+1) = (V_i + Q_i·Ñ)/2^r + A_i·B over the steps with A's digits.
            let mut v = BigUint::zero();
            for i in 0..steps {
                let step = &trace.steps[i];
                assert_eq!(step.quotient, if i >= d { trace.steps[i - d].taken.clone() } else { vec![0; k] });
                let folded = &v + limbs_value(&step.taken) * &scaled;
                assert!((&folded % (BigUint::one() << r)).is_zero(), "step {i}: Q_i ≢ V_i (mod 2^r)");
                v = (folded >> r) + limbs_value(&step.a_digits) * b.value();
                // T's value: the next quotient below its limbs from k up, or all of its limbs.
                let t = match trace.steps.get(i + 1).filter(|_| i + 1 < steps) {
                    Some(next) => limbs_value(&next.taken) + (limbs_value(&step.t[k..]) << r),
                    None => limbs_value(&step.t),
                };
                assert_eq!(t + pending_value(&trace.steps, &h, k, d, i + 1), v, "step {i}");
            }
            assert_eq!(trace.result.value(), v, "the result is V_n");
        }
    }

    /// What the products still in flight after step i − 1 add to T (V_i − T_i in the module docs).
    fn pending_value(trace: &[DelayedStep], h: &BigUint, k: usize, d: usize, i: usize) -> BigUint {
        // Quotients taken at steps i−d … i−1 whose products land at steps i … i+d−1.
        let r = LIMB_BITS as usize * k;
        (i.saturating_sub(d)..i).map(|j| (limbs_value(&trace[j].taken) * h) << (r * (j + d + 1 - i))).sum()
    }

    #[test]
    fn exponentiation_in_the_domain() {
        let mut rng = StdRng::seed_from_u64(5);
        let n = random_odd(512, &mut rng);
        let ctx = context(&n, 3, 3, Multiplicand::Windows);
        let base = rng.gen_biguint_below(&n);
        let exponent = rng.gen_biguint(300);
        let base_in = ctx.mul(&ctx.exact(&base), &ctx.exact(ctx.classic().r2_mod_n()));
        let power = exp_in_domain(&ctx, &base_in, &exponent, 300, Schedule::FixedWindow { window_bits: 5 }).unwrap();
        let out = ctx.classic().redc_wide(&power.result.value());
        assert!(out <= n);
        assert_eq!(out % &n, base.modpow(&exponent, &n));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn delayed_mul_property(
            seed in any::<u64>(),
            bits in 2u64..600,
            k in 1usize..=MAX_LIMBS_PER_STEP,
            d in 0usize..=8,
            wide in any::<bool>(),
        ) {
            let mut rng = StdRng::seed_from_u64(seed);
            let n = random_odd(bits, &mut rng);
            let ctx = context(&n, k, d, MULTIPLICANDS[usize::from(wide)]);
            let a = ctx.exact(&rng.gen_biguint_below(ctx.bound()));
            let b = ctx.exact(&rng.gen_biguint_below(ctx.bound()));
            let ab = check(&ctx, &a, &b);
            check(&ctx, &ab, &ab);
        }
    }
}
