//! The delayed-quotient multiplier's a·b leaf: a 24-bit window of B times a 17-bit digit of A, the
//! digit multiplied as it comes from its register in the fabric (no B register: its setup before
//! the M register is 1.42 ns in the 7-series cell delays), so that a digit resolved at its lane's
//! turn is a product two clock edges later. An idle step's product is cleared in the P register
//! (its synchronous reset, RSTP), which needs its flag only then, where a cleared window would
//! need it a cycle before the digit.

use crate::multiplier::mul_add::{AB_BITS, WINDOW_BITS, Y_BITS};
use rust_hdl::prelude::*;

/// `a <= x`, `m <= a·y`, then `p <= clear ? 0 : m`: a DSP48E1 with its A, M and P registers.
#[derive(LogicBlock, Default)]
pub struct DigitWindowMul {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The window (unsigned), taken into the A register a cycle before `y`.
    pub x: Signal<In, Bits<WINDOW_BITS>>,
    /// The digit (17 bits, unsigned), multiplied as it comes.
    pub y: Signal<In, Bits<Y_BITS>>,
    /// Clear the product: P takes 0 at the next clock edge instead of M.
    pub clear: Signal<In, bool>,
    /// x·y: three clock edges after x, two after y.
    pub p: Signal<Out, Bits<AB_BITS>>,
    a: Signal<Local, Bits<WINDOW_BITS>>,
    m: Signal<Local, Bits<AB_BITS>>,
}

impl Logic for DigitWindowMul {
    fn update(&mut self) {
        // Local and output signals read back what was written in this pass: every register's next
        // value is formed before any is written.
        if self.clock.pos_edge() {
            let m = self.a.val().to_u64() * self.y.val().to_u64();
            let p = if self.clear.val() { 0 } else { self.m.val().to_u64() };
            self.a.next = self.x.val();
            self.m.next = m.into();
            self.p.next = p.into();
        }
    }
    fn connect(&mut self) {
        self.p.connect();
        self.a.connect();
        self.m.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "initial begin\n   a = {WINDOW_BITS}'h0;\n   m = {AB_BITS}'h0;\n   p = {AB_BITS}'h0;\nend\n\n\
             always @(posedge clock) begin\n   a <= x;\n   m <= a * y;\n   \
             if (clear) p <= {AB_BITS}'h0; else p <= m;\nend\n"
        ))
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "digit_window_mul".into(),
            clock: "clock".into(),
            inputs: vec!["x".into(), "y".into(), "clear".into()],
            outputs: vec!["p".into()],
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::simulate;

    #[test]
    fn digit_window_mul_is_synthesizable() {
        let mut uut = DigitWindowMul::default();
        uut.connect_all();
        yosys_validate("ecrt_digit_window_mul", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn multiplies_the_window_by_the_digit_given_a_cycle_later_unless_cleared() {
        let top = (1u64 << WINDOW_BITS) - 1;
        // (window, digit, cleared)
        let cases = [(0u64, 5u64, false), (top, (1 << 17) - 1, false), (12345, 54321, true), (99_999, 3, false)];
        let outputs = simulate(DigitWindowMul::default(), cases.len() + 3, move |uut, i| {
            if let Some(&(x, _, _)) = cases.get(i) {
                uut.x.next = x.into();
            }
            if let Some(&(_, y, _)) = i.checked_sub(1).and_then(|i| cases.get(i)) {
                uut.y.next = y.into();
            }
            uut.clear.next = i.checked_sub(2).and_then(|i| cases.get(i)).is_some_and(|c| c.2);
            uut.p.val().to_u64()
        });
        for (i, &(x, y, cleared)) in cases.iter().enumerate() {
            assert_eq!(outputs[i + 3], if cleared { 0 } else { x * y }, "case {i}");
        }
    }
}
