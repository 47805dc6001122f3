//! Montgomery multiplication that consumes k limbs of the multiplier per step, with no quotient
//! to compute: the bit-exact model of the accelerator's high-radix multiplier.
//!
//! Limbs are 17 bits; a step consumes r = 17·k bits. The quotient follows Orup ("Simplifying
//! quotient determination in high-radix modular multiplication", ARITH 1995): with the
//! pre-scaled modulus Ñ = N′·N, N′ = −N^(−1) mod 2^r, Ñ ≡ −1 (mod 2^r), so the quotient of a
//! step is T mod 2^r itself and (T + Q·Ñ)/2^r = T_high + T_low·M̂, where T = T_high·2^r + T_low
//! and M̂ = (Ñ + 1)/2^r = 2^(−r) mod N. The hardware never forms Ñ or Q: each step is
//!
//! ```text
//! T ← T_high + T_low·M̂ + A_i·B
//! ```
//!
//! with A_i the i-th r-bit chunk of the multiplier (the product is added after the fold, so that
//! nothing in the loop waits for it: A_i·B is computed a cycle ahead). T_low is taken from T's
//! redundant limbs as they are (t_0 … t_(k−1), each < 2^19): splitting T at a limb boundary
//! needs no carry, since T_high·2^r + T_low = T for any limbs. So the loop has no quotient
//! multiplier, no carry chain wider than a limb, and no digit to resolve.
//!
//! The price is range: the fold adds T_low·M̂ < 2.01·2^r·N every step, so values stay below
//! X = 2^(r+3)·N rather than 2N, operands have k more limbs than N, and a multiplication takes
//! m = ⌈(|N| + 4)/r⌉ + 2 steps. Proof, with every value a non-negative sum of limbs:
//! t_j < 2^18 + 2^7 (below), so T_low < 2^r·(2^18 + 2^7)/(2^17 − 1) < 2.01·2^r. After the m
//! steps, T < A·B/R + 2.01·2^r·N·(1 + 2^(−r) + …) with R = 2^(r·(m−1)) (A's chunks are added
//! after the fold, so the last one is divided m − 1 times, and A < X ≤ R/2 makes it 0). For
//! A, B < X: A·B/R < X/2 because R ≥ 2X = 2^(r+4)·N, and 2.02·2^r·N < X/2 = 4·2^r·N. So the
//! result is again below X. No value needs a final subtraction; leaving the domain (a classic
//! REDC, [`MontgomeryContext`] over k·(m − 1) digits, so with the same R) brings it below N + 1.
//!
//! Limbs. Step i forms, for every limb position j of the new T (result-aligned column sums),
//! c_j = t_(j+k) + Σ_(l<k) (a_(i,l)·b_(j−l) + t_l·m̂_(j−l)), then redistributes each column sum
//! over three limbs without propagating carries: t′_j = lo17(c_j) + mid17(c_(j−1)) + hi(c_(j−2)),
//! where mid17 is bits 17–33 and hi the bits from 34 on. With a_l, m̂_j < 2^17, b_j < 2^17 + 3
//! and t_j < 2^19, c_j < 3k·2^35 + 2^19 < 2^41 for k ≤ 16, so hi < 2^7 and t′_j < 2^18 + 2^7.
//! A result leaves as normalized limbs u_j = lo17(t_j) + hi17(t_(j−1)) < 2^17 + 3 (t_j >> 17 ≤ 2),
//! which fit the DSP48E1's 25-bit port as the next multiplicand; the next multiplier's digits are
//! the exact 17-bit digits of its value. Every product is 17×18 bits or 19×17 bits: one DSP48E1.
//!
//! That is B in limbs ([`Multiplicand::Limbs`]). The accelerator holds B in 23-bit windows
//! ([`Multiplicand::Windows`], the default, [`super::wide`]): the a·b products are 17×24 bits,
//! ⌈17·L/23⌉ a row, added as three grid-aligned pieces each, and the bounds above hold as they
//! are.

use num_bigint::BigUint;
use num_traits::{One, Zero};

use super::exponent::DomainMultiplier;
use super::fold_classic::ClassicShape;
use super::wide::{self, Multiplicand, LIMB_BITS};
use super::{to_digits, HwError, MontgomeryContext};

