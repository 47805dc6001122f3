//! The a·b products of the 24×17 layout, cut into grid-aligned pieces
//! (`ecrt_golden::hw::wide::split`): the product of row l and window w lands s_w bits into column
//! l + c_w (23w = 17·c_w + s_w). Its low piece, (p mod 2^(17 − s_w))·2^(s_w) < 2^17, goes to that
//! column's addend, its top piece, p >> (34 − s_w) < 2^23, to the addend two columns up
//! ([`crate::fold_base`]), and its middle piece, 17 bits, to the C port of the loop DSP of row l
//! at position c_w + 1 (loop DSP (l, i) lands in column l + i, as the middle piece must). c_w
//! grows with w, so no position gets two. Wiring only; the Verilog is written from the shape.

use crate::many;
use crate::mul_add::{AB_BITS, Y_BITS};
use ecrt_golden::hw::wide;
use rust_hdl::prelude::*;
use std::fmt::Write;

/// Bits of a low piece.
pub const LOW_BITS: usize = 17;
/// Bits of a top piece.
pub const TOP_BITS: usize = 23;

/// k rows of products in, their pieces out, combinational.
#[derive(LogicBlock)]
pub struct WindowPieces {
    /// Product (l, w) at index l·W + w (W windows a row).
    pub products: Vec<Signal<In, Bits<AB_BITS>>>,
    /// The addend of loop position (l, i) at index l·P + i (P positions a row): the middle piece
    /// of the row's product that lands below it, or 0.
    pub mid: Vec<Signal<Out, Bits<Y_BITS>>>,
    /// The low piece of product (l, w), at the product's index; it lands in column l + c_w.
    pub low: Vec<Signal<Out, Bits<LOW_BITS>>>,
    /// The top piece of product (l, w), at the product's index; it lands in column l + c_w + 2.
    pub top: Vec<Signal<Out, Bits<TOP_BITS>>>,
    /// k (a constant of the shape, kept where the Verilog writer can read it).
    limbs_per_step: Constant<Bits<8>>,
}

/// Loop positions a row needs for `windows` windows and `modulus_limbs` limbs of M̂: every M̂
/// limb's, and every middle piece's landing.
pub fn positions(windows: usize, modulus_limbs: usize) -> usize {
    modulus_limbs.max(wide::landing(windows - 1).0 + 2)
}

impl WindowPieces {
    /// The pieces of `rows` (k) rows of `windows` products, over `positions` loop positions.
    pub fn new(rows: usize, windows: usize, positions: usize) -> Self {
        assert!(wide::landing(windows - 1).0 + 1 < positions, "every middle piece has a position");
        WindowPieces {
            products: many(rows * windows),
            mid: many(rows * positions),
            low: many(rows * windows),
            top: many(rows * windows),
            limbs_per_step: Constant::new((rows as u64).into()),
        }
    }

    fn rows(&self) -> usize {
        self.limbs_per_step.val().to_u64() as usize
    }

    /// (product index, middle piece's index, shift) for every product.
    fn wiring(&self) -> Vec<(usize, usize, u32)> {
        let rows = self.rows();
        let (windows, positions) = (self.products.len() / rows, self.mid.len() / rows);
        let mut wiring = Vec::new();
        for l in 0..rows {
            for w in 0..windows {
                let (column, shift) = wide::landing(w);
                wiring.push((l * windows + w, l * positions + column + 1, shift));
            }
        }
        wiring
    }
}

impl Logic for WindowPieces {
    fn update(&mut self) {
        for m in &mut self.mid {
            m.next = 0.into();
        }
        for (p, m, shift) in self.wiring() {
            let (low, mid, top) = wide::split(self.products[p].val().to_u64(), shift);
            self.low[p].next = Bits::<LOW_BITS>::from(low);
            self.mid[m].next = Bits::<Y_BITS>::from(mid);
            self.top[p].next = Bits::<TOP_BITS>::from(top);
        }
    }
    fn connect(&mut self) {
        for m in &mut self.mid {
            m.connect();
        }
        for l in &mut self.low {
            l.connect();
        }
        for t in &mut self.top {
            t.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::from("always @(*) begin\n");
        for m in 0..self.mid.len() {
            writeln!(v, "   mid${m} = {Y_BITS}'d0;").unwrap();
        }
        for (p, m, shift) in self.wiring() {
            let low_bits = LOW_BITS - shift as usize;
            writeln!(v, "   low${p} = products${p}[{}:0] << {shift};", low_bits - 1).unwrap();
            writeln!(v, "   mid${m} = products${p}[{}:{low_bits}];", low_bits + Y_BITS - 1).unwrap();
            writeln!(v, "   top${p} = products${p}[{}:{}];", AB_BITS - 1, low_bits + Y_BITS).unwrap();
        }
        v.push_str("end\n");
        Verilog::Custom(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The pieces are checked inside the multiplier against the golden model (fold_mul's tests,
    // in rust-hdl and, through the Verilog, in Verilator); here that every position gets at most
    // one piece.
    #[test]
    fn each_position_gets_at_most_one_middle_piece() {
        let (rows, windows) = (3, 92);
        let pieces = WindowPieces::new(rows, windows, positions(windows, 121));
        let mut targets: Vec<usize> = pieces.wiring().iter().map(|&(_, h, _)| h).collect();
        targets.sort_unstable();
        targets.dedup();
        assert_eq!(targets.len(), rows * windows);
    }

    #[test]
    fn window_pieces_is_synthesizable() {
        let mut uut = WindowPieces::new(2, 4, positions(4, 5));
        uut.connect_all();
        yosys_validate("ecrt_window_pieces", &generate_verilog(&uut)).unwrap();
    }
}
