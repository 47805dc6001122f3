//! The eCRT sum and its single final correction (the golden model's `EcrtTrace::{sum, corrected,
//! result}`): m = term_p + term_q, minus n when that is ≥ n.
//!
//! Serial over the S limbs, least significant first, one limb per cycle: the redundant limbs of
//! both terms are added with a carry into exact digits d_j, registered, and d_j − n_j − borrow is
//! formed from the register in the next cycle, so that no path chains the two adders: S + 1
//! steps. After them the last borrow says whether the sum was below n (the sum is < 2n < R, so no
//! carry leaves the top). The digits of both candidates shift into the terms' own registers, so
//! the choice costs a multiplexer on one limb, not a copy.
//!
//! No net reaches every limb: the limbs' selects (capture a term, shift) are registers, decided
//! the cycle before, in copies ([`crate::fanout`]), each set of at most
//! [`MAX_REGISTER_FANOUT`](crate::part::MAX_REGISTER_FANOUT) copies by logic of its own, on a
//! copy of the state. A term is announced a cycle ahead (`capture_*_next`); a take shifts the
//! limbs in the cycle after it, the limb handed out read from one limb up meanwhile; the modulus
//! follows n in every cycle it does not shift.
use crate::config::STEP_BITS;
use crate::fanout::replicas::{ReplicaSets, Replicas};
use crate::fanout::{copies, in_sets, LIMBS_PER_COPY};
use crate::many;
use crate::multiplier::mul_add::{X_BITS, Y_BITS};
use rust_hdl::prelude::*;

/// The correction's state.
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum CorrectionState {
    Idle,
    Running,
    Holding,
}

/// Sum, compare and correct, then hand the result out limb by limb.
#[derive(LogicBlock)]
pub struct Correction {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// `term` is term_p in the next cycle: store it then.
    pub capture_p_next: Signal<In, bool>,
    /// `term` is term_q in the next cycle: store it then.
    pub capture_q_next: Signal<In, bool>,
    /// A term, redundant limbs, < n.
    pub term: Vec<Signal<In, Bits<X_BITS>>>,
    /// The public modulus n, exact limbs (read at `start`).
    pub n: Vec<Signal<In, Bits<Y_BITS>>>,
    /// Begin: both terms are stored.
    pub start: Signal<In, bool>,
    /// The result is ready: `limb` is its lowest limb not yet taken.
    pub valid: Signal<Out, bool>,
    /// The current limb of m, exact.
    pub limb: Signal<Out, Bits<Y_BITS>>,
    /// Take `limb` (while `valid`); after S takes the block is idle.
    pub take: Signal<In, bool>,
    /// Summing or holding a result.
    pub busy: Signal<Out, bool>,
    digits: Constant<Bits<STEP_BITS>>,
    state: DFF<CorrectionState>,
    // term_p, then the digits of the sum; term_q, then the digits of sum − n.
    sum: Vec<DFF<Bits<X_BITS>>>,
    diff: Vec<DFF<Bits<X_BITS>>>,
    modulus: Vec<DFF<Bits<Y_BITS>>>,
    carry: DFF<Bits<3>>,
    borrow: DFF<bool>,
    count: DFF<Bits<STEP_BITS>>,
    low_p: Signal<Local, Bits<X_BITS>>,
    low_q: Signal<Local, Bits<X_BITS>>,
    low_n: Signal<Local, Bits<Y_BITS>>,
    // p_0 + q_0 + carry; the previous step's digit d (its low 17 bits) and n's limb inverted
    // (2^17 − 1 − n_j), registered; d + 2^17 − n_j − borrow as d + n_inverted + !borrow, two
    // operands and a carry in, so one LUT a bit before the carry chain (bit 17 clear: a borrow).
    step_sum: Signal<Local, Bits<20>>,
    digit: DFF<Bits<Y_BITS>>,
    n_inverted: DFF<Bits<Y_BITS>>,
    step_diff: Signal<Local, Bits<18>>,
    no_borrow: Signal<Local, Bits<18>>,
    // Whether the limbs shift in the next cycle (the sum is running, or a limb is taken), in
    // copies: one per limb of the terms below the top (two registers a limb), one per
    // LIMBS_PER_COPY of those limbs of the modulus, in sets of at most MAX_REGISTER_FANOUT. Each
    // set's decision is a LUT of its own, on a copy of the state (the terms' sets first): one
    // decision would drive every copy. The captures: a copy per LIMBS_PER_COPY limbs, in sets,
    // each set's gated by a copy of the state of its own (the last copies): a term comes only
    // while the correction is idle, so the gate changes nothing but which LUT drives the set.
    shift_state: Replicas<CorrectionState>,
    last_step: Signal<Local, bool>,
    shift_next: Vec<Signal<Local, bool>>,
    shift_terms: ReplicaSets<bool>,
    shift_modulus: ReplicaSets<bool>,
    capture_p: ReplicaSets<bool>,
    capture_q: ReplicaSets<bool>,
    // A limb was taken in the previous cycle and the limbs shift now: the limb handed out is the
    // one above.
    taken: DFF<bool>,
    out_p: Signal<Local, Bits<Y_BITS>>,
    out_q: Signal<Local, Bits<Y_BITS>>,
}

