//! Exponentiation inside the Montgomery domain, with the schedules the hardware can run.
//!
//! The exponent length L (`exp_bits`) is fixed by the key size, not by the exponent: leading zero
//! bits are processed like any other, so the work (and the trace's shape) depends only on
//! (schedule, L) — docs/background.md#constant-time. Every value stays in [0, 2N) (Walter's bound,
//! see [`montgomery`](super::montgomery)), so no step needs a judgment.

use std::ops::Range;

use num_bigint::BigUint;

use super::{HwError, MontgomeryContext};

/// A multiplier in a Montgomery domain, as the exponentiation sees it: the classic digit-serial one
/// ([`MontgomeryContext`], values are integers in [0, 2N)) or the k-limb folding one
/// ([`FoldContext`](super::FoldContext), values are its redundant limbs). The schedules are
/// written once over this trait.
pub trait DomainMultiplier {
    /// A value in the domain, in the form the multiplier's next operation takes it.
    type Value: Clone + PartialEq + std::fmt::Debug;
    /// a·b·R^(−1) mod N.
    fn mul(&self, a: &Self::Value, b: &Self::Value) -> Self::Value;
    /// R mod N: the domain's 1.
    fn one(&self) -> Self::Value;
    /// Whether a value lies in the range its operations keep (for debug assertions).
    fn in_range(&self, value: &Self::Value) -> bool;
    /// An integer in the range, as the multiplier takes it from outside (a constant, the
    /// ciphertext reduced by the classic multiplier).
    fn load(&self, x: &BigUint) -> Self::Value;
    /// The integer a value stands for (not reduced).
    fn integer(&self, value: &Self::Value) -> BigUint;
}

impl DomainMultiplier for MontgomeryContext {
    type Value = BigUint;
    fn mul(&self, a: &BigUint, b: &BigUint) -> BigUint {
        self.mont_mul(a, b)
    }
    fn one(&self) -> BigUint {
        self.r_mod_n().clone()
    }
    fn in_range(&self, value: &BigUint) -> bool {
        value < &(self.modulus() << 1u32)
    }
    fn load(&self, x: &BigUint) -> BigUint {
        x.clone()
    }
    fn integer(&self, value: &BigUint) -> BigUint {
        value.clone()
    }
}

/// Largest supported window width (a table of 2^16 entries).
pub const MAX_WINDOW_BITS: u32 = 16;

/// How the exponent bits are turned into Montgomery multiplications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// Right-to-left binary (MESA): per bit, acc·sq and sq² are independent and run in parallel.
    /// The L bits are cut into `segments` consecutive chunks (see [`segment_ranges`]); chunk j is
    /// handled by pipeline stage j, so `segments` ciphertexts can be in flight.
    RightToLeft {
        /// Number of pipeline stages, 1..=L.
        segments: usize,
    },
    /// Left-to-right fixed window of `window_bits` bits over a table of 2^w powers; one
    /// multiplication per window, zero windows included (constant time).
    FixedWindow {
        /// Window width w, 1..=[`MAX_WINDOW_BITS`].
        window_bits: u32,
    },
}

impl Schedule {
    /// Checks that the schedule applies to an exponent of `exp_bits` bits (L ≥ 1).
    pub fn validate(&self, exp_bits: usize) -> Result<(), HwError> {
        if exp_bits == 0 {
            return Err(HwError::InvalidSchedule("exponent length must be at least 1 bit".into()));
        }
        match *self {
            Schedule::RightToLeft { segments } if segments == 0 || segments > exp_bits => {
                Err(HwError::InvalidSchedule(format!(
                    "{segments} segments for a {exp_bits}-bit exponent (need 1..={exp_bits})"
                )))
            }
            Schedule::FixedWindow { window_bits } if !(1..=MAX_WINDOW_BITS).contains(&window_bits) => {
                Err(HwError::InvalidSchedule(format!("window of {window_bits} bits (need 1..={MAX_WINDOW_BITS})")))
            }
            _ => Ok(()),
        }
    }
}

