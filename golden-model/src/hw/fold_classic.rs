//! The folding multiplier's classic mode: a digit-serial Montgomery pass with an exact quotient,
//! on the multiplier's first row of DSPs, for the few operations that need one (the wide REDC
//! of the ciphertext, the way out of the domain, the exact division, the final multiplication
//! mod n; see [`super::FoldEcrtKey`]). It computes what [`MontgomeryContext`] computes, value
//! for value; this module models the limbs the hardware holds at every step.
//!
//! A step consumes one 17-bit digit d of A:
//!
//! ```text
//! q ← (t_0 + d·b_0)·N′ mod 2^17
//! T ← (T + d·B + q·N) / 2^17
//! ```
//!
//! on T's redundant limbs: column j sums c_j = t_j + d·b_j + q·n_j (the first row's products,
//! landing where they do in the folding mode), then t′_j = lo17(c_(j+1)) + mid17(c_j) +
//! hi(c_(j−1)): the folding mode's redistribution, one limb lower. lo17(c_0) = 0 is what q is
//! for, and it is dropped. q needs t_0 mod 2^17 only, and t_0 mod 2^17 = T mod 2^17 for
//! redundant limbs, so no carry is resolved; the hardware forms q as t_0·N′ + d·(b_0·N′ mod 2^17),
//! one multiply-add, a turn ahead of the step.
//!
//! B and A have at most L = `operand_limbs` limbs (the row is L DSPs wide), N at most
//! `modulus_limbs` (the loop DSPs above N's limbs, which multiply by M̂'s limbs in the folding
//! mode, are not built). Three kinds of pass ([`ClassicOp`]):
//! - a multiplication, over S = k·(m − 1) digits, so that R = 2^(17·S) is the folding
//!   multiplier's: A·B·R^(−1) mod N, below 2N (Walter: R > 4N);
//! - a wide REDC of C = C_hi·2^(17L) + C_lo (A = C_hi, B = C_lo, C < 2^(17L)·N), over S digits:
//!   the DSPs see the digit 1 in the first step and 0 after it, so T takes C_lo, and digit i of
//!   C_hi joins column L in step i (before that step's reduction), where its weight is
//!   2^(17(L+i)); the result is C·R^(−1) mod N, below 2N;
//! - a multiplication of A − 1 (the exact division, [`super::ExactDivider`] modulo 2^(17M) − p
//!   with M = `modulus_limbs`), over M digits: its modulus has M limbs.
//!
//! The passes run on the folding multiplier ([`FoldShape`]) and on the delayed-quotient one
//! ([`DelayedShape`], [`ClassicPass::delayed_trace`]); a [`ClassicShape`] is what they need of
//! either.

use num_bigint::BigUint;
use num_traits::{One, Zero};

use super::fold::{limbs_value, redistribute, FoldShape, FoldValue};
use super::fold_delayed::{loop_step, DelayedShape};
use super::wide::LIMB_BITS;
use super::wide::{self, Multiplicand};
use super::{to_digits, HwError};

const LIMB_MASK: u64 = (1 << LIMB_BITS) - 1;

/// What a classic pass computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClassicOp {
    /// A·B·R^(−1) mod N.
    Multiply,
    /// (C_hi·2^(17L) + C_lo)·R^(−1) mod N, with A = C_hi and B = C_lo.
    WideRedc,
    /// (A − 1)·B·2^(−17M) mod N, M = N's limbs: the exact division's pass (A ≥ 1).
    Decremented,
}

/// One step of a classic pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassicStep {
    /// The digit the DSPs multiply B by.
    pub digit: u64,
    /// A wide REDC's digit of C_hi added to column L (0 otherwise).
    pub high: u64,
    /// The quotient digit.
    pub q: u64,
    /// T's limbs after the step (`columns` of them).
    pub t: Vec<u64>,
}

/// Every step of one classic pass and its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassicTrace {
    /// One entry per step.
    pub steps: Vec<ClassicStep>,
    /// The last step's T in normalized limbs.
    pub result: FoldValue,
}

