//! A step's column sums redistributed into T's limbs, with no carry past three limbs:
//! t′_j = lo17(c_j) + mid17(c_(j−1)) + hi(c_(j−2)) (`ecrt_golden::hw::FoldContext::step`). The
//! deep-loop multiplier's last stage ([`super::deep_mul`]); the two-cycle loop writes the same
//! sums into its own stage 2 ([`super::fold_sum`]).

use crate::many;
use crate::multiplier::mul_add::{SUM_BITS, T_BITS};
use rust_hdl::prelude::*;
use std::fmt::Write;

/// T's limbs from its column sums (< 2^41): t′_j = lo17(c_j) + mid17(c_(j−1)) + hi(c_(j−2)),
/// each < 2^18 + 2^7.
pub(crate) fn redistribute(sums: &[u64]) -> Vec<u64> {
    const LIMB_MASK: u64 = (1 << 17) - 1;
    (0..sums.len())
        .map(|j| {
            let mut limb = sums[j] & LIMB_MASK;
            if j >= 1 {
                limb += (sums[j - 1] >> 17) & LIMB_MASK;
            }
            if j >= 2 {
                limb += sums[j - 2] >> 34;
            }
            limb & ((1 << T_BITS) - 1)
        })
        .collect()
}

/// The Verilog of [`redistribute`] into `t_next$j`, inside an `always @(*)`, the column sums
/// named by `sum`. With `carry_save`, a limb of three terms is their bitwise sum plus their
/// carries (a + b + c = (a ⊕ b ⊕ c) + 2·maj(a, b, c)): one LUT level and one carry chain, where
/// synthesis otherwise chains two adders.
pub(crate) fn redistribution(columns: usize, sum: impl Fn(usize) -> String, carry_save: bool) -> String {
    let mut v = String::new();
    for j in 0..columns {
        let mut parts = vec![format!("{}[16:0]", sum(j))];
        if j >= 1 {
            parts.push(format!("{}[33:17]", sum(j - 1)));
        }
        if j >= 2 {
            parts.push(format!("{}[{}:34]", sum(j - 2), SUM_BITS - 1));
        }
        if let (true, [a, b, hi]) = (carry_save, parts.as_slice()) {
            // The high part as wide as the others, for the bitwise terms.
            let c = format!("{{{}'d0, {hi}}}", 51 - SUM_BITS);
            writeln!(
                v,
                "   t_next${j} = {{2'b0, {a} ^ {b} ^ {c}}} + {{1'b0, ({a} & {b}) | ({a} & {c}) | ({b} & {c}), 1'b0}};"
            )
            .unwrap();
        } else {
            writeln!(v, "   t_next${j} = {};", parts.join(" + ")).unwrap();
        }
    }
    v
}

/// Column sums in, T's limbs out, combinational.
#[derive(LogicBlock)]
pub struct Redistribute {
    /// Each column's sum (< 2^41).
    pub sums: Vec<Signal<In, Bits<SUM_BITS>>>,
    /// T's limbs (< 2^18 + 2^7).
    pub t_next: Vec<Signal<Out, Bits<T_BITS>>>,
}

impl Redistribute {
    /// The network for `columns` columns.
    pub fn new(columns: usize) -> Self {
        Redistribute { sums: many(columns), t_next: many(columns) }
    }
}

impl Logic for Redistribute {
    fn update(&mut self) {
        let sums: Vec<u64> = self.sums.iter().map(|s| s.val().to_u64()).collect();
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
        let mut v = String::from("always @(*) begin\n");
        v.push_str(&redistribution(self.sums.len(), |j| format!("sums${j}"), true));
        v.push_str("end\n");
        Verilog::Custom(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Checked against the golden model inside the deep-loop multiplier (deep_mul's tests).
    #[test]
    fn redistribute_is_synthesizable() {
        let mut uut = Redistribute::new(6);
        uut.connect_all();
        yosys_validate("ecrt_redistribute", &generate_verilog(&uut)).unwrap();
    }
}