/// The bit ranges of the pipeline segments, LSB first: L = `exp_bits` split into `segments`
/// chunks as equal as possible, the first L mod S chunks (the least significant ones) one bit
/// longer than the others. Requires 1 ≤ segments ≤ L.
pub fn segment_ranges(exp_bits: usize, segments: usize) -> Vec<Range<usize>> {
    assert!((1..=exp_bits).contains(&segments), "segments must be in 1..=exp_bits");
    let (base, extra) = (exp_bits / segments, exp_bits % segments);
    let mut start = 0;
    (0..segments)
        .map(|j| {
            let len = base + usize::from(j < extra);
            let range = start..start + len;
            start += len;
            range
        })
        .collect()
}

/// (total Montgomery multiplications, length of the chain of dependent multiplications) for an
/// exponent of `exp_bits` bits. Depends on nothing else: not on the exponent's bits, not on the base.
///
/// - RightToLeft: 2 per bit (the product acc·sq is always computed and then selected, and the
///   squaring is computed even at the last bit, so every stage is identical); the pair of one bit
///   runs in parallel, so the chain is L long.
/// - FixedWindow: 2^w − 2 table multiplications (`T[2]` … `T[2^w − 1]`, each from the previous), then
///   w squarings and one multiplication for each of the ⌈L/w⌉ − 1 windows after the top one; every
///   multiplication depends on the previous one, so the chain is the total.
pub fn schedule_cost(schedule: Schedule, exp_bits: usize) -> Result<(usize, usize), HwError> {
    schedule.validate(exp_bits)?;
    Ok(match schedule {
        Schedule::RightToLeft { .. } => (2 * exp_bits, exp_bits),
        Schedule::FixedWindow { window_bits } => {
            let w = window_bits as usize;
            let windows = exp_bits.div_ceil(w);
            let total = (1usize << w) - 2 + (windows - 1) * (w + 1);
            (total, total)
        }
    })
}

/// Right-to-left state: the accumulator and the running square.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtlState<V = BigUint> {
    /// base^(bits processed so far), Montgomery form.
    pub acc: V,
    /// base^(2^(bits processed so far)), Montgomery form.
    pub sq: V,
}

/// One right-to-left bit step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtlStep<V = BigUint> {
    /// The exponent bit.
    pub bit: bool,
    /// mont_mul(acc, sq), computed whatever the bit.
    pub product: V,
    /// acc after the step: `product` if the bit is 1, else unchanged.
    pub acc: V,
    /// sq after the step: mont_mul(sq, sq).
    pub sq: V,
}

/// One left-to-right window step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowStep<V = BigUint> {
    /// The window's value (index into the table).
    pub value: u32,
    /// acc after each of the w squarings (empty for the top window, which only loads `T[value]`).
    pub squares: Vec<V>,
    /// acc after the window: mont_mul(last square, `T[value]`) (or `T[value]` for the top window).
    pub acc: V,
}

/// The per-step states of an exponentiation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExpStates<V = BigUint> {
    /// Right-to-left binary.
    RightToLeft {
        /// Bit range of each segment, LSB first ([`segment_ranges`]).
        segments: Vec<Range<usize>>,
        /// (acc, sq) at every segment boundary: entry j is the input of stage j, the last entry
        /// the output of the last stage (S + 1 entries).
        boundaries: Vec<RtlState<V>>,
        /// One entry per exponent bit, LSB first.
        bits: Vec<RtlStep<V>>,
    },
    /// Left-to-right fixed window.
    FixedWindow {
        /// `T[j]` = base^j in Montgomery form, j < 2^w (`T[0]` = R mod N, `T[1]` = base).
        table: Vec<V>,
        /// One entry per window, most significant first.
        windows: Vec<WindowStep<V>>,
    },
}

