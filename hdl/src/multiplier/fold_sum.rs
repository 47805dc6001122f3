//! The folding multiplier's second stage ([`super::fold_mul`]): every column sum and its
//! redistribution, combinational. Column j of the new T is c_j = base_j + Σ_l P_(l, j−l), where
//! base_j is t_(j+k) plus the other pieces of the a·b products landing in column j (added in
//! stage 1, [`super::fold_base`]) and P_(l,i) = t_l·m̂_i + (a piece of row l's a·b products) the
//! registered output of loop DSP (l, i) ([`super::window_pieces`]); then
//! t′_j = lo17(c_j) + mid17(c_(j−1)) + hi(c_(j−2)) (`ecrt_golden::hw::FoldContext::step`).
//!
//! In the classic mode (`ecrt_golden::hw::ClassicPass::step`) only the first row's products are
//! non-zero: c_j = t_j + P_(0,j), plus a wide REDC's digit in column L (the row's length), and T
//! moves down a limb: t′_j = lo17(c_(j+1)) + mid17(c_j) + hi(c_(j−1)). The multiplier holds a
//! classic T one limb up (u_(j+1) = t_j, u_0 = 0: what the redistribution gives, lo17(c_0) being
//! 0), so that both modes write the same redistribution and only the addend differs: t_j =
//! u_(j+1), where folding takes t_(j+k). The multiplier selects the addends a cycle ahead
//! (`base`), so nothing but the adders stands between the registers, the DSPs and T.
//!
//! The index pattern (which product lands in which column) is fixed by the shape, so this leaf
//! writes its Verilog from the shape: rust-hdl's own loops cannot index with a parameter, nor
//! cast an indexed signal.

use crate::many;
use crate::multiplier::fold_base::{balanced_sum, BASE_BITS};
use crate::multiplier::mul_add::{LOOP_BITS, T_BITS, Y_BITS};
use crate::multiplier::redistribute::{redistribute, redistribution};
use rust_hdl::prelude::*;
use std::fmt::Write;

use crate::multiplier::mul_add::SUM_BITS;

/// Column sums and redistribution for k limbs per step over `columns` columns, with P loop
/// positions per limb of the step.
#[derive(LogicBlock)]
pub struct FoldSum {
    /// Each column's addend: the limb of T added as it is (folding, t_k, t_(k+1), …: its k lowest
    /// limbs are multiplied by M̂ instead, in the products; classic, T's registers 1, 2, …), plus
    /// the low and top pieces landing in the column.
    pub base: Vec<Signal<In, Bits<BASE_BITS>>>,
    /// Loop product (l, i), at index l·P + i: it lands in column l + i.
    pub products: Vec<Signal<In, Bits<LOOP_BITS>>>,
    /// A wide REDC's digit for column L (0 otherwise).
    pub high: Signal<In, Bits<Y_BITS>>,
    /// The limbs of the new T.
    pub t_next: Vec<Signal<Out, Bits<T_BITS>>>,
    /// k and L (constants of the shape, kept where the Verilog writer can read them).
    limbs_per_step: Constant<Bits<8>>,
    redc_column: Constant<Bits<16>>,
}

impl FoldSum {
    /// The network for `limbs_per_step` (k) rows of `positions` loop products over `columns`
    /// columns, a wide REDC's digit joining column `redc_column` (L).
    pub fn new(limbs_per_step: usize, positions: usize, redc_column: usize, columns: usize) -> Self {
        assert!(positions + limbs_per_step <= columns + 1, "every product lands in a column");
        assert!(redc_column < columns, "column L exists");
        FoldSum {
            base: many(columns),
            products: many(limbs_per_step * positions),
            high: Default::default(),
            t_next: many(columns),
            limbs_per_step: Constant::new((limbs_per_step as u64).into()),
            redc_column: Constant::new((redc_column as u64).into()),
        }
    }

    fn limbs_per_step(&self) -> usize {
        self.limbs_per_step.val().to_u64() as usize
    }

    fn redc_column(&self) -> usize {
        self.redc_column.val().to_u64() as usize
    }

    fn columns(&self) -> usize {
        self.t_next.len()
    }

    /// (product index, column) for every loop product.
    fn landing(&self) -> impl Iterator<Item = (usize, usize)> {
        let positions = self.products.len() / self.limbs_per_step();
        (0..self.products.len()).map(move |p| (p, p % positions + p / positions))
    }
}

impl Logic for FoldSum {
    fn update(&mut self) {
        let mut sums: Vec<u64> = self.base.iter().map(|b| b.val().to_u64()).collect();
        for (p, column) in self.landing() {
            sums[column] += self.products[p].val().to_u64();
        }
        sums[self.redc_column()] += self.high.val().to_u64();
        for (port, limb) in self.t_next.iter_mut().zip(redistribute(&sums)) {
            port.next = Bits::<T_BITS>::from(limb);
        }
    }
    fn connect(&mut self) {
        for t in &mut self.t_next {
            t.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        let w = self.columns();
        let mut terms: Vec<Vec<String>> = (0..w).map(|j| vec![format!("base${j}")]).collect();
        for (p, column) in self.landing() {
            terms[column].push(format!("products${p}"));
        }
        terms[self.redc_column()].push("high".into());
        let mut v = String::new();
        for j in 0..w {
            writeln!(v, "reg [{}:0] sum_{j};", SUM_BITS - 1).unwrap();
        }
        v.push_str("always @(*) begin\n");
        for (j, t) in terms.iter().enumerate() {
            writeln!(v, "   sum_{j} = {};", balanced_sum(t)).unwrap();
        }
        v.push_str(&redistribution(w, |j| format!("sum_{j}"), false));
        v.push_str("end\n");
        Verilog::Custom(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Its arithmetic is checked step by step against the golden model inside the multiplier
    // (fold_mul's tests, in rust-hdl and, through the Verilog, in Verilator).
    #[test]
    fn fold_sum_is_synthesizable() {
        let mut uut = FoldSum::new(3, 4, 4, 8);
        uut.connect_all();
        yosys_validate("ecrt_fold_sum", &generate_verilog(&uut)).unwrap();
    }
}