/// A classic pass on the deep-loop multiplier ([`ClassicPass::deep_trace`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeepClassicTrace {
    /// T's registers after each turn of the pass: per step its products turn and its quotient
    /// turn, then the last products turn (2·s + 1 turns).
    pub turns: Vec<Vec<u64>>,
    /// Each step's quotient digit.
    pub quotients: Vec<u64>,
    /// The result in normalized limbs: the same value as [`ClassicPass::trace`]'s.
    pub result: FoldValue,
}

/// Turns a delayed classic step holds T between its products turn and its quotient turn: d + 2,
/// for its exact quotient reaches row 0's copy of stage A's adder two turns after the products
/// turn (the pre-adder DSP's four registers), and its products land d + 1 turns after that.
pub(crate) fn delayed_hold_turns(quotient_delay: usize) -> usize {
    quotient_delay + 2
}

/// A classic pass on the delayed-quotient multiplier ([`ClassicPass::delayed_trace`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelayedClassicTrace {
    /// T's limbs after each of the lane's turns from its first products turn: d + 4 a step,
    /// then the last products turn and the d drain turns.
    pub turns: Vec<Vec<u64>>,
    /// Each step's quotient digit.
    pub quotients: Vec<u64>,
    /// The drain's kept limbs, then T's: the same value as [`ClassicPass::trace`]'s.
    pub result: FoldValue,
}

/// What a classic pass needs of its multiplier's sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassicShape {
    /// L: limbs of an operand and of the row of DSPs.
    pub operand_limbs: usize,
    /// M: limbs of N.
    pub modulus_limbs: usize,
    /// Limbs of T.
    pub columns: usize,
    /// S: digits of a multiplication or a wide REDC (R = 2^(17S), the folding mode's).
    pub digits: usize,
    /// k: the folding mode's limbs a step (the delayed multiplier's drain shifts by k).
    pub limbs_per_step: usize,
    /// d: the folding mode's quotient delay (0 but on the delayed-quotient multiplier).
    pub quotient_delay: usize,
}

impl ClassicShape {
    /// Steps of a classic pass: N's limbs for the exact division, S otherwise.
    pub fn steps(&self, op: ClassicOp) -> usize {
        match op {
            ClassicOp::Decremented => self.modulus_limbs,
            ClassicOp::Multiply | ClassicOp::WideRedc => self.digits,
        }
    }
}

impl From<&FoldShape> for ClassicShape {
    fn from(shape: &FoldShape) -> Self {
        ClassicShape {
            operand_limbs: shape.operand_limbs,
            modulus_limbs: shape.modulus_limbs,
            columns: shape.columns,
            digits: shape.classic_digits(),
            limbs_per_step: shape.limbs_per_step,
            quotient_delay: 0,
        }
    }
}

impl From<&DelayedShape> for ClassicShape {
    fn from(shape: &DelayedShape) -> Self {
        ClassicShape {
            operand_limbs: shape.operand_limbs,
            modulus_limbs: shape.modulus_limbs,
            columns: shape.columns,
            digits: shape.classic_digits(),
            limbs_per_step: shape.limbs_per_step,
            quotient_delay: shape.quotient_delay,
        }
    }
}

/// A modulus for classic passes on a multiplier of a [`ClassicShape`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassicPass {
    shape: ClassicShape,
    modulus: BigUint,
    n: Vec<u64>,
    n_prime: u64,
    multiplicand: Multiplicand,
}

impl FoldShape {
    /// Steps of a classic pass: N's limbs for the exact division, S otherwise.
    pub fn classic_steps(&self, op: ClassicOp) -> usize {
        ClassicShape::from(self).steps(op)
    }

    /// Cycles of a classic `op` of s steps on the RTL multiplier: two turns a step (its
    /// quotient's, then its products'), and the load, lead and last turns, 2·(2·s + 2).
    pub fn classic_cycles(&self, op: ClassicOp) -> usize {
        2 * (2 * self.classic_steps(op) + 2)
    }

    /// Turns of a classic `op` on the deep-loop multiplier after its two lead turns: two a step
    /// and one to bring T down a limb, 2·s + 1 ([`ClassicPass::deep_trace`]).
    pub fn deep_classic_turns(&self, op: ClassicOp) -> usize {
        2 * self.classic_steps(op) + 1
    }