/// Largest number of limbs consumed per step.
pub const MAX_LIMBS_PER_STEP: usize = 16;

const LIMB_MASK: u64 = (1 << LIMB_BITS) - 1;

fn lo17(x: u64) -> u64 {
    x & LIMB_MASK
}

fn mid17(x: u64) -> u64 {
    (x >> LIMB_BITS) & LIMB_MASK
}

fn hi(x: u64) -> u64 {
    x >> (2 * LIMB_BITS)
}

/// Column sums (< 2^51) redistributed over three limbs, column j into limb j:
/// t_j = lo17(c_j) + mid17(c_(j−1)) + hi(c_(j−2)); the last column's upper parts must be 0.
pub(crate) fn redistribute(sums: &[u64]) -> Vec<u64> {
    let w = sums.len();
    debug_assert!(mid17(sums[w - 1]) == 0 && hi(sums[w - 1]) == 0 && hi(sums[w - 2]) == 0, "T overflows");
    (0..w)
        .map(|j| {
            let mut limb = lo17(sums[j]);
            if j >= 1 {
                limb += mid17(sums[j - 1]);
            }
            if j >= 2 {
                limb += hi(sums[j - 2]);
            }
            limb
        })
        .collect()
}

/// The column sums of a step, one per limb of T (`t.len()` of them): c_j = t_(j+k) +
/// Σ_(l<k) (a_l·b_(j−l) + q_l·m_(j−l)), with q the k limbs the step folds (T's own low limbs, or a
/// delayed quotient's, [`super::fold_delayed`]) and m their constant (M̂, or H). With B's windows
/// (`b_windows`) the a·b products are those of its windows ([`wide::add_row`]).
pub(crate) fn column_sums(
    t: &[u64],
    quotient: &[u64],
    reduction: &[u64],
    a_digits: &[u64],
    b: &[u64],
    b_windows: Option<&[u64]>,
) -> Vec<u64> {
    let k = quotient.len();
    let mut sums: Vec<u64> = (0..t.len())
        .map(|j| {
            let mut c = t.get(j + k).copied().unwrap_or(0);
            for l in 0..k.min(j + 1) {
                c += quotient[l] * reduction.get(j - l).copied().unwrap_or(0);
                if b_windows.is_none() {
                    c += a_digits[l] * b.get(j - l).copied().unwrap_or(0);
                }
            }
            c
        })
        .collect();
    if let Some(b_windows) = b_windows {
        for (l, &digit) in a_digits.iter().enumerate() {
            wide::add_row(&mut sums, l, digit, b_windows);
        }
    }
    sums
}

/// 2^(−bits) mod N as (N′·N + 1)/2^bits with N′ = −N^(−1) mod 2^bits: below N, and N′·N ≡ −1
/// (mod 2^bits). `None` for an even N.
pub(crate) fn scaled_inverse(modulus: &BigUint, bits: usize) -> Option<BigUint> {
    let two_bits = BigUint::one() << bits;
    let n_inv = crate::prime::mod_inverse(&(modulus % &two_bits), &two_bits)?;
    let n_prime = (&two_bits - n_inv) % &two_bits;
    let scaled = &n_prime * modulus + 1u32;
    debug_assert!((&scaled % &two_bits).is_zero());
    Some(scaled >> bits)
}

/// Redundant limbs (< 2^18 + 2^7) of a value below 2^(17·`operand_limbs`) as a result:
/// u_j = lo17(t_j) + (t_(j−1) >> 17) < 2^17 + 3, `operand_limbs` of them.
pub(crate) fn normalized(t: &[u64], operand_limbs: usize) -> FoldValue {
    debug_assert!(t[operand_limbs..].iter().all(|&l| l == 0), "result ≥ 2^(17·operand limbs)");
    debug_assert_eq!(t[operand_limbs - 1] >> LIMB_BITS, 0);
    let limbs = (0..operand_limbs).map(|j| lo17(t[j]) + if j >= 1 { t[j - 1] >> LIMB_BITS } else { 0 }).collect();
    FoldValue { limbs }
}

/// A value as the folding multiplier holds it: normalized redundant limbs, least significant
/// first, each < 2^17 + 3, as many as the multiplier's operands have.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FoldValue {
    limbs: Vec<u64>,
}