/// Result and trace of [`mont_exp`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpTrace<V = BigUint> {
    /// base^e in Montgomery form, in [0, 2N).
    pub result: V,
    /// Montgomery multiplications performed (equals [`schedule_cost`]'s first value).
    pub multiplications: usize,
    /// Length of the chain of dependent multiplications, parallel pairs counted once (equals
    /// [`schedule_cost`]'s second value).
    pub dependent_steps: usize,
    /// Every intermediate value.
    pub states: ExpStates<V>,
}

/// Counts the multiplications of a schedule as they are performed.
struct Counting<'a, M> {
    multiplier: &'a M,
    count: usize,
}

impl<M: DomainMultiplier> Counting<'_, M> {
    fn mul(&mut self, a: &M::Value, b: &M::Value) -> M::Value {
        self.count += 1;
        let product = self.multiplier.mul(a, b);
        debug_assert!(self.multiplier.in_range(&product), "product out of range");
        product
    }
}

/// base^exponent in the Montgomery domain of `ctx`: `base` is in Montgomery form (< 2N), so is the
/// result. The exponent is processed as exactly `exp_bits` bits.
///
/// Errors: exponent ≥ 2^exp_bits, or a schedule that does not fit `exp_bits`.
pub fn mont_exp(
    ctx: &MontgomeryContext,
    base: &BigUint,
    exponent: &BigUint,
    exp_bits: usize,
    schedule: Schedule,
) -> Result<ExpTrace, HwError> {
    exp_in_domain(ctx, base, exponent, exp_bits, schedule)
}