    /// Cycles of a classic `op` on the deep-loop multiplier from its start to its result,
    /// (2·s + 3)·(k + 3).
    pub fn deep_classic_cycles(&self, op: ClassicOp) -> usize {
        (self.deep_classic_turns(op) + 2) * self.deep_lanes()
    }

    /// Cycles of one prime's decryption path in a lane of the deep-loop multiplier, each
    /// multiplication starting as the one before shows its result: the wide REDC, ×R³ and the
    /// exponentiation's `exp_multiplications` in the folding mode, the way out, the exact
    /// division and ×t·R mod n.
    pub fn deep_path_cycles(&self, exp_multiplications: usize) -> usize {
        self.deep_classic_cycles(ClassicOp::WideRedc)
            + (1 + exp_multiplications) * self.deep_cycles()
            + 2 * self.deep_classic_cycles(ClassicOp::Multiply)
            + self.deep_classic_cycles(ClassicOp::Decremented)
    }
}

impl ClassicPass {
    /// Classic passes modulo N on `shape`'s multiplier.
    ///
    /// Errors: N even, N ≤ 1, or N of more limbs than the shape's moduli.
    pub fn new(shape: impl Into<ClassicShape>, modulus: &BigUint) -> Result<Self, HwError> {
        let shape = shape.into();
        let limbs = shape.operand_limbs;
        if modulus <= &BigUint::one()
            || !modulus.bit(0)
            || modulus.bits() > (LIMB_BITS as usize * shape.modulus_limbs) as u64
        {
            return Err(HwError::InvalidModulus);
        }
        let n: Vec<u64> = to_digits(modulus, LIMB_BITS, limbs).into_iter().map(|d| d as u64).collect();
        // −N^(−1) mod 2^17 by Newton's iteration on the low limb.
        let mut inv: u64 = 1;
        for _ in 0..5 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(n[0].wrapping_mul(inv)));
        }
        let n_prime = inv.wrapping_neg() & LIMB_MASK;
        debug_assert_eq!((n[0] * n_prime) & LIMB_MASK, LIMB_MASK);
        Ok(Self { shape, modulus: modulus.clone(), n, n_prime, multiplicand: Multiplicand::default() })
    }

    /// The same passes with B held as `multiplicand` for the first row's d·B products (as the
    /// folding mode holds it, [`super::FoldContext::with_multiplicand`]). The quotient reads B's
    /// low 17 bits, which are b_0's and the first window's alike.
    pub fn with_multiplicand(mut self, multiplicand: Multiplicand) -> Self {
        self.multiplicand = multiplicand;
        self
    }

    /// N.
    pub fn modulus(&self) -> &BigUint {
        &self.modulus
    }

    /// −N^(−1) mod 2^17.
    pub fn n_prime(&self) -> u64 {
        self.n_prime
    }

    /// The pass `op` on A's and B's limbs (at most L each; A's exact for a wide REDC), every step
    /// recorded.
    pub fn trace(&self, op: ClassicOp, a: &[u64], b: &[u64]) -> ClassicTrace {
        let limbs = self.shape.operand_limbs;
        debug_assert!(b.len() <= limbs, "operand wider than the row");
        let b_windows = self.multiplicand.windows(b, limbs);
        let mut t = vec![0u64; self.shape.columns];
        let mut trace = Vec::new();
        for (digit, high) in self.digits(op, a) {
            let (q, next) = self.step_with(&t, digit, high, b, b_windows.as_deref());
            t = next;
            trace.push(ClassicStep { digit, high, q, t: t.clone() });
        }
        let result = normalize(&t, limbs);
        ClassicTrace { steps: trace, result }
    }

    /// The pass `op` as the deep-loop multiplier runs it, a step in two of its lane's turns (the
    /// quotient needs T's low limb through a DSP of its own, three registered stages, so the
    /// step's q·N cannot join its d·B in one turn):
    /// - the products turn: c_j = t_j + d·b_j (+ the wide REDC's digit at column L), redistributed
    ///   into register j; q = lo17(t′_0)·N′ follows from it, t′_0 ≡ t_0 + d·b_0 (mod 2^17);
    /// - the quotient turn: c_j = t′_j + q·n_j, redistributed into register j: lo17(c_0) = 0 is
    ///   register 0, and register j + 1 holds limb j of the quotient by 2^17;
    /// - after the last step, a products turn with the digit 0 reads register j + 1 into column j
    ///   and so brings T back down a limb.
    ///
    /// Register for register what the hardware's T holds after each turn; the result equals
    /// [`trace`](Self::trace)'s value for value.
    pub fn deep_trace(&self, op: ClassicOp, a: &[u64], b: &[u64]) -> DeepClassicTrace {
        let (limbs, w) = (self.shape.operand_limbs, self.shape.columns);
        debug_assert!(b.len() <= limbs, "operand wider than the row");
        let b_windows = self.multiplicand.windows(b, limbs);
        let mut registers = vec![0u64; w];
        let mut turns = Vec::new();
        let mut quotients = Vec::new();
        let steps = self.digits(op, a);
        for (s, &(digit, high)) in steps.iter().chain([(0, 0)].iter()).enumerate() {
            // The products turn: register j + 1 into column j (T is one limb up after a quotient
            // turn, and 0 before the first).
            let mut sums: Vec<u64> = (0..w)
                .map(|j| {
                    let mut c = registers.get(j + 1).copied().unwrap_or(0);
                    if j < limbs && b_windows.is_none() {
                        c += digit * b.get(j).copied().unwrap_or(0);
                    }
                    if j == limbs {
                        c += high;
                    }
                    c
                })
                .collect();
            if let Some(b_windows) = &b_windows {
                wide::add_row(&mut sums, 0, digit, b_windows);
            }
            registers = redistribute(&sums);
            turns.push(registers.clone());
            if s == steps.len() {
                break;
            }
            // The quotient turn.
            let q = ((registers[0] & LIMB_MASK) * self.n_prime) & LIMB_MASK;
            let sums: Vec<u64> = (0..w).map(|j| registers[j] + if j < limbs { q * self.n[j] } else { 0 }).collect();
            debug_assert_eq!(sums[0] & LIMB_MASK, 0, "the quotient clears the low limb");
            registers = redistribute(&sums);
            debug_assert_eq!(registers[0], 0);
            quotients.push(q);
            turns.push(registers.clone());
        }
        DeepClassicTrace { turns, quotients, result: normalize(&registers, limbs) }
    }

    /// The pass `op` as the delayed-quotient multiplier runs it, in its lane's turns: each turn
    /// adds redistributed products y to T's limbs from a shift up and normalizes
    /// (`fold_delayed::loop_step`). The quotient needs T's exact low limb through a DSP of its own
    /// and then the pipeline a folding quotient takes from stage A's sums, 2·d + 2 cycles, so a
    /// step takes d + 4 turns:
    /// - the products turn: y = d·B (and a wide REDC's digit of C_hi at column L), T shifted down
    ///   a limb (its limb 0 is 0 after a quotient turn; T is 0 before the first step); then t_0
    ///   is T mod 2^17 and q = lo17(t_0·N′);
    /// - d + 2 turns that hold T (shift 0, y = 0) while q·N is on its way;
    /// - the quotient turn: y = q·N, shift 0, so limb 0 becomes 0.
    ///
    /// After the last step a products turn with the digit 0 brings T down, and d drain turns
    /// shift it down k limbs each, keeping its low limbs: the result is the kept limbs and T's,
    /// where the folding multiplication's result is.
    pub fn delayed_trace(&self, op: ClassicOp, a: &[u64], b: &[u64]) -> DelayedClassicTrace {
        let ClassicShape { operand_limbs: limbs, columns, limbs_per_step: k, quotient_delay: d, .. } = self.shape;
        debug_assert!(b.len() <= limbs, "operand wider than the row");
        let b_windows = self.multiplicand.windows(b, limbs);
        let no_products = vec![0u64; columns];
        let mut t = no_products.clone();
        let mut turns = Vec::new();
        let mut quotients = Vec::new();
        let mut turn = |t: &mut Vec<u64>, y: &[u64], shift: usize| {
            *t = loop_step(t, y, shift);
            turns.push(t.clone());
        };
        let steps = self.digits(op, a);
        for (s, &(digit, high)) in steps.iter().chain([(0, 0)].iter()).enumerate() {
            let mut sums = vec![0u64; columns];
            match &b_windows {
                Some(windows) => wide::add_row(&mut sums, 0, digit, windows),
                None => (0..b.len()).for_each(|j| sums[j] += digit * b[j]),
            }
            sums[limbs] += high;
            if s == 0 {
                t.fill(0);
            }
            turn(&mut t, &redistribute(&sums), 1);
            if s == steps.len() {
                break;
            }
            let q = ((t[0] & LIMB_MASK) * self.n_prime) & LIMB_MASK;
            for _ in 0..delayed_hold_turns(d) {
                turn(&mut t, &no_products, 0);
            }
            let sums: Vec<u64> = (0..columns).map(|j| if j < limbs { q * self.n[j] } else { 0 }).collect();
            turn(&mut t, &redistribute(&sums), 0);
            debug_assert_eq!(t[0], 0, "the quotient clears the low limb");
            quotients.push(q);
        }
        let mut kept = Vec::with_capacity(d * k);
        for _ in 0..d {
            kept.extend_from_slice(&t[..k]);
            turn(&mut t, &no_products, k);
        }
        let mut limbs_out: Vec<u64> = kept.into_iter().chain(t).collect();
        debug_assert!(limbs_out[limbs..].iter().all(|&l| l == 0), "result ≥ 2^(17L)");
        limbs_out.truncate(limbs);
        DelayedClassicTrace { turns, quotients, result: FoldValue::from_limbs(limbs_out) }
    }

    /// Each step's digit for the DSPs and a wide REDC's digit of C_hi for column L.
    fn digits(&self, op: ClassicOp, a: &[u64]) -> Vec<(u64, u64)> {
        let steps = self.shape.steps(op);
        debug_assert!(a.len() <= self.shape.operand_limbs, "operand wider than the row");
        let mut a_value = limbs_value(a);
        if op == ClassicOp::Decremented {
            debug_assert!(!a_value.is_zero(), "A − 1 of 0");
            a_value -= 1u32;
        }
        let a_digits: Vec<u64> = to_digits(&a_value, LIMB_BITS, steps).into_iter().map(|d| d as u64).collect();
        debug_assert!(limbs_value(&a_digits) == a_value, "A has more digits than the pass has steps");
        a_digits
            .into_iter()
            .enumerate()
            .map(|(i, a_digit)| match op {
                ClassicOp::WideRedc => (u64::from(i == 0), a_digit),
                ClassicOp::Multiply | ClassicOp::Decremented => (a_digit, 0),
            })
            .collect()
    }

    /// The pass's result alone.
    pub fn run(&self, op: ClassicOp, a: &[u64], b: &[u64]) -> FoldValue {
        self.trace(op, a, b).result
    }

    /// One step: the quotient digit and T's new limbs.
    pub fn step(&self, t: &[u64], digit: u64, high: u64, b: &[u64]) -> (u64, Vec<u64>) {
        self.step_with(t, digit, high, b, self.multiplicand.windows(b, self.shape.operand_limbs).as_deref())
    }

    /// [`step`](Self::step) with B's windows formed already (`None`: B in limbs).
    fn step_with(&self, t: &[u64], digit: u64, high: u64, b: &[u64], b_windows: Option<&[u64]>) -> (u64, Vec<u64>) {
        let (limbs, w) = (self.shape.operand_limbs, self.shape.columns);
        let b0 = b.first().copied().unwrap_or(0);
        let q = (((t[0] + digit * b0) & LIMB_MASK) * self.n_prime) & LIMB_MASK;
        let mut sums: Vec<u64> = (0..w)
            .map(|j| {
                let mut c = t[j];
                if j < limbs {
                    c += q * self.n[j];
                    if b_windows.is_none() {
                        c += digit * b.get(j).copied().unwrap_or(0);
                    }
                }
                if j == limbs {
                    c += high;
                }
                c
            })
            .collect();
        if let Some(b_windows) = b_windows {
            wide::add_row(&mut sums, 0, digit, b_windows);
        }
        debug_assert_eq!(sums[0] & LIMB_MASK, 0, "the quotient clears the low limb");
        debug_assert!(sums[w - 1] >> (2 * LIMB_BITS) == 0, "T overflows");
        let next = (0..w)
            .map(|j| {
                let mut limb = (sums[j] >> LIMB_BITS) & LIMB_MASK;
                if j + 1 < w {
                    limb += sums[j + 1] & LIMB_MASK;
                }
                if j >= 1 {
                    limb += sums[j - 1] >> (2 * LIMB_BITS);
                }
                limb
            })
            .collect();
        (q, next)
    }
}

