//! Stage 1's column addends in the folding multiplier ([`super::fold_mul`]): for each column j,
//! the limb of T it adds as it is (folding t_(j+k), classic register j + 1) plus the low and top
//! pieces of the a·b products that land in column j, but the low pieces a loop DSP adds
//! ([`super::window_pieces`]). The a·b products are registered a cycle before stage 1, so these
//! sums take stage 1's cycle and stage 2's adder trees keep k + 1 terms a column. The Verilog is
//! written from the shape, each column a balanced adder tree (`balanced_sum`, which stage 2,
//! [`super::fold_sum`], takes with the addends' width [`BASE_BITS`]).

use crate::many;
use crate::multiplier::mul_add::T_BITS;
use crate::multiplier::window_pieces::{low_in_loop, LOW_BITS, TOP_BITS};
use ecrt_golden::hw::wide;
use rust_hdl::prelude::*;
use std::fmt::Write;

/// Bits of a column's addend: < 2^19 + k·(2^17 + 2^23) < 2^28 for k ≤ 16.
pub const BASE_BITS: usize = 28;

/// T's limbs and the low pieces in, each column's addend out, combinational.
#[derive(LogicBlock)]
pub struct FoldBase {
    /// The limb of T each column adds as it is.
    pub t: Vec<Signal<In, Bits<T_BITS>>>,
    /// The low piece of a·b product (l, w), at index l·W + w: it lands in column l + c_w.
    pub lows: Vec<Signal<In, Bits<LOW_BITS>>>,
    /// The top piece of a·b product (l, w), at index l·W + w: it lands in column l + c_w + 2.
    pub tops: Vec<Signal<In, Bits<TOP_BITS>>>,
    /// Each column's addend for stage 2.
    pub base: Vec<Signal<Out, Bits<BASE_BITS>>>,
    /// k (a constant of the shape, kept where the Verilog writer can read it).
    limbs_per_step: Constant<Bits<8>>,
}

impl FoldBase {
    /// The network for k rows of `windows` low pieces over `columns` columns.
    pub fn new(limbs_per_step: usize, windows: usize, columns: usize) -> Self {
        FoldBase {
            t: many(columns),
            lows: many(limbs_per_step * windows),
            tops: many(limbs_per_step * windows),
            base: many(columns),
            limbs_per_step: Constant::new((limbs_per_step as u64).into()),
        }
    }

    /// (is a top piece, index, column) for every piece that lands in a column (one above the last
    /// is 0: the golden model asserts it), but the low pieces that go to loop DSPs.
    fn landing(&self) -> impl Iterator<Item = (bool, usize, usize)> + '_ {
        let windows = self.lows.len() / self.limbs_per_step.val().to_u64() as usize;
        let column = move |p: usize| wide::landing(p % windows).0 + p / windows;
        let lows = (0..self.lows.len()).filter(move |p| !low_in_loop(p % windows)).map(move |p| (false, p, column(p)));
        let tops = (0..self.tops.len()).map(move |p| (true, p, column(p) + 2));
        lows.chain(tops).filter(|&(_, _, column)| column < self.base.len())
    }
}

impl Logic for FoldBase {
    fn update(&mut self) {
        let mut sums: Vec<u64> = self.t.iter().map(|t| t.val().to_u64()).collect();
        for (top, p, column) in self.landing() {
            sums[column] += if top { self.tops[p].val().to_u64() } else { self.lows[p].val().to_u64() };
        }
        for (port, &sum) in self.base.iter_mut().zip(&sums) {
            port.next = Bits::<BASE_BITS>::from(sum);
        }
    }
    fn connect(&mut self) {
        for b in &mut self.base {
            b.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        let mut terms: Vec<Vec<String>> = (0..self.base.len()).map(|j| vec![format!("t${j}")]).collect();
        for (top, p, column) in self.landing() {
            terms[column].push(format!("{}${p}", if top { "tops" } else { "lows" }));
        }
        let mut v = String::from("always @(*) begin\n");
        for (j, t) in terms.iter().enumerate() {
            writeln!(v, "   base${j} = {};", balanced_sum(t)).unwrap();
        }
        v.push_str("end\n");
        Verilog::Custom(v)
    }
}

/// `terms` added as a balanced tree, so that a column of k + 1 terms is ⌈log2(k + 1)⌉ adders
/// deep rather than k: synthesis keeps the order it is given.
pub(crate) fn balanced_sum(terms: &[String]) -> String {
    match terms {
        [one] => one.clone(),
        _ => {
            let (low, high) = terms.split_at(terms.len().div_ceil(2));
            format!("({} + {})", balanced_sum(low), balanced_sum(high))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_are_balanced_trees() {
        let terms: Vec<String> = ["a", "b", "c", "d", "e"].iter().map(|t| t.to_string()).collect();
        assert_eq!(balanced_sum(&terms[..1]), "a");
        assert_eq!(balanced_sum(&terms), "(((a + b) + c) + (d + e))");
    }

    // Checked against the golden model inside the multiplier (fold_mul's tests).
    #[test]
    fn fold_base_is_synthesizable() {
        let mut uut = FoldBase::new(2, 4, 8);
        uut.connect_all();
        yosys_validate("ecrt_fold_base", &generate_verilog(&uut)).unwrap();
    }
}
