//! Copies of one register: each takes the same input every cycle, and each drives its share of the
//! loads. Synthesis would merge them as equivalent registers; each copy is kept (see
//! [`super`]).

use crate::many;
use rust_hdl::prelude::*;
use std::fmt::Write;

/// `copies` registers loaded from `d`.
#[derive(LogicBlock)]
pub struct Replicas<T: Synth> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The next value of every copy.
    pub d: Signal<In, T>,
    /// The copies, equal in every cycle.
    pub q: Vec<Signal<Out, T>>,
}

impl<T: Synth> Replicas<T> {
    /// `copies` copies of a register of `T`.
    pub fn new(copies: usize) -> Self {
        assert!(copies >= 1, "at least one copy");
        Replicas { clock: Default::default(), d: Default::default(), q: many(copies) }
    }
}

impl<T: Synth> Logic for Replicas<T> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            for q in &mut self.q {
                q.next = self.d.val();
            }
        }
    }
    fn connect(&mut self) {
        for q in &mut self.q {
            q.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        let (width, init) = (T::BITS, format!("{:x}", T::default().verilog()));
        let mut v = String::new();
        for i in 0..self.q.len() {
            writeln!(v, "(* keep = \"true\", dont_touch = \"true\" *) reg [{}:0] copy{i} = {init};", width - 1)
                .unwrap();
            writeln!(v, "(* keep *) always @(posedge clock) copy{i} <= d;").unwrap();
            writeln!(v, "always @(*) q${i} = copy{i};").unwrap();
        }
        Verilog::Custom(v)
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "replicas".into(),
            clock: "clock".into(),
            inputs: vec!["d".into()],
            outputs: (0..self.q.len()).map(|i| format!("q${i}")).collect(),
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::simulate;

    #[test]
    fn replicas_is_synthesizable() {
        let mut uut = Replicas::<Bits<3>>::new(4);
        uut.connect_all();
        yosys_validate("ecrt_replicas", &generate_verilog(&uut)).unwrap();
    }

    /// Every copy holds last cycle's input.
    #[test]
    fn every_copy_follows_the_input_a_cycle_late() {
        let trace = simulate(Replicas::<Bits<3>>::new(3), 6, |uut, cycle| {
            uut.d.next = ((cycle * 5 % 8) as u64).into();
            uut.q.iter().map(|q| q.val().to_u64()).collect::<Vec<_>>()
        });
        for (cycle, copies) in trace.iter().enumerate().skip(1) {
            let expected = ((cycle - 1) * 5 % 8) as u64;
            assert_eq!(copies, &vec![expected; 3], "cycle {cycle}");
        }
    }
}
