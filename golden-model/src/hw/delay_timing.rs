//! The delayed-quotient multiplier's pipeline (`ecrt-hdl`'s `DelayMul`): how many steps its
//! quotient is late, the registers that make its quotient's and its digits' paths meet, and the
//! exact cycles of its multiplications, classic passes and decryption paths, held to the RTL and
//! to Verilator.

use super::fold_classic::delayed_hold_turns;
use super::fold_delayed::DelayedShape;
use super::{wide, ClassicOp, ClassicShape, HwError};

/// Levels of two-input adders a column of `rows` rows of a·b pieces and its limb of T need:
/// ⌈log2(3k)⌉ for the pieces, one for T.
pub fn tree_levels(rows: usize) -> usize {
    (3 * rows).next_power_of_two().trailing_zeros() as usize + 1
}

/// Levels of two-input adders the busiest column of `rows` rows of a·b pieces needs with its
/// limb added among them (⌈log2(pieces + 1)⌉): a row lands at most three pieces in a column, and
/// fewer in most (windows are 23 bits, columns 17), so the count is taken over every column of 51
/// windows (three times the 17 shifts a landing runs through).
pub fn tree_levels_with_base(rows: usize) -> usize {
    let windows = 3 * wide::LIMB_BITS as usize;
    let mut pieces = vec![0usize; rows + wide::landing(windows - 1).0 + 3];
    for l in 0..rows {
        for w in 0..windows {
            let column = l + wide::landing(w).0;
            for count in &mut pieces[column..column + 3] {
                *count += 1;
            }
        }
    }
    let busiest = pieces.into_iter().max().unwrap_or(0);
    (busiest + 1).next_power_of_two().trailing_zeros() as usize
}

/// The delayed-quotient multiplier's pipeline for k limbs a step: its quotient delay and the
/// registers that make its two paths meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DelayTiming {
    /// d = ⌈(k + 1)/2⌉ for odd k, ⌈(k + 2)/2⌉ for even k: steps between a quotient and its
    /// products' landing.
    pub quotient_delay: usize,
    /// Whether the quotient's DSPs keep their A register (for even k): its path from stage A's
    /// sums is then k + 2 cycles, and k + 1 for odd k, 2·d either way.
    pub a_register: bool,
    /// Levels of the a·b pieces' adder trees, a wide REDC's digit of C_hi among them (at least
    /// `tree_levels_with_base(k)`, k + 4 + levels even).
    pub levels: usize,
    /// (k + 4 + levels)/2: turns from a lane's first digits to its first step.
    pub lead: usize,
}

impl DelayTiming {
    /// The pipeline for k limbs a step.
    pub fn new(limbs_per_step: usize) -> Self {
        let k = limbs_per_step;
        let a_register = k % 2 == 0;
        let quotient_delay = (k + 1 + usize::from(a_register)).div_ceil(2);
        let fewest = tree_levels_with_base(k);
        let levels = fewest + (k + 4 + fewest) % 2;
        DelayTiming { quotient_delay, a_register, levels, lead: (k + 4 + levels) / 2 }
    }

    /// The shape of a multiplier for `modulus_bits`-bit moduli and k limbs a step.
    pub fn shape(modulus_bits: usize, limbs_per_step: usize) -> Result<DelayedShape, HwError> {
        DelayedShape::new(modulus_bits, limbs_per_step, Self::new(limbs_per_step).quotient_delay)
    }

    /// Cycles from a lane's load to its result: 2·(lead + n + d + 1).
    pub fn cycles(&self, shape: &DelayedShape) -> usize {
        2 * (self.lead + shape.steps + self.quotient_delay + 1)
    }

    /// Turns of a classic pass's step: its products turn, the turns that hold T and its quotient
    /// turn, d + 4.
    pub fn period(&self) -> usize {
        delayed_hold_turns(self.quotient_delay) + 2
    }

    /// The turn count of a classic pass's last products turn: lead + D·(d + 4) for D digits.
    pub fn classic_products_end(&self, shape: &DelayedShape, op: ClassicOp) -> usize {
        self.lead + ClassicShape::from(shape).steps(op) * self.period()
    }

    /// Cycles from a lane's load to the result of a classic `op`: 2·(lead + D·(d + 4) + d + 2).
    pub fn classic_cycles(&self, shape: &DelayedShape, op: ClassicOp) -> usize {
        2 * (self.classic_products_end(shape, op) + self.quotient_delay + 2)
    }

    /// Cycles of one prime's decryption path in a lane, each multiplication loaded as the one
    /// before shows its result: the wide REDC, ×R³ and the exponentiation's `exp_multiplications`
    /// in the folding mode, the way out, the exact division and ×t·R mod n.
    pub fn path_cycles(&self, shape: &DelayedShape, exp_multiplications: usize) -> usize {
        self.classic_cycles(shape, ClassicOp::WideRedc)
            + (1 + exp_multiplications) * self.cycles(shape)
            + 2 * self.classic_cycles(shape, ClassicOp::Multiply)
            + self.classic_cycles(shape, ClassicOp::Decremented)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_at_2048_bits_and_k_3() {
        let timing = DelayTiming::new(3);
        let shape = DelayTiming::shape(2048, 3).unwrap();
        assert_eq!((timing.quotient_delay, timing.levels, timing.lead, timing.period()), (2, 3, 5, 6));
        assert_eq!((shape.steps, shape.classic_digits(), shape.modulus_limbs), (45, 132, 121));
        assert_eq!(timing.cycles(&shape), 106);
        assert_eq!(timing.classic_cycles(&shape, ClassicOp::Multiply), 1602);
        assert_eq!(timing.classic_cycles(&shape, ClassicOp::Decremented), 1470);
        // A path: three classic passes over S digits, the division's, ×R³ and the exponentiation.
        let (exponentiation, _) =
            crate::hw::schedule_cost(crate::hw::Schedule::FixedWindow { window_bits: 5 }, 1024).unwrap();
        assert_eq!(timing.path_cycles(&shape, exponentiation), 1602 * 3 + 1470 + (1 + exponentiation) * 106);
    }
}