impl FoldValue {
    /// The limbs.
    pub fn limbs(&self) -> &[u64] {
        &self.limbs
    }

    /// A value from its limbs (each < 2^17 + 3).
    pub fn from_limbs(limbs: Vec<u64>) -> Self {
        FoldValue { limbs }
    }

    /// Σ u_j·2^(17j).
    pub fn value(&self) -> BigUint {
        limbs_value(&self.limbs)
    }
}

/// Σ limb_j·2^(17j) for redundant limbs.
pub fn limbs_value(limbs: &[u64]) -> BigUint {
    limbs.iter().rev().fold(BigUint::zero(), |acc, &l| (acc << LIMB_BITS) + l)
}

/// The state after one step of a folding multiplication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldStep {
    /// The k exact digits a_(i,l) of the multiplier consumed by this step.
    pub a_digits: Vec<u64>,
    /// T's redundant limbs after the step (`columns` of them, each < 2^18 + 2^7).
    pub t: Vec<u64>,
}

/// Every step of one folding multiplication and its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldTrace {
    /// One entry per step, m in all.
    pub steps: Vec<FoldStep>,
    /// The last step's T in normalized limbs.
    pub result: FoldValue,
}

/// The sizes of a folding multiplier for moduli of up to `modulus_bits` bits (|N| below) and k
/// limbs per step: what the hardware is built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct FoldShape {
    /// k: limbs of the multiplier consumed per step.
    pub limbs_per_step: usize,
    /// m = ⌈(|N| + 4)/(17k)⌉ + 2: steps per multiplication.
    pub steps: usize,
    /// ⌈(|N| + 17k + 3)/17⌉: limbs of an operand or a result (X = 2^(17k+3)·N).
    pub operand_limbs: usize,
    /// ⌈|N|/17⌉: limbs of N and of M̂.
    pub modulus_limbs: usize,
    /// ⌈(|N| + 34k + 4)/17⌉: limbs of T (T < 2^(17k+1)·X inside a multiplication).
    pub columns: usize,
}

impl FoldShape {
    /// The sizes for `modulus_bits`-bit moduli and k limbs per step.
    ///
    /// Errors: k outside 1..=16, or no modulus bits.
    pub fn new(modulus_bits: usize, limbs_per_step: usize) -> Result<Self, HwError> {
        if !(1..=MAX_LIMBS_PER_STEP).contains(&limbs_per_step) {
            return Err(HwError::InvalidSchedule(format!(
                "{limbs_per_step} limbs per step (need 1..={MAX_LIMBS_PER_STEP})"
            )));
        }
        if modulus_bits < 2 {
            return Err(HwError::InvalidModulus);
        }
        let limb = LIMB_BITS as usize;
        let r = limb * limbs_per_step;
        Ok(Self {
            limbs_per_step,
            steps: (modulus_bits + 4).div_ceil(r) + 2,
            operand_limbs: (modulus_bits + r + 3).div_ceil(limb),
            modulus_limbs: modulus_bits.div_ceil(limb),
            columns: (modulus_bits + 2 * r + 4).div_ceil(limb),
        })
    }

    /// Digits of a classic pass with the same R = 2^(17k·(m−1)): k·(m − 1).
    pub fn classic_digits(&self) -> usize {
        self.limbs_per_step * (self.steps - 1)
    }

    /// Cycles from a folding multiplication's start to its result on the RTL multiplier, whose
    /// two slots take turns every other cycle: the load, the lead turn that registers the first
    /// digits, a turn per step and the last step's stage 2, 2·(m + 2).
    pub fn fold_cycles(&self) -> usize {
        2 * (self.steps + 2)
    }

    /// Independent multiplications ("lanes") the deep-loop multiplier interleaves: one per cycle
    /// of its loop, k + 3 (a step's limbs of T enter the loop DSPs' input registers, are
    /// multiplied into their M registers, summed down a cascade of k DSPs, one P register each,
    /// and redistributed into T).
    pub fn deep_lanes(&self) -> usize {
        self.limbs_per_step + 3
    }

    /// Cycles from a folding multiplication's start to its result on the deep-loop multiplier:
    /// a turn of its lane per step, after two lead turns that resolve the first digits and carry
    /// the first a·b products through their DSPs and adder tree, (m + 2)·(k + 3).
    pub fn deep_cycles(&self) -> usize {
        (self.steps + 2) * self.deep_lanes()
    }
}

