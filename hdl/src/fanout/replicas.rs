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
        Verilog::Custom(copies_verilog::<T>(self.q.len(), |_| "d".into()))
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

/// Registers `copy{i}` kept apart, each loaded from `source(i)` and read as `q$i`.
pub(crate) fn copies_verilog<T: Synth>(copies: usize, source: impl Fn(usize) -> String) -> String {
    let (width, init) = (T::BITS, format!("{:x}", T::default().verilog()));
    let mut v = String::new();
    for i in 0..copies {
        writeln!(v, "(* keep = \"true\", dont_touch = \"true\" *) reg [{}:0] copy{i} = {init};", width - 1).unwrap();
        writeln!(v, "(* keep *) always @(posedge clock) copy{i} <= {};", source(i)).unwrap();
        writeln!(v, "always @(*) q${i} = copy{i};").unwrap();
    }
    v
}

/// Copies of several registers: `copies` of each input, copy c of input i at index i·copies + c.
#[derive(LogicBlock)]
pub struct ReplicaSets<T: Synth> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The next value of every copy of each register.
    pub d: Vec<Signal<In, T>>,
    /// The copies: `q[i·copies + c]` equals `d[i]` a cycle late.
    pub q: Vec<Signal<Out, T>>,
}

impl<T: Synth> ReplicaSets<T> {
    /// `copies` copies of each of `registers` registers of `T`.
    pub fn new(registers: usize, copies: usize) -> Self {
        assert!(copies >= 1, "at least one copy");
        ReplicaSets { clock: Default::default(), d: many(registers), q: many(registers * copies) }
    }

    fn copies(&self) -> usize {
        self.q.len() / self.d.len()
    }
}

impl<T: Synth> Logic for ReplicaSets<T> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let copies = self.copies();
            for (i, q) in self.q.iter_mut().enumerate() {
                q.next = self.d[i / copies].val();
            }
        }
    }
    fn connect(&mut self) {
        for q in &mut self.q {
            q.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        let copies = self.copies();
        Verilog::Custom(copies_verilog::<T>(self.q.len(), |i| format!("d${}", i / copies)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::simulate;

    #[test]
    fn replica_sets_is_synthesizable() {
        let mut uut = ReplicaSets::<Bits<3>>::new(2, 3);
        uut.connect_all();
        yosys_validate("ecrt_replica_sets", &generate_verilog(&uut)).unwrap();
    }

    /// Every copy holds its own input's last value.
    #[test]
    fn each_set_of_copies_follows_its_input() {
        let trace = simulate(ReplicaSets::<Bits<3>>::new(2, 2), 4, |uut, cycle| {
            uut.d[0].next = (cycle as u64).into();
            uut.d[1].next = (7 - cycle as u64).into();
            uut.q.iter().map(|q| q.val().to_u64()).collect::<Vec<_>>()
        });
        for (cycle, copies) in trace.iter().enumerate().skip(1) {
            let (a, b) = ((cycle - 1) as u64, 8 - cycle as u64);
            assert_eq!(copies, &vec![a, a, b, b], "cycle {cycle}");
        }
    }

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