impl Correction {
    /// A correction over `digits` limbs.
    pub fn new(digits: usize) -> Self {
        // The top limbs take the running sum's digits, not a shift.
        let (shift_terms, shift_modulus) = (in_sets(digits - 1, 1), in_sets(copies(digits - 1), 1));
        let (capture_p, capture_q) = (in_sets(copies(digits), 1), in_sets(copies(digits), 1));
        let decisions = shift_terms.d.len() + shift_modulus.d.len();
        Correction {
            clock: Default::default(),
            capture_p_next: Default::default(),
            capture_q_next: Default::default(),
            term: many(digits),
            n: many(digits),
            start: Default::default(),
            valid: Default::default(),
            limb: Default::default(),
            take: Default::default(),
            busy: Default::default(),
            digits: Constant::new((digits as u64).into()),
            state: Default::default(),
            sum: many(digits),
            diff: many(digits),
            modulus: many(digits),
            carry: Default::default(),
            borrow: Default::default(),
            count: Default::default(),
            low_p: Default::default(),
            low_q: Default::default(),
            low_n: Default::default(),
            step_sum: Default::default(),
            digit: Default::default(),
            n_inverted: Default::default(),
            step_diff: Default::default(),
            no_borrow: Default::default(),
            shift_state: Replicas::new(decisions + capture_p.d.len()),
            last_step: Default::default(),
            shift_next: many(decisions),
            shift_terms,
            shift_modulus,
            capture_p,
            capture_q,
            taken: Default::default(),
            out_p: Default::default(),
            out_q: Default::default(),
        }
    }
}