/// The constants of a folding multiplier for one odd modulus N and k limbs per step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldContext {
    modulus: BigUint,
    shape: FoldShape,
    m_hat: Vec<u64>,
    bound: BigUint,
    classic: MontgomeryContext,
    multiplicand: Multiplicand,
}

// The modulus may be p² (and the constants follow from it): wiped when dropped.
impl Drop for FoldContext {
    fn drop(&mut self) {
        crate::key::wipe(&mut self.modulus);
        crate::key::wipe(&mut self.bound);
        zeroize::Zeroize::zeroize(&mut self.m_hat);
    }
}

impl FoldContext {
    /// Constants for modulus N and k limbs per step: m = ⌈(|N| + 4)/(17k)⌉ + 2 steps, operands
    /// of ⌈(|N| + 17k + 3)/17⌉ limbs (X = 2^(17k+3)·N), T of ⌈(|N| + 34k + 4)/17⌉ limbs
    /// (T < 2^(r+1)·X inside a multiplication), M̂ = 2^(−17k) mod N, and the classic
    /// multiplier with the same R = 2^(17k·(m−1)).
    ///
    /// Errors: N even or N ≤ 1; k outside 1..=16.
    pub fn new(modulus: &BigUint, limbs_per_step: usize) -> Result<Self, HwError> {
        Self::with_width(modulus, modulus.bits() as usize, limbs_per_step)
    }

    /// [`new`](Self::new) sized for every modulus of up to `width_bits` bits (|N| in the formulas
    /// above), so that the multiplier of p² and that of q² have the same shape.
    ///
    /// Errors: as [`new`](Self::new), and N wider than `width_bits`.
    pub fn with_width(modulus: &BigUint, width_bits: usize, limbs_per_step: usize) -> Result<Self, HwError> {
        if modulus.bits() as usize > width_bits {
            return Err(HwError::InvalidModulus);
        }
        let shape = FoldShape::new(width_bits, limbs_per_step)?;
        let r = LIMB_BITS as usize * limbs_per_step;
        let classic = MontgomeryContext::with_digits(modulus, LIMB_BITS, shape.classic_digits())?;
        let bound = modulus << (r + 3);
        let m_hat_value = scaled_inverse(modulus, r).ok_or(HwError::InvalidModulus)?;
        let m_hat = to_digits(&m_hat_value, LIMB_BITS, shape.modulus_limbs).into_iter().map(|d| d as u64).collect();
        Ok(Self { modulus: modulus.clone(), shape, m_hat, bound, classic, multiplicand: Multiplicand::default() })
    }

    /// The same multiplier with B held as `multiplicand` for its a·b products (by default
    /// [`Multiplicand::Windows`], 24×17 products, [`super::wide`], as the accelerator does).
    pub fn with_multiplicand(mut self, multiplicand: Multiplicand) -> Self {
        self.multiplicand = multiplicand;
        self
    }

    /// How B is held for the a·b products.
    pub fn multiplicand(&self) -> Multiplicand {
        self.multiplicand
    }

    /// The modulus N.
    pub fn modulus(&self) -> &BigUint {
        &self.modulus
    }

    /// The multiplier's sizes.
    pub fn shape(&self) -> &FoldShape {
        &self.shape
    }

    /// k: limbs of the multiplier consumed per step.
    pub fn limbs_per_step(&self) -> usize {
        self.shape.limbs_per_step
    }

    /// m: steps per multiplication.
    pub fn steps(&self) -> usize {
        self.shape.steps
    }

    /// Limbs of an operand or a result.
    pub fn operand_limbs(&self) -> usize {
        self.shape.operand_limbs
    }

    /// Limbs of T, the multiplier's columns.
    pub fn columns(&self) -> usize {
        self.shape.columns
    }

    /// The exact limbs of M̂ = 2^(−17k) mod N (as many as N has).
    pub fn m_hat(&self) -> &[u64] {
        &self.m_hat
    }

    /// X = 2^(17k+3)·N: every operand and result is below it.
    pub fn bound(&self) -> &BigUint {
        &self.bound
    }