/// u_j = lo17(t_j) + (t_(j−1) >> 17) over the first `limbs` limbs, as the folding mode's results.
fn normalize(t: &[u64], limbs: usize) -> FoldValue {
    debug_assert!(t[limbs..].iter().all(|&l| l == 0) && t[limbs - 1] >> LIMB_BITS == 0, "result ≥ 2^(17L)");
    let limbs = (0..limbs).map(|j| (t[j] & LIMB_MASK) + if j >= 1 { t[j - 1] >> LIMB_BITS } else { 0 }).collect();
    FoldValue::from_limbs(limbs)
}

/// The exact limbs of x, as many as `shape`'s operands have.
pub fn exact_limbs(shape: impl Into<ClassicShape>, x: &BigUint) -> Vec<u64> {
    to_digits(x, LIMB_BITS, shape.into().operand_limbs).into_iter().map(|d| d as u64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::{ExactDivider, MontgomeryContext};
    use crate::prime::{random_odd, random_prime};
    use num_bigint::RandBigInt;
    use rand::{rngs::StdRng, SeedableRng};

    /// Redundant limbs of x < 2^(17L) as the folding multiplier's results have them.
    fn redundant(shape: impl Into<ClassicShape>, x: &BigUint, rng: &mut StdRng) -> Vec<u64> {
        let mut limbs = exact_limbs(shape, x);
        for j in 0..limbs.len() - 1 {
            if limbs[j + 1] > 0 && rand::Rng::gen_bool(rng, 0.5) {
                limbs[j + 1] -= 1;
                limbs[j] += 1 << LIMB_BITS;
            }
        }
        limbs
    }

    #[test]
    fn the_three_passes_compute_the_classic_models_values() {
        let mut rng = StdRng::seed_from_u64(11);
        for ((bits, k), multiplicand) in [(64usize, 1usize), (64, 4), (300, 3), (520, 8), (2048, 4)]
            .into_iter()
            .flat_map(|size| [(size, Multiplicand::Limbs), (size, Multiplicand::Windows)])
        {
            let shape = FoldShape::new(bits, k).unwrap();
            let l = shape.operand_limbs;
            let n = random_odd(bits as u64, &mut rng);
            let pass = ClassicPass::new(&shape, &n).unwrap().with_multiplicand(multiplicand);
            let ctx = MontgomeryContext::with_digits(&n, LIMB_BITS, shape.classic_digits()).unwrap();
            // A multiplication, A up to the folding multiplier's bound X = 2^(17k+3)·N.
            let x_bound = &n << (17 * k + 3);
            let a = rng.gen_biguint_below(&x_bound);
            let b = rng.gen_biguint_below(&n);
            let got = pass.run(ClassicOp::Multiply, &redundant(&shape, &a, &mut rng), &exact_limbs(&shape, &b));
            let r_inv_ab = ctx.redc_wide(&(&a * &b));
            assert_eq!(got.value(), r_inv_ab, "{bits} bits, k = {k}, {multiplicand:?}: A·B·R^(−1)");
            assert!(got.value() < &n << 1u32);
            // A wide REDC of C < 2^(17L)·N, split at limb L.
            let c = rng.gen_biguint_below(&(&n << (17 * l)));
            let (c_hi, c_lo) = (&c >> (17 * l), &c % (BigUint::one() << (17 * l)));
            let got = pass.run(ClassicOp::WideRedc, &exact_limbs(&shape, &c_hi), &exact_limbs(&shape, &c_lo));
            assert_eq!(got.value(), ctx.redc_wide(&c), "{bits} bits, k = {k}, {multiplicand:?}: REDC");
        }
    }

    #[test]
    fn the_decremented_pass_divides_exactly() {
        let mut rng = StdRng::seed_from_u64(12);
        for ((bits, k), multiplicand) in [(32u64, 1usize), (32, 4), (256, 2), (1024, 4)]
            .into_iter()
            .flat_map(|size| [(size, Multiplicand::Limbs), (size, Multiplicand::Windows)])
        {
            let p = random_prime(bits, &mut rng);
            let shape = FoldShape::new(2 * bits as usize, k).unwrap();
            let divider = ExactDivider::new(&p, LIMB_BITS, shape.modulus_limbs).unwrap();
            let pass = ClassicPass::new(&shape, divider.ctx().modulus()).unwrap().with_multiplicand(multiplicand);
            assert_eq!(pass.n_prime() as u128, divider.ctx().n_prime());
            // x ≡ 1 mod p, at most p² as the way out of the domain leaves it.
            let l = rng.gen_biguint_below(&p);
            let x = &l * &p + 1u32;
            let got = pass.run(
                ClassicOp::Decremented,
                &redundant(&shape, &x, &mut rng),
                &exact_limbs(&shape, &BigUint::one()),
            );
            assert_eq!(got.value(), l, "{bits}-bit p, k = {k}, {multiplicand:?}");
            assert_eq!(got.value(), divider.l(&x));
        }
    }

    #[test]
    fn steps_keep_limbs_small_and_the_value_recurrence() {
        let mut rng = StdRng::seed_from_u64(13);
        let shape = FoldShape::new(200, 3).unwrap();
        let n = random_odd(200, &mut rng);
        // The windows' high pieces reach 2^40, and T's limbs 2^18 + 2^7.
        for multiplicand in [Multiplicand::Limbs, Multiplicand::Windows] {
            let pass = ClassicPass::new(&shape, &n).unwrap().with_multiplicand(multiplicand);
            let a = redundant(&shape, &rng.gen_biguint_below(&(&n << 54)), &mut rng);
            let b = exact_limbs(&shape, &rng.gen_biguint_below(&n));
            let trace = pass.trace(ClassicOp::Multiply, &a, &b);
            assert_eq!(trace.steps.len(), shape.classic_digits());
            let mut t = BigUint::zero();
            for step in &trace.steps {
                assert!(step.t.iter().all(|&l| l < (1 << 18) + 4), "{multiplicand:?}: limb ≥ 2^18 + 4");
                let sum = &t + step.digit * limbs_value(&b) + step.q * &n;
                assert!((&sum % (1u32 << 17)).is_zero());
                t = sum >> 17;
                assert_eq!(limbs_value(&step.t), t);
            }
        }
    }

    #[test]
    fn the_deep_loops_turns_reach_the_same_values() {
        let mut rng = StdRng::seed_from_u64(14);
        for (bits, k) in [(64usize, 1usize), (200, 3), (520, 4)] {
            let shape = FoldShape::new(bits, k).unwrap();
            let l = shape.operand_limbs;
            let n = random_odd(bits as u64, &mut rng);
            let pass = ClassicPass::new(&shape, &n).unwrap().with_multiplicand(Multiplicand::Windows);
            let a = redundant(&shape, &rng.gen_biguint_below(&(&n << (17 * k + 3))), &mut rng);
            let b = exact_limbs(&shape, &rng.gen_biguint_below(&n));
            let c = rng.gen_biguint_below(&(&n << (17 * l)));
            let (c_hi, c_lo) = (&c >> (17 * l), &c % (BigUint::one() << (17 * l)));
            let x = rng.gen_biguint_below(&n) + 1u32;
            for (op, a, b) in [
                (ClassicOp::Multiply, a.clone(), b.clone()),
                (ClassicOp::WideRedc, exact_limbs(&shape, &c_hi), exact_limbs(&shape, &c_lo)),
                (ClassicOp::Decremented, exact_limbs(&shape, &x), b.clone()),
            ] {
                let (one_turn, deep) = (pass.trace(op, &a, &b), pass.deep_trace(op, &a, &b));
                assert_eq!(deep.result.value(), one_turn.result.value(), "{bits} bits, k = {k}, {op:?}");
                assert_eq!(deep.turns.len(), shape.deep_classic_turns(op));
                // Each step's quotient is the one-turn step's, and its quotient turn holds the
                // one-turn step's T a register up.
                for (s, step) in one_turn.steps.iter().enumerate() {
                    assert_eq!(deep.quotients[s], step.q, "{op:?}, step {s}: q");
                    let up = &deep.turns[2 * s + 1];
                    assert_eq!(up[0], 0);
                    assert_eq!(limbs_value(&up[1..]), limbs_value(&step.t), "{op:?}, step {s}: T");
                    assert!(deep.turns[2 * s].iter().chain(up).all(|&limb| limb < (1 << 18) + 4));
                }
            }
        }
    }

    #[test]
    fn the_delayed_multipliers_turns_reach_the_same_values() {
        let mut rng = StdRng::seed_from_u64(15);
        for ((bits, k, d), multiplicand) in [(64usize, 1usize, 3usize), (200, 3, 4), (520, 4, 4), (300, 8, 6)]
            .into_iter()
            .flat_map(|size| [(size, Multiplicand::Limbs), (size, Multiplicand::Windows)])
        {
            let shape = DelayedShape::new(bits, k, d).unwrap();
            let l = shape.operand_limbs;
            let n = random_odd(bits as u64, &mut rng);
            let pass = ClassicPass::new(&shape, &n).unwrap().with_multiplicand(multiplicand);
            let fold_bound = &n << (17 * k * (d + 1) + 3);
            let a = redundant(&shape, &rng.gen_biguint_below(&fold_bound), &mut rng);
            let b = exact_limbs(&shape, &rng.gen_biguint_below(&n));
            let c = rng.gen_biguint_below(&(&n << (17 * l)));
            let (c_hi, c_lo) = (&c >> (17 * l), &c % (BigUint::one() << (17 * l)));
            let x = rng.gen_biguint_below(&n) + 1u32;
            for (op, a, b) in [
                (ClassicOp::Multiply, a.clone(), b.clone()),
                (ClassicOp::WideRedc, exact_limbs(&shape, &c_hi), exact_limbs(&shape, &c_lo)),
                (ClassicOp::Decremented, redundant(&shape, &x, &mut rng), b.clone()),
            ] {
                let at = format!("{bits} bits, k = {k}, d = {d}, {multiplicand:?}, {op:?}");
                let (one_turn, delayed) = (pass.trace(op, &a, &b), pass.delayed_trace(op, &a, &b));
                assert_eq!(delayed.result.value(), one_turn.result.value(), "{at}");
                assert_eq!(delayed.result.limbs().len(), l);
                let steps = ClassicShape::from(&shape).steps(op);
                let period = delayed_hold_turns(d) + 2;
                assert_eq!(delayed.turns.len(), steps * period + 1 + d, "{at}");
                // Each step's quotient is the one-turn step's; its quotient turn holds the one-turn
                // step's T a limb up, and the turns between hold the value of its products turn.
                for (s, step) in one_turn.steps.iter().enumerate() {
                    assert_eq!(delayed.quotients[s], step.q, "{at}, step {s}: q");
                    let turns = &delayed.turns[s * period..(s + 1) * period];
                    let up = &turns[period - 1];
                    assert_eq!(up[0], 0);
                    assert_eq!(limbs_value(&up[1..]), limbs_value(&step.t), "{at}, step {s}: T");
                    assert!(turns[..period - 1].iter().all(|t| limbs_value(t) == limbs_value(&turns[0])), "{at}");
                    assert!(turns.iter().all(|t| t.iter().all(|&limb| limb < (1 << 17) + 3)), "{at}");
                }
            }
        }
    }

    #[test]
    fn rejects_moduli_the_row_cannot_hold() {
        let shape = FoldShape::new(64, 2).unwrap();
        assert!(ClassicPass::new(&shape, &BigUint::from(100u32)).is_err());
        assert!(ClassicPass::new(&shape, &((BigUint::one() << (17 * shape.modulus_limbs)) + 1u32)).is_err());
    }
}