impl Logic for Correction {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, carry, borrow, count, taken, digit, n_inverted);
        clock!(self, clock, shift_state, shift_terms, shift_modulus, capture_p, capture_q);
        for j in 0..self.sum.len() {
            self.sum[j].clock.next = self.clock.val();
            self.diff[j].clock.next = self.clock.val();
            self.modulus[j].clock.next = self.clock.val();
            self.sum[j].d.next = self.sum[j].q.val();
            self.diff[j].d.next = self.diff[j].q.val();
            self.modulus[j].d.next = self.n[j].val();
        }
        for j in 0..1 {
            self.low_p.next = self.sum[j].q.val();
            self.low_q.next = self.diff[j].q.val();
            self.low_n.next = self.modulus[j].q.val();
        }
        self.step_sum.next = bit_cast::<20, X_BITS>(self.low_p.val())
            + bit_cast::<20, X_BITS>(self.low_q.val())
            + bit_cast::<20, 3>(self.carry.q.val());
        self.no_borrow.next = 1.into();
        if self.borrow.q.val() {
            self.no_borrow.next = 0.into();
        }
        self.digit.d.next = self.step_sum.val().get_bits::<Y_BITS>(0);
        self.n_inverted.d.next = !self.low_n.val();
        self.step_diff.next = bit_cast::<18, Y_BITS>(self.digit.q.val())
            + bit_cast::<18, Y_BITS>(self.n_inverted.q.val())
            + self.no_borrow.val();
        self.valid.next = self.state.q.val() == CorrectionState::Holding;
        self.busy.next = self.state.q.val() != CorrectionState::Idle;
        // While holding, the borrow says which candidate is m: the sum when it was below n.
        self.out_p.next = self.low_p.val().get_bits::<Y_BITS>(0);
        self.out_q.next = self.low_q.val().get_bits::<Y_BITS>(0);
        if self.taken.q.val() {
            for j in 1..2 {
                self.out_p.next = self.sum[j].q.val().get_bits::<Y_BITS>(0);
                self.out_q.next = self.diff[j].q.val().get_bits::<Y_BITS>(0);
            }
        }
        self.limb.next = self.out_q.val();
        if self.borrow.q.val() {
            self.limb.next = self.out_p.val();
        }
        self.taken.d.next = false;
        self.last_step.next = self.count.q.val() == self.digits.val();
        match self.state.q.val() {
            CorrectionState::Idle => {
                if self.start.val() {
                    self.carry.d.next = 0.into();
                    self.borrow.d.next = false;
                    self.count.d.next = 0.into();
                    self.state.d.next = CorrectionState::Running;
                }
            }
            CorrectionState::Running => {
                // Step i sums limb i and subtracts from limb i − 1's digit (step 0's difference
                // and step S's sum are nothing).
                self.carry.d.next = self.step_sum.val().get_bits::<3>(17);
                if self.count.q.val().any() {
                    self.borrow.d.next = !self.step_diff.val().get_bit(17);
                }
                self.count.d.next = self.count.q.val() + 1;
                // Both candidates shift down (shift_terms is set in every running cycle); the
                // new digits enter at the top, step 0's to be shifted out by step S.
                for j in (self.sum.len() - 1)..self.sum.len() {
                    self.sum[j].d.next = bit_cast::<X_BITS, Y_BITS>(self.digit.q.val());
                    self.diff[j].d.next = bit_cast::<X_BITS, Y_BITS>(self.step_diff.val().get_bits::<Y_BITS>(0));
                }
                if self.last_step.val() {
                    self.count.d.next = 0.into();
                    self.state.d.next = CorrectionState::Holding;
                }
            }
            CorrectionState::Holding => {
                if self.take.val() {
                    self.taken.d.next = true;
                    self.count.d.next = self.count.q.val() + 1;
                    if self.count.q.val() + 1 == self.digits.val() {
                        self.state.d.next = CorrectionState::Idle;
                    }
                }
            }
            _ => {
                self.state.d.next = CorrectionState::Idle;
            }
        }
        // The limbs shift in the next cycle if the state will be Running, or a limb is taken.
        self.shift_state.d.next = self.state.d.val();
        for sn in (self.shift_terms.d.len())..(self.shift_terms.d.len() + 1) {
            for s in 0..(self.shift_terms.d.len() + self.shift_modulus.d.len()) {
                self.shift_next[s].next = ((self.shift_state.q[s].val() == CorrectionState::Idle) & self.start.val())
                    | ((self.shift_state.q[s].val() == CorrectionState::Running) & !self.last_step.val())
                    | ((self.shift_state.q[s].val() == CorrectionState::Holding) & self.take.val());
            }
            for s in 0..self.shift_terms.d.len() {
                self.shift_terms.d[s].next = self.shift_next[s].val();
            }
            for s in 0..self.shift_modulus.d.len() {
                self.shift_modulus.d[s].next = self.shift_next[sn + s].val();
            }
        }
        for sn in (self.shift_next.len())..(self.shift_next.len() + 1) {
            for s in 0..self.capture_p.d.len() {
                self.capture_p.d[s].next =
                    self.capture_p_next.val() & (self.shift_state.q[sn + s].val() == CorrectionState::Idle);
                self.capture_q.d[s].next =
                    self.capture_q_next.val() & (self.shift_state.q[sn + s].val() == CorrectionState::Idle);
            }
        }
        // The top limbs are the running state's to set (a take leaves them as they are).
        for j in 0..(self.sum.len() - 1) {
            if self.shift_terms.q[j].val() {
                self.sum[j].d.next = self.sum[j + 1].q.val();
                self.diff[j].d.next = self.diff[j + 1].q.val();
            }
        }
        // The group size as a loop variable: rust-hdl indexes with loop variables only.
        for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
            for j in 0..(self.modulus.len() - 1) {
                if self.shift_modulus.q[j / g].val() {
                    self.modulus[j].d.next = self.modulus[j + 1].q.val();
                }
            }
            // Terms arrive while idle (the exponentiations end after the previous result left).
            for j in 0..self.sum.len() {
                if self.capture_p.q[j / g].val() {
                    self.sum[j].d.next = self.term[j].val();
                }
                if self.capture_q.q[j / g].val() {
                    self.diff[j].d.next = self.term[j].val();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limbs::{from_limbs, to_limbs};
    use crate::testing::simulate;
    use ecrt_golden::prime::random_odd;
    use num_bigint::{BigUint, RandBigInt};
    use rand::SeedableRng;

    #[test]
    fn correction_is_synthesizable() {
        let mut uut = Correction::new(3);
        uut.connect_all();
        yosys_validate("ecrt_correction", &generate_verilog(&uut)).unwrap();
    }

    /// Redundant terms below n whose sum is below n, equal to n, and above it: m = (p + q) mod n;
    /// over 4 limbs, and over 140, whose shifts are decided in five sets of copies.
    #[test]
    fn sums_and_corrects_once() {
        for digits in [4, 140] {
            sums_and_corrects_over(digits);
        }
    }

    fn sums_and_corrects_over(digits: usize) {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let n = random_odd(17 * digits as u64 - 2, &mut rng);
        let cases = [
            (rng.gen_biguint_below(&(&n >> 1u32)), rng.gen_biguint_below(&(&n >> 1u32))),
            (&n - 1u32, BigUint::from(1u32)),
            (&n - 1u32, &n - 1u32),
            (BigUint::from(0u32), BigUint::from(0u32)),
        ];
        for (p, q) in cases {
            // A redundant form: borrow 2^17 from limb 1 into limb 0 where possible.
            let redundant = |x: &BigUint| {
                let mut l = to_limbs(x, digits);
                if l[1] > 0 {
                    l[1] -= 1;
                    l[0] += 1 << 17;
                }
                l
            };
            let (pl, ql, nl) = (redundant(&p), redundant(&q), to_limbs(&n, digits));
            // Takes in every cycle, and every third (a take shifts the limbs a cycle later).
            for every in [1, 3] {
                let (pl, ql, nl) = (pl.clone(), ql.clone(), nl.clone());
                let period = 4 + digits + every * digits + 2;
                let trace = simulate(Correction::new(digits), period, move |uut, cycle| {
                    uut.capture_p_next.next = cycle == 0;
                    uut.capture_q_next.next = cycle == 1;
                    for j in 0..digits {
                        uut.term[j].next = (if cycle == 1 { pl[j] } else { ql[j] }).into();
                        uut.n[j].next = nl[j].into();
                    }
                    uut.start.next = cycle == 3;
                    let valid = uut.valid.val();
                    uut.take.next = valid & (cycle % every == 0);
                    (valid && cycle % every == 0, uut.limb.val().to_u64())
                });
                let limbs: Vec<u64> = trace.iter().filter(|c| c.0).map(|c| c.1).collect();
                assert_eq!(limbs.len(), digits, "S limbs handed out, then idle (a take every {every} cycles)");
                assert_eq!(from_limbs(limbs), (&p + &q) % &n, "p + q mod n (a take every {every} cycles)");
            }
        }
    }
}