    /// The classic digit-serial multiplication with the same R = 2^(17k·(m−1)), as values: the
    /// wide REDC into the domain and the REDC out of it, which brings a value below X to [0, N]
    /// (the hardware's passes: [`ClassicPass`](super::ClassicPass)).
    pub fn classic(&self) -> &MontgomeryContext {
        &self.classic
    }

    /// x < X in exact limbs: how a constant or a value from outside enters the multiplier.
    pub fn exact(&self, x: &BigUint) -> FoldValue {
        debug_assert!(x < &self.bound, "value ≥ X");
        FoldValue { limbs: to_digits(x, LIMB_BITS, self.operand_limbs()).into_iter().map(|d| d as u64).collect() }
    }

    /// a·b·R^(−1) mod N, a representative below X, in normalized limbs.
    pub fn mul(&self, a: &FoldValue, b: &FoldValue) -> FoldValue {
        self.run(a, b, None)
    }

    /// [`mul`](Self::mul) with every step recorded.
    pub fn mul_trace(&self, a: &FoldValue, b: &FoldValue) -> FoldTrace {
        let mut steps = Vec::with_capacity(self.steps());
        let result = self.run(a, b, Some(&mut steps));
        FoldTrace { steps, result }
    }

    /// One step on T's limbs: the column sums, then their redistribution. B is given in limbs;
    /// with [`Multiplicand::Windows`] the products are those of its windows.
    pub fn step(&self, t: &[u64], a_digits: &[u64], b: &[u64]) -> Vec<u64> {
        self.step_with(t, a_digits, b, self.multiplicand.windows(b, self.operand_limbs()).as_deref())
    }

    /// [`step`](Self::step) with B's windows formed already (`None`: B in limbs).
    fn step_with(&self, t: &[u64], a_digits: &[u64], b: &[u64], b_windows: Option<&[u64]>) -> Vec<u64> {
        debug_assert_eq!(t.len(), self.columns());
        redistribute(&column_sums(t, &t[..self.limbs_per_step()], &self.m_hat, a_digits, b, b_windows))
    }

    /// T's limbs as a result: u_j = lo17(t_j) + (t_(j−1) >> 17), `operand_limbs` of them.
    pub fn normalize(&self, t: &[u64]) -> FoldValue {
        normalized(t, self.operand_limbs())
    }

    fn run(&self, a: &FoldValue, b: &FoldValue, mut trace: Option<&mut Vec<FoldStep>>) -> FoldValue {
        let k = self.limbs_per_step();
        let a_value = a.value();
        debug_assert!(a_value < self.bound && b.value() < self.bound, "operand ≥ X");
        let digits: Vec<u64> = to_digits(&a_value, LIMB_BITS, k * self.steps()).into_iter().map(|d| d as u64).collect();
        let b_windows = self.multiplicand.windows(&b.limbs, self.operand_limbs());
        let mut t = vec![0u64; self.columns()];
        for i in 0..self.steps() {
            let a_digits = &digits[i * k..(i + 1) * k];
            t = self.step_with(&t, a_digits, &b.limbs, b_windows.as_deref());
            debug_assert!(t.iter().all(|&l| l < (1 << 18) + (1 << 7)), "limb ≥ 2^18 + 2^7");
            if let Some(steps) = trace.as_deref_mut() {
                steps.push(FoldStep { a_digits: a_digits.to_vec(), t: t.clone() });
            }
        }
        let result = self.normalize(&t);
        debug_assert!(result.limbs.iter().all(|&l| l < (1 << LIMB_BITS) + 3));
        result
    }
}

/// [`DomainMultiplier`] for a folding multiplier's context: its `mul`, `exact`, `classic` (whose
/// R is its own) and `bound`.
macro_rules! fold_domain_multiplier {
    ($context:ty) => {
        impl DomainMultiplier for $context {
            type Value = FoldValue;
            fn mul(&self, a: &FoldValue, b: &FoldValue) -> FoldValue {
                <$context>::mul(self, a, b)
            }
            fn one(&self) -> FoldValue {
                self.exact(self.classic.r_mod_n())
            }
            fn in_range(&self, value: &FoldValue) -> bool {
                value.value() < self.bound
            }
            fn load(&self, x: &BigUint) -> FoldValue {
                self.exact(x)
            }
            fn integer(&self, value: &FoldValue) -> BigUint {
                value.value()
            }
        }
    };
}
pub(crate) use fold_domain_multiplier;

