//! Reusable harnesses for rust-hdl simulations of single blocks at small widths.

use rust_hdl::prelude::*;
use std::sync::{Arc, Mutex};

/// A block with a clock input called `clock`.
pub trait Clocked: Block {
    /// The clock input, to drive.
    fn clock_input(&mut self) -> &mut Signal<In, Clock>;
    /// The clock's level now.
    fn clock_level(&self) -> bool;
}

/// Implements [`Clocked`] for blocks whose clock input is the field `clock`.
macro_rules! clocked {
    ($($t:ty),*) => {
        $(impl $crate::testing::Clocked for $t {
            fn clock_input(&mut self) -> &mut rust_hdl::prelude::Signal<rust_hdl::prelude::In, rust_hdl::prelude::Clock> {
                &mut self.clock
            }
            fn clock_level(&self) -> bool {
                self.clock.val().clk
            }
        })*
    };
}
pub(crate) use clocked;

/// Runs `uut` for `cycles` clock cycles in rust-hdl's simulator. Once per cycle, between two rising
/// edges, `step(uut, cycle)` reads the outputs (cycle k sees the state after k rising edges), sets
/// the inputs for the next edge, and returns a value; the values come back in order.
pub fn simulate<T, R, F>(mut uut: T, cycles: usize, step: F) -> Vec<R>
where
    T: Clocked + Send + 'static,
    R: Send + 'static,
    F: FnMut(&mut T, usize) -> R + Send + 'static,
{
    uut.connect_all();
    let trace = Arc::new(Mutex::new(Vec::with_capacity(cycles)));
    let record = trace.clone();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<T>| {
        let level = x.clock_level();
        x.clock_input().next = Clock { clk: !level };
    });
    // The testbench must be `Fn` and unwind-safe: a mutex is both.
    let step = Mutex::new(step);
    sim.add_testbench(move |mut sim: Sim<T>| {
        let mut step = step.lock().unwrap();
        let mut x = sim.init()?;
        for cycle in 0..cycles {
            x = sim.watch(|x| !x.clock_level(), x)?;
            let value = (*step)(&mut x, cycle);
            record.lock().unwrap().push(value);
            x = sim.watch(|x| x.clock_level(), x)?;
        }
        sim.done(x)
    });
    sim.run(Box::new(uut), 10 * (cycles as u64 + 2)).expect("simulation failed");
    Arc::try_unwrap(trace).ok().expect("simulation finished").into_inner().unwrap()
}

/// Sets `ports` to `limbs`, one limb a port, for the next edge.
pub fn drive<const N: usize>(ports: &mut [Signal<In, Bits<N>>], limbs: &[u64]) {
    for (port, &limb) in ports.iter_mut().zip(limbs) {
        port.next = limb.into();
    }
}

/// The multiplications of an exponentiation's schedule, as values, in the order a slot performs
/// them: the table, then each window's squarings and table multiplication; or, segmented, per bit
/// acc·sq then sq².
pub fn schedule_products(states: &ecrt_golden::hw::ExpStates<ecrt_golden::hw::FoldValue>) -> Vec<num_bigint::BigUint> {
    use ecrt_golden::hw::ExpStates;
    match states {
        ExpStates::FixedWindow { table, windows } => table[2..]
            .iter()
            .map(|t| t.value())
            .chain(windows[1..].iter().flat_map(|w| w.squares.iter().chain([&w.acc]).map(|v| v.value())))
            .collect(),
        ExpStates::RightToLeft { bits, .. } => bits.iter().flat_map(|b| [b.product.value(), b.sq.value()]).collect(),
    }
}
