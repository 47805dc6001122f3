//! The multiplicand B from its normalized 17-bit limbs into 23-bit windows, for the 24×17 a·b
//! products (`ecrt_golden::hw::wide::windows`): each limb placed at its offset and cut where it
//! crosses a window boundary, the pieces of a window added. No carry passes between windows, so
//! this is wiring and one two-operand adder a window; every window is < 2^24. The Verilog is
//! written from the widths, like [`super::fold_normalize`]'s.

use crate::many;
use crate::multiplier::mul_add::{WINDOW_BITS, X_BITS};
use ecrt_golden::hw::wide;
use rust_hdl::prelude::*;
use std::fmt::Write;

/// Limbs in, windows out, combinational.
#[derive(LogicBlock)]
pub struct BWindows {
    /// B's limbs (normalized, < 2^17 + 3), least significant first.
    pub limbs: Vec<Signal<In, Bits<X_BITS>>>,
    /// B's windows, least significant first.
    pub windows: Vec<Signal<Out, Bits<WINDOW_BITS>>>,
}

impl BWindows {
    /// The network for `limbs` limbs.
    pub fn new(limbs: usize) -> Self {
        BWindows { limbs: many(limbs), windows: many(wide::window_count(limbs)) }
    }

    /// (window, limb, the limb's lowest bit taken, bits taken, offset in the window) for every
    /// piece.
    fn pieces(&self) -> Vec<(usize, usize, usize, usize, usize)> {
        let width = wide::WINDOW_BITS as usize;
        let mut pieces = Vec::new();
        for j in 0..self.limbs.len() {
            let bit = 17 * j;
            let (i, offset) = (bit / width, bit % width);
            let room = width - offset;
            pieces.push((i, j, 0, room.min(X_BITS), offset));
            if room < X_BITS && i + 1 < self.windows.len() {
                pieces.push((i + 1, j, room, X_BITS - room, 0));
            }
        }
        pieces
    }

    /// The windows of `limbs`, piece by piece as the Verilog adds them.
    fn window_values(&self, limbs: &[u64]) -> Vec<u64> {
        let mut windows = vec![0u64; self.windows.len()];
        for (i, j, low, bits, offset) in self.pieces() {
            windows[i] += ((limbs[j] >> low) & ((1 << bits) - 1)) << offset;
        }
        windows
    }
}

impl Logic for BWindows {
    fn update(&mut self) {
        let limbs: Vec<u64> = self.limbs.iter().map(|l| l.val().to_u64()).collect();
        let windows = self.window_values(&limbs);
        for (port, &w) in self.windows.iter_mut().zip(&windows) {
            port.next = Bits::<WINDOW_BITS>::from(w & ((1 << WINDOW_BITS) - 1));
        }
    }
    fn connect(&mut self) {
        for w in &mut self.windows {
            w.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        // A limb's bits 0–16 never overlap another limb's, and neither do the limbs' bits 17: each
        // window is their two concatenations added, one carry chain.
        let top = X_BITS - 1;
        let mut exact: Vec<Vec<String>> = vec![Vec::new(); self.windows.len()];
        let mut carries: Vec<Vec<String>> = vec![Vec::new(); self.windows.len()];
        for (i, j, low, bits, offset) in self.pieces() {
            let high = (low + bits).min(top);
            if low < high {
                exact[i].push(format!(
                    "({{{}'d0, limbs${j}[{}:{low}]}} << {offset})",
                    WINDOW_BITS - (high - low),
                    high - 1
                ));
            }
            if low + bits > top {
                carries[i].push(format!("({{{}'d0, limbs${j}[{top}]}} << {})", WINDOW_BITS - 1, offset + top - low));
            }
        }
        let or = |terms: &[String]| if terms.is_empty() { format!("{WINDOW_BITS}'d0") } else { terms.join(" | ") };
        let mut v = String::from("always @(*) begin\n");
        for i in 0..self.windows.len() {
            writeln!(v, "   windows${i} = ({}) + ({});", or(&exact[i]), or(&carries[i])).unwrap();
        }
        v.push_str("end\n");
        Verilog::Custom(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The Verilog is checked inside the multiplier against the golden model (fold_mul's tests
    // in Verilator); here its pieces.
    #[test]
    fn pieces_make_the_golden_models_windows() {
        for count in [1usize, 7, 124] {
            let limbs: Vec<u64> = (0..count as u64).map(|j| ((1 << 17) + 2 + j * 7919) % ((1 << 17) + 3)).collect();
            let mut limbs = limbs;
            *limbs.last_mut().unwrap() &= (1 << 17) - 1;
            let expected = wide::windows(&limbs, wide::window_count(count));
            assert_eq!(BWindows::new(count).window_values(&limbs), expected, "{count} limbs");
        }
    }

    #[test]
    fn b_windows_is_synthesizable() {
        let mut uut = BWindows::new(7);
        uut.connect_all();
        yosys_validate("ecrt_b_windows", &generate_verilog(&uut)).unwrap();
    }
}