fold_domain_multiplier!(FoldContext);

/// A folding multiplier as the decryption datapath's hardware holds it: the sizes its classic
/// passes run on, and the constant its loop DSPs multiply the quotient by.
pub trait FoldMultiplier: DomainMultiplier<Value = FoldValue> {
    /// The sizes of its classic passes.
    fn classic_shape(&self) -> ClassicShape;
    /// M̂'s exact limbs (the delayed fold's H), as many as the modulus has.
    fn m_hat_limbs(&self) -> &[u64];
}

impl FoldMultiplier for FoldContext {
    fn classic_shape(&self) -> ClassicShape {
        ClassicShape::from(self.shape())
    }
    fn m_hat_limbs(&self) -> &[u64] {
        self.m_hat()
    }
}

/// Checks a folding multiplier's product `got` of a and b: below the bound X, in normalized limbs
/// (< 2^17 + 3), and a·b·R^(−1) mod N with R = 2^(17·`digits`), computed independently.
#[cfg(test)]
pub(crate) fn check_product(
    n: &BigUint,
    bound: &BigUint,
    digits: usize,
    a: &FoldValue,
    b: &FoldValue,
    got: FoldValue,
) -> FoldValue {
    let r = BigUint::one() << (LIMB_BITS as usize * digits);
    let r_inv = crate::prime::mod_inverse(&(&r % n), n).unwrap();
    assert!(&got.value() < bound, "result ≥ X");
    assert_eq!(got.value() % n, a.value() * b.value() % n * r_inv % n);
    assert!(got.limbs().iter().all(|&l| l < (1 << LIMB_BITS) + 3));
    got
}

