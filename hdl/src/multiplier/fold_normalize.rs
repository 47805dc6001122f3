//! A folding multiplier's result leaves as normalized limbs: u_j = lo17(t_j) + (t_(j−1) >> 17),
//! each < 2^17 + 3, so that it fits the DSP48E1's 25-bit port as the next multiplicand
//! (`ecrt_golden::hw::FoldContext::normalize`). Its Verilog is written from the width, like
//! [`super::fold_sum`]'s: the limbs differ in width, which rust-hdl's loops cannot cast.

use crate::many;
use crate::multiplier::mul_add::{T_BITS, X_BITS};
use rust_hdl::prelude::*;
use std::fmt::Write;

/// T's low limbs in, normalized limbs out, combinational.
#[derive(LogicBlock)]
pub struct FoldNormalize {
    /// T's limbs (< 2^18 + 2^7), as many as the result has.
    pub t: Vec<Signal<In, Bits<T_BITS>>>,
    /// The normalized limbs.
    pub result: Vec<Signal<Out, Bits<X_BITS>>>,
}

impl FoldNormalize {
    /// The network for `limbs` limbs.
    pub fn new(limbs: usize) -> Self {
        FoldNormalize { t: many(limbs), result: many(limbs) }
    }
}

impl Logic for FoldNormalize {
    fn update(&mut self) {
        for j in 0..self.t.len() {
            let mut limb = self.t[j].val().to_u64() & ((1 << 17) - 1);
            if j >= 1 {
                limb += self.t[j - 1].val().to_u64() >> 17;
            }
            self.result[j].next = Bits::<X_BITS>::from(limb);
        }
    }
    fn connect(&mut self) {
        for r in &mut self.result {
            r.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::from("always @(*) begin\n   result$0 = t$0[16:0];\n");
        for j in 1..self.t.len() {
            writeln!(v, "   result${j} = t${j}[16:0] + t${}[{}:17];", j - 1, T_BITS - 1).unwrap();
        }
        v.push_str("end\n");
        Verilog::Custom(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Checked against the golden model inside the multiplier (fold_mul's tests).
    #[test]
    fn fold_normalize_is_synthesizable() {
        let mut uut = FoldNormalize::new(4);
        uut.connect_all();
        yosys_validate("ecrt_fold_normalize", &generate_verilog(&uut)).unwrap();
    }
}
