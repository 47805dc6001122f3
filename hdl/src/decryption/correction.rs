//! The eCRT sum and its single final correction (the golden model's `EcrtTrace::{sum, corrected,
//! result}`): m = term_p + term_q, minus n when that is ≥ n.
//!
//! Serial over the S limbs, least significant first, one limb per cycle: the redundant limbs of
//! both terms are added with a carry into exact digits d_j, and d_j − n_j − borrow is formed at
//! the same time. After S steps the last borrow says whether the sum was below n (the sum is
//! < 2n < R, so no carry leaves the top). The digits of both candidates shift into the terms'
//! own registers, so the choice costs a multiplexer on one limb, not a copy.
use crate::config::STEP_BITS;
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
    /// Store `term` as term_p.
    pub capture_p: Signal<In, bool>,
    /// Store `term` as term_q.
    pub capture_q: Signal<In, bool>,
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
    // p_0 + q_0 + carry; its low 17 bits + 2^17 − n_0 − borrow (bit 17 clear: a borrow).
    step_sum: Signal<Local, Bits<20>>,
    step_diff: Signal<Local, Bits<18>>,
    bias: Signal<Local, Bits<18>>,
    shift: Signal<Local, bool>,
}

impl Correction {
    /// A correction over `digits` limbs.
    pub fn new(digits: usize) -> Self {
        Correction {
            clock: Default::default(),
            capture_p: Default::default(),
            capture_q: Default::default(),
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
            step_diff: Default::default(),
            bias: Default::default(),
            shift: Default::default(),
        }
    }
}

impl Logic for Correction {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, carry, borrow, count);
        for j in 0..self.sum.len() {
            self.sum[j].clock.next = self.clock.val();
            self.diff[j].clock.next = self.clock.val();
            self.modulus[j].clock.next = self.clock.val();
            self.sum[j].d.next = self.sum[j].q.val();
            self.diff[j].d.next = self.diff[j].q.val();
            self.modulus[j].d.next = self.modulus[j].q.val();
        }
        for j in 0..1 {
            self.low_p.next = self.sum[j].q.val();
            self.low_q.next = self.diff[j].q.val();
            self.low_n.next = self.modulus[j].q.val();
        }
        self.step_sum.next = bit_cast::<20, X_BITS>(self.low_p.val())
            + bit_cast::<20, X_BITS>(self.low_q.val())
            + bit_cast::<20, 3>(self.carry.q.val());
        self.bias.next = 131072.into();
        if self.borrow.q.val() {
            self.bias.next = 131071.into();
        }
        self.step_diff.next = bit_cast::<18, Y_BITS>(self.step_sum.val().get_bits::<Y_BITS>(0)) + self.bias.val()
            - bit_cast::<18, Y_BITS>(self.low_n.val());
        self.valid.next = self.state.q.val() == CorrectionState::Holding;
        self.busy.next = self.state.q.val() != CorrectionState::Idle;
        // While holding, the borrow says which candidate is m: the sum when it was below n.
        self.limb.next = self.low_q.val().get_bits::<Y_BITS>(0);
        if self.borrow.q.val() {
            self.limb.next = self.low_p.val().get_bits::<Y_BITS>(0);
        }
        self.shift.next = false;
        match self.state.q.val() {
            CorrectionState::Idle => {
                if self.start.val() {
                    self.carry.d.next = 0.into();
                    self.borrow.d.next = false;
                    self.count.d.next = 0.into();
                    for j in 0..self.modulus.len() {
                        self.modulus[j].d.next = self.n[j].val();
                    }
                    self.state.d.next = CorrectionState::Running;
                }
            }
            CorrectionState::Running => {
                self.carry.d.next = self.step_sum.val().get_bits::<3>(17);
                self.borrow.d.next = !self.step_diff.val().get_bit(17);
                self.count.d.next = self.count.q.val() + 1;
                for j in 0..(self.modulus.len() - 1) {
                    self.modulus[j].d.next = self.modulus[j + 1].q.val();
                }
                // Shift both candidates down; the new digits enter at the top.
                self.shift.next = true;
                for j in (self.sum.len() - 1)..self.sum.len() {
                    self.sum[j].d.next = bit_cast::<X_BITS, Y_BITS>(self.step_sum.val().get_bits::<Y_BITS>(0));
                    self.diff[j].d.next = bit_cast::<X_BITS, Y_BITS>(self.step_diff.val().get_bits::<Y_BITS>(0));
                }
                if self.count.q.val() + 1 == self.digits.val() {
                    self.count.d.next = 0.into();
                    self.state.d.next = CorrectionState::Holding;
                }
            }
            CorrectionState::Holding => {
                if self.take.val() {
                    self.shift.next = true;
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
        // The top limbs are the Running state's to set (a take leaves them as they are).
        if self.shift.val() {
            for j in 0..(self.sum.len() - 1) {
                self.sum[j].d.next = self.sum[j + 1].q.val();
                self.diff[j].d.next = self.diff[j + 1].q.val();
            }
        }
        // Terms arrive while idle (the exponentiations end after the previous result left).
        for j in 0..self.sum.len() {
            if self.capture_p.val() {
                self.sum[j].d.next = self.term[j].val();
            }
            if self.capture_q.val() {
                self.diff[j].d.next = self.term[j].val();
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

    /// Redundant terms below n whose sum is below n, equal to n, and above it: m = (p + q) mod n.
    #[test]
    fn sums_and_corrects_once() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let digits = 4;
        let n = random_odd(66, &mut rng);
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
            let period = 3 + digits + digits + 2;
            let trace = simulate(Correction::new(digits), period, move |uut, cycle| {
                uut.capture_p.next = cycle == 0;
                uut.capture_q.next = cycle == 1;
                for j in 0..digits {
                    uut.term[j].next = (if cycle == 0 { pl[j] } else { ql[j] }).into();
                    uut.n[j].next = nl[j].into();
                }
                uut.start.next = cycle == 2;
                let valid = uut.valid.val();
                uut.take.next = valid;
                (valid, uut.limb.val().to_u64())
            });
            let limbs: Vec<u64> = trace.iter().filter(|c| c.0).map(|c| c.1).collect();
            assert_eq!(limbs.len(), digits, "S limbs handed out, then idle");
            assert_eq!(from_limbs(limbs), (&p + &q) % &n, "p + q mod n");
        }
    }
}