/// [`mont_exp`] over any [`DomainMultiplier`]: the same schedule, the same sequence of
/// multiplications, on that multiplier's values.
pub fn exp_in_domain<M: DomainMultiplier>(
    multiplier: &M,
    base: &M::Value,
    exponent: &BigUint,
    exp_bits: usize,
    schedule: Schedule,
) -> Result<ExpTrace<M::Value>, HwError> {
    schedule.validate(exp_bits)?;
    if exponent.bits() > exp_bits as u64 {
        return Err(HwError::ExponentTooLong { exponent_bits: exponent.bits(), exp_bits });
    }
    debug_assert!(multiplier.in_range(base), "base out of range");
    let mut m = Counting { multiplier, count: 0 };
    let (result, dependent_steps, states) = match schedule {
        Schedule::RightToLeft { segments } => {
            let segments = segment_ranges(exp_bits, segments);
            let mut state = RtlState { acc: multiplier.one(), sq: base.clone() };
            let mut boundaries = vec![state.clone()];
            let mut bits = Vec::with_capacity(exp_bits);
            for range in &segments {
                for i in range.clone() {
                    let bit = exponent.bit(i as u64);
                    // Both products are always computed (they are independent: one dependent step).
                    let product = m.mul(&state.acc, &state.sq);
                    let sq = m.mul(&state.sq, &state.sq);
                    let acc = if bit { product.clone() } else { state.acc };
                    state = RtlState { acc, sq };
                    bits.push(RtlStep { bit, product, acc: state.acc.clone(), sq: state.sq.clone() });
                }
                boundaries.push(state.clone());
            }
            let states = ExpStates::RightToLeft { segments, boundaries, bits };
            (state.acc, exp_bits, states)
        }
        Schedule::FixedWindow { window_bits } => {
            let w = window_bits as usize;
            let mut table = Vec::with_capacity(1 << w);
            table.push(multiplier.one());
            table.push(base.clone());
            for j in 2..1usize << w {
                let next = m.mul(&table[j - 1], base);
                table.push(next);
            }
            let windows_count = exp_bits.div_ceil(w);
            let window_value =
                |j: usize| -> u32 { (0..w).fold(0u32, |v, b| v | (u32::from(exponent.bit((j * w + b) as u64)) << b)) };
            let mut windows = Vec::with_capacity(windows_count);
            let top = window_value(windows_count - 1);
            let mut acc = table[top as usize].clone();
            windows.push(WindowStep { value: top, squares: Vec::new(), acc: acc.clone() });
            for j in (0..windows_count - 1).rev() {
                let value = window_value(j);
                let mut squares = Vec::with_capacity(w);
                for _ in 0..w {
                    acc = m.mul(&acc, &acc);
                    squares.push(acc.clone());
                }
                // Multiplied in even when the window is 0 (by T[0] = R mod N): constant time.
                acc = m.mul(&acc, &table[value as usize]);
                windows.push(WindowStep { value, squares, acc: acc.clone() });
            }
            // Every multiplication depends on the one before it.
            let dependent = m.count;
            (acc, dependent, ExpStates::FixedWindow { table, windows })
        }
    };
    Ok(ExpTrace { result, multiplications: m.count, dependent_steps, states })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prime::random_odd;
    use num_bigint::RandBigInt;
    use num_traits::{One, Zero};
    use proptest::prelude::*;
    use rand::{rngs::StdRng, SeedableRng};

    fn all_schedules() -> Vec<Schedule> {
        let mut s: Vec<Schedule> =
            [1usize, 2, 3, 7].iter().map(|&segments| Schedule::RightToLeft { segments }).collect();
        s.extend((1..=6).map(|window_bits| Schedule::FixedWindow { window_bits }));
        s
    }

    /// Runs the exponentiation from and back to ordinary residues and checks it against modpow.
    fn check(ctx: &MontgomeryContext, base: &BigUint, e: &BigUint, exp_bits: usize, s: Schedule) {
        let n = ctx.modulus();
        let trace = mont_exp(ctx, &ctx.to_montgomery(base), e, exp_bits, s).unwrap();
        assert!(trace.result < n << 1u32);
        // Leaving the domain gives [0, N]: N for a value ≡ 0 (a base sharing N's factors).
        let x = ctx.from_montgomery(&trace.result);
        assert!(&x <= n);
        assert_eq!(x % n, base.modpow(e, n), "{s:?}, L = {exp_bits}, e = {e}");
        let cost = schedule_cost(s, exp_bits).unwrap();
        assert_eq!((trace.multiplications, trace.dependent_steps), cost);
    }

    #[test]
    fn segment_split_rule() {
        assert_eq!(segment_ranges(10, 3), vec![0..4, 4..7, 7..10]);
        assert_eq!(segment_ranges(7, 7), (0..7).map(|i| i..i + 1).collect::<Vec<_>>());
        for l in 1..40 {
            for s in 1..=l {
                let r = segment_ranges(l, s);
                assert_eq!(r.len(), s);
                assert_eq!(r[0].start, 0);
                assert_eq!(r[s - 1].end, l);
                assert!(r.windows(2).all(|p| p[0].end == p[1].start));
                let (min, max) = (r.iter().map(|x| x.len()).min(), r.iter().map(|x| x.len()).max());
                assert!(max.unwrap() - min.unwrap() <= 1);
            }
        }
    }

    #[test]
    fn validation() {
        let ctx = MontgomeryContext::new(&BigUint::from(1_000_003u32), 17).unwrap();
        let b = ctx.r_mod_n().clone();
        let rtl = |segments| Schedule::RightToLeft { segments };
        assert!(matches!(mont_exp(&ctx, &b, &BigUint::one(), 0, rtl(1)), Err(HwError::InvalidSchedule(_))));
        assert!(matches!(mont_exp(&ctx, &b, &BigUint::one(), 4, rtl(0)), Err(HwError::InvalidSchedule(_))));
        assert!(matches!(mont_exp(&ctx, &b, &BigUint::one(), 4, rtl(5)), Err(HwError::InvalidSchedule(_))));
        for w in [0, MAX_WINDOW_BITS + 1] {
            let s = Schedule::FixedWindow { window_bits: w };
            assert!(matches!(schedule_cost(s, 8), Err(HwError::InvalidSchedule(_))));
        }
        assert_eq!(
            mont_exp(&ctx, &b, &BigUint::from(16u32), 4, rtl(2)),
            Err(HwError::ExponentTooLong { exponent_bits: 5, exp_bits: 4 })
        );
        assert!(mont_exp(&ctx, &b, &BigUint::from(15u32), 4, rtl(2)).is_ok());
    }

    #[test]
    fn both_schedules_match_modpow() {
        let mut rng = StdRng::seed_from_u64(20);
        for (bits, k, exp_bits) in
            [(64u64, 8u32, 64usize), (100, 17, 37), (256, 24, 100), (256, 68, 128), (512, 64, 61), (1024, 128, 40)]
        {
            let n = random_odd(bits, &mut rng);
            let ctx = MontgomeryContext::new(&n, k).unwrap();
            let all_ones = (BigUint::one() << exp_bits) - 1u32;
            let top_bit = BigUint::one() << (exp_bits - 1);
            let exponents = [
                rng.gen_biguint(exp_bits as u64),
                all_ones,
                BigUint::zero(),
                BigUint::one(),
                top_bit,
                BigUint::one() << (exp_bits / 2),
            ];
            let bases = [BigUint::zero(), BigUint::one(), &n - 1u32, rng.gen_biguint_below(&n)];
            for s in all_schedules() {
                for e in &exponents {
                    for base in &bases {
                        check(&ctx, base, e, exp_bits, s);
                    }
                }
            }
        }
    }

    #[test]
    fn short_exponents_and_wide_windows() {
        // L smaller than the window and than the segment count limit.
        let mut rng = StdRng::seed_from_u64(21);
        let n = random_odd(80, &mut rng);
        let ctx = MontgomeryContext::new(&n, 17).unwrap();
        let base = rng.gen_biguint_below(&n);
        for exp_bits in 1..=9usize {
            for e in 0u32..(1 << exp_bits).min(40) {
                let e = BigUint::from(e);
                for w in 1..=6 {
                    check(&ctx, &base, &e, exp_bits, Schedule::FixedWindow { window_bits: w });
                }
                for s in [1, 2, 3, 7].into_iter().filter(|&s| s <= exp_bits) {
                    check(&ctx, &base, &e, exp_bits, Schedule::RightToLeft { segments: s });
                }
            }
        }
    }

    fn shape(states: &ExpStates) -> Vec<usize> {
        match states {
            ExpStates::RightToLeft { segments, boundaries, bits } => {
                let mut v = vec![boundaries.len(), bits.len()];
                v.extend(segments.iter().map(|r| r.len()));
                v
            }
            ExpStates::FixedWindow { table, windows } => {
                let mut v = vec![table.len(), windows.len()];
                v.extend(windows.iter().map(|w| w.squares.len()));
                v
            }
        }
    }

    #[test]
    fn cost_is_independent_of_exponent_and_base() {
        let mut rng = StdRng::seed_from_u64(22);
        let n = random_odd(192, &mut rng);
        let ctx = MontgomeryContext::new(&n, 24).unwrap();
        let exp_bits = 97;
        for s in all_schedules() {
            let e1 = (BigUint::one() << (exp_bits - 1)) - 1u32; // leading zero, then all ones
            let e2 = BigUint::one() << (exp_bits - 1); // one bit
            let b1 = ctx.to_montgomery(&rng.gen_biguint_below(&n));
            let t1 = mont_exp(&ctx, &b1, &e1, exp_bits, s).unwrap();
            let t2 = mont_exp(&ctx, ctx.r_mod_n(), &e2, exp_bits, s).unwrap();
            let t3 = mont_exp(&ctx, &BigUint::zero(), &BigUint::zero(), exp_bits, s).unwrap();
            for t in [&t2, &t3] {
                assert_eq!(t.multiplications, t1.multiplications, "{s:?}");
                assert_eq!(t.dependent_steps, t1.dependent_steps, "{s:?}");
                assert_eq!(shape(&t.states), shape(&t1.states), "{s:?}");
            }
            assert_eq!((t1.multiplications, t1.dependent_steps), schedule_cost(s, exp_bits).unwrap());
        }
        // Known values: 1,024-bit exponent.
        assert_eq!(schedule_cost(Schedule::RightToLeft { segments: 8 }, 1024), Ok((2048, 1024)));
        assert_eq!(schedule_cost(Schedule::FixedWindow { window_bits: 4 }, 1024), Ok((14 + 255 * 5, 14 + 255 * 5)));
    }

    #[test]
    fn right_to_left_trace_is_consistent() {
        let mut rng = StdRng::seed_from_u64(23);
        let n = random_odd(128, &mut rng);
        let ctx = MontgomeryContext::new(&n, 17).unwrap();
        let base = ctx.to_montgomery(&rng.gen_biguint_below(&n));
        let e = rng.gen_biguint(50);
        let t = mont_exp(&ctx, &base, &e, 50, Schedule::RightToLeft { segments: 3 }).unwrap();
        let ExpStates::RightToLeft { segments, boundaries, bits } = &t.states else { panic!("wrong states") };
        assert_eq!(boundaries.len(), 4);
        assert_eq!(boundaries[0], RtlState { acc: ctx.r_mod_n().clone(), sq: base.clone() });
        for (j, range) in segments.iter().enumerate() {
            let mut state = boundaries[j].clone();
            for i in range.clone() {
                let step = &bits[i];
                assert_eq!(step.bit, e.bit(i as u64));
                assert_eq!(step.product, ctx.mont_mul(&state.acc, &state.sq));
                assert_eq!(step.sq, ctx.mont_mul(&state.sq, &state.sq));
                state = RtlState { acc: step.acc.clone(), sq: step.sq.clone() };
            }
            assert_eq!(state, boundaries[j + 1], "stage {j} output");
        }
        assert_eq!(t.result, boundaries[3].acc);
    }

    #[test]
    fn fixed_window_trace_is_consistent() {
        let mut rng = StdRng::seed_from_u64(24);
        let n = random_odd(128, &mut rng);
        let ctx = MontgomeryContext::new(&n, 24).unwrap();
        let base = ctx.to_montgomery(&rng.gen_biguint_below(&n));
        let e = rng.gen_biguint(50);
        let t = mont_exp(&ctx, &base, &e, 50, Schedule::FixedWindow { window_bits: 4 }).unwrap();
        let ExpStates::FixedWindow { table, windows } = &t.states else { panic!("wrong states") };
        assert_eq!(table.len(), 16);
        let plain = ctx.from_montgomery(&base);
        for (j, entry) in table.iter().enumerate() {
            assert!(entry < &(&n << 1u32));
            assert_eq!(ctx.from_montgomery(entry), plain.modpow(&BigUint::from(j), &n));
        }
        assert_eq!(windows.len(), 13); // 50 bits padded to 52
        let digits: Vec<u32> = windows.iter().map(|w| w.value).collect();
        let rebuilt = digits.iter().fold(BigUint::zero(), |acc, &d| (acc << 4u32) + d);
        assert_eq!(rebuilt, e);
        assert_eq!(t.result, windows.last().unwrap().acc);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn schedules_agree(seed in any::<u64>(), bits in 2u64..300, k in 8u32..=128,
                           exp_bits in 1usize..80, segments in 1usize..10, w in 1u32..=6) {
            let mut rng = StdRng::seed_from_u64(seed);
            let n = random_odd(bits, &mut rng);
            let ctx = MontgomeryContext::new(&n, k).unwrap();
            let base = rng.gen_biguint_below(&n);
            let e = rng.gen_biguint(exp_bits as u64);
            check(&ctx, &base, &e, exp_bits, Schedule::FixedWindow { window_bits: w });
            check(&ctx, &base, &e, exp_bits, Schedule::RightToLeft { segments: segments.min(exp_bits) });
        }
    }
}