/// Multiplies, with `check`, every pair of operands at the edges of a folding multiplier's range
/// (0, 1, N − 1, N, X − 1) and of redundant ones as results come out (squarings of X − 1).
#[cfg(test)]
pub(crate) fn check_edge_operands(
    n: &BigUint,
    bound: &BigUint,
    exact: impl Fn(&BigUint) -> FoldValue,
    check: impl Fn(&FoldValue, &FoldValue) -> FoldValue,
) {
    let top = bound - 1u32;
    let mut values: Vec<FoldValue> =
        [BigUint::zero(), BigUint::one(), n - 1u32, n.clone(), top.clone()].iter().map(&exact).collect();
    let mut x = exact(&top);
    for _ in 0..3 {
        x = check(&x, &x);
        values.push(x.clone());
    }
    for a in &values {
        for b in &values {
            check(a, b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prime::random_odd;
    use num_bigint::RandBigInt;
    use proptest::prelude::*;
    use rand::{rngs::StdRng, SeedableRng};

    fn check(ctx: &FoldContext, a: &FoldValue, b: &FoldValue) -> FoldValue {
        check_product(ctx.modulus(), ctx.bound(), ctx.shape().classic_digits(), a, b, ctx.mul(a, b))
    }

    #[test]
    fn sizes_for_a_2048_bit_modulus() {
        let mut rng = StdRng::seed_from_u64(1);
        let n = random_odd(2048, &mut rng);
        // (k, steps, operand limbs, columns)
        for (k, steps, operands, columns) in
            [(1, 123, 122, 123), (4, 33, 125, 129), (6, 23, 127, 133), (8, 18, 129, 137)]
        {
            let ctx = FoldContext::new(&n, k).unwrap();
            assert_eq!((ctx.steps(), ctx.operand_limbs(), ctx.columns()), (steps, operands, columns), "k = {k}");
            assert_eq!(ctx.m_hat().len(), 121);
        }
    }

    #[test]
    fn m_hat_is_the_inverse_of_two_to_the_r() {
        let mut rng = StdRng::seed_from_u64(2);
        for k in 1..=MAX_LIMBS_PER_STEP {
            let n = random_odd(300, &mut rng);
            let ctx = FoldContext::new(&n, k).unwrap();
            let m_hat = limbs_value(ctx.m_hat());
            assert!(m_hat < n);
            assert!((m_hat << (17 * k)) % &n == BigUint::one());
        }
    }

    #[test]
    fn rejects_bad_parameters() {
        let n = BigUint::from(1_000_003u32);
        assert!(FoldContext::new(&n, 0).is_err());
        assert!(FoldContext::new(&n, MAX_LIMBS_PER_STEP + 1).is_err());
        assert_eq!(FoldContext::new(&BigUint::from(100u32), 2), Err(HwError::InvalidModulus));
    }

    const MULTIPLICANDS: [Multiplicand; 2] = [Multiplicand::Limbs, Multiplicand::Windows];

    #[test]
    fn edge_operands_stay_in_range_at_every_k() {
        let mut rng = StdRng::seed_from_u64(3);
        for (k, multiplicand) in (1..=MAX_LIMBS_PER_STEP).flat_map(|k| MULTIPLICANDS.map(|m| (k, m))) {
            for bits in [2u64, 17, 100, 521] {
                let n = random_odd(bits, &mut rng);
                let ctx = FoldContext::new(&n, k).unwrap().with_multiplicand(multiplicand);
                check_edge_operands(&n, ctx.bound(), |x| ctx.exact(x), |a, b| check(&ctx, a, b));
            }
        }
    }

    #[test]
    fn trace_replays_from_its_digits() {
        let mut rng = StdRng::seed_from_u64(4);
        for (k, multiplicand) in [1usize, 3, 4, 8].into_iter().flat_map(|k| MULTIPLICANDS.map(|m| (k, m))) {
            let n = random_odd(400, &mut rng);
            let ctx = FoldContext::new(&n, k).unwrap().with_multiplicand(multiplicand);
            let a = ctx.exact(&rng.gen_biguint_below(ctx.bound()));
            let b = ctx.mul(&ctx.exact(&rng.gen_biguint_below(ctx.bound())), &a);
            let trace = ctx.mul_trace(&a, &b);
            assert_eq!(trace.steps.len(), ctx.steps());
            assert_eq!(trace.result, ctx.mul(&a, &b));
            // The value recurrence T ← T_high + T_low·M̂ + A_i·B, on the recorded limbs.
            let m_hat = limbs_value(ctx.m_hat());
            let mut t = vec![0u64; ctx.columns()];
            for (i, step) in trace.steps.iter().enumerate() {
                let t_low = limbs_value(&t[..k]);
                let t_high = limbs_value(&t[k..]);
                let a_chunk = limbs_value(&step.a_digits);
                assert_eq!(limbs_value(&step.t), t_high + t_low * &m_hat + a_chunk * b.value(), "step {i}");
                t = step.t.clone();
            }
            // The last chunk of A is 0: A < X ≤ R/2.
            assert!(trace.steps.last().unwrap().a_digits.iter().all(|&d| d == 0));
        }
    }

    #[test]
    fn classic_redc_leaves_the_domain_at_most_n() {
        let mut rng = StdRng::seed_from_u64(5);
        for k in [1usize, 4, 8] {
            let n = random_odd(256, &mut rng);
            let ctx = FoldContext::new(&n, k).unwrap();
            let x = rng.gen_biguint_below(&n);
            let one = ctx.exact(ctx.classic().r_mod_n());
            let r2 = ctx.exact(ctx.classic().r2_mod_n());
            let x_mont = ctx.mul(&ctx.exact(&x), &r2);
            // A chain of multiplications by 1 (in the domain) keeps the value.
            let mut y = x_mont.clone();
            for _ in 0..4 {
                y = ctx.mul(&y, &one);
            }
            let out = ctx.classic().redc_wide(&y.value());
            assert!(out <= n);
            assert_eq!(out, x);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn fold_mul_property(seed in any::<u64>(), bits in 2u64..600, k in 1usize..=MAX_LIMBS_PER_STEP, wide in any::<bool>()) {
            let mut rng = StdRng::seed_from_u64(seed);
            let n = random_odd(bits, &mut rng);
            let ctx = FoldContext::new(&n, k).unwrap().with_multiplicand(MULTIPLICANDS[usize::from(wide)]);
            let a = ctx.exact(&rng.gen_biguint_below(ctx.bound()));
            let b = ctx.exact(&rng.gen_biguint_below(ctx.bound()));
            let ab = check(&ctx, &a, &b);
            check(&ctx, &ab, &ab);
        }
    }
}
