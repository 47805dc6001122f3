//! Flip-flops that toggle every cycle from 0: copies of a phase. Each toggles itself, so no net
//! but the clock is shared between them; each is kept all the same (see [`super`]).

use crate::many;
use rust_hdl::prelude::*;
use std::fmt::Write;

/// `copies` phase flip-flops, 0 in the first cycle, 1 in the next, and so on.
#[derive(LogicBlock)]
pub struct Toggles {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The copies, equal in every cycle.
    pub q: Vec<Signal<Out, bool>>,
}

impl Toggles {
    /// `copies` copies of the phase.
    pub fn new(copies: usize) -> Self {
        assert!(copies >= 1, "at least one copy");
        Toggles { clock: Default::default(), q: many(copies) }
    }
}

impl Logic for Toggles {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            for q in &mut self.q {
                q.next = !q.val();
            }
        }
    }
    fn connect(&mut self) {
        for q in &mut self.q {
            q.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::new();
        for i in 0..self.q.len() {
            writeln!(v, "(* keep = \"true\", dont_touch = \"true\" *) reg copy{i} = 1'b0;").unwrap();
            writeln!(v, "(* keep *) always @(posedge clock) copy{i} <= ~copy{i};").unwrap();
            writeln!(v, "always @(*) q${i} = copy{i};").unwrap();
        }
        Verilog::Custom(v)
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "toggles".into(),
            clock: "clock".into(),
            inputs: vec![],
            outputs: (0..self.q.len()).map(|i| format!("q${i}")).collect(),
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::simulate;

    #[test]
    fn toggles_is_synthesizable() {
        let mut uut = Toggles::new(3);
        uut.connect_all();
        yosys_validate("ecrt_toggles", &generate_verilog(&uut)).unwrap();
    }

    /// All copies read 0, 1, 0, … together.
    #[test]
    fn copies_toggle_together_from_zero() {
        let trace = simulate(Toggles::new(3), 5, |uut, _| uut.q.iter().map(|q| q.val()).collect::<Vec<_>>());
        for (cycle, copies) in trace.iter().enumerate() {
            assert_eq!(copies, &vec![cycle % 2 == 1; 3], "cycle {cycle}");
        }
    }
}
