//! The a·b products of the 24×17 layout, cut into grid-aligned pieces
//! (`ecrt_golden::hw::wide::split`): the product of row l and window w lands s_w bits into column
//! l + c_w (23w = 17·c_w + s_w). Its low piece, (p mod 2^(17 − s_w))·2^(s_w) < 2^17, goes to that
//! column's addend, its top piece, p >> (34 − s_w) < 2^23, to the addend two columns up
//! ([`super::fold_base`]), and its middle piece, 17 bits, to the C port of the loop DSP of row l
//! at position c_w + 1 (loop DSP (l, i) lands in column l + i, as the middle piece must). c_w
//! grows by 1 or 2 a window, so no position gets two middle pieces, and a position that gets
//! none is a landing column: there the low piece goes to the C port instead of the addend
//! ([`low_in_loop`]). Wiring only; the Verilog is written from the shape.

use crate::many;
use crate::multiplier::mul_add::{AB_BITS, Y_BITS};
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
    /// The C-port addend of loop position (l, i) at index l·P + i (P positions a row): the middle
    /// piece of the row's product that lands below it, else the low piece of the one landing at
    /// it, else 0.
    pub loop_addend: Vec<Signal<Out, Bits<Y_BITS>>>,
    /// The low piece of product (l, w), at the product's index, for column l + c_w's addend (0
    /// where it goes to a loop DSP, [`low_in_loop`]).
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

/// Whether window w's low pieces go to the C port of the loop DSP at their own position c_w
/// rather than to the column's addend: they do where no middle piece lands (c_(w−1) = c_w − 2, or
/// w = 0), so that every loop DSP adds something. A DSP48E1 whose addend is constant has no
/// post-adder, so its output register is packed as MREG, whose clock-to-out (1.67 ns in the
/// 7-series cell delays) is five times PREG's (0.33 ns), and it starts stage 2's path.
pub fn low_in_loop(window: usize) -> bool {
    window == 0 || wide::landing(window).0 == wide::landing(window - 1).0 + 2
}

impl WindowPieces {
    /// The pieces of `rows` (k) rows of `windows` products, over `positions` loop positions.
    pub fn new(rows: usize, windows: usize, positions: usize) -> Self {
        assert!(wide::landing(windows - 1).0 + 1 < positions, "every middle piece has a position");
        WindowPieces {
            products: many(rows * windows),
            loop_addend: many(rows * positions),
            low: many(rows * windows),
            top: many(rows * windows),
            limbs_per_step: Constant::new((rows as u64).into()),
        }
    }

    fn rows(&self) -> usize {
        self.limbs_per_step.val().to_u64() as usize
    }

    /// For every product: its index, the loop addends its middle piece and (if
    /// [`low_in_loop`]) its low piece go to, and its shift.
    fn wiring(&self) -> Vec<Wiring> {
        let rows = self.rows();
        let (windows, positions) = (self.products.len() / rows, self.loop_addend.len() / rows);
        let mut wiring = Vec::new();
        for l in 0..rows {
            for w in 0..windows {
                let (column, shift) = wide::landing(w);
                let position = l * positions + column;
                let low_to = low_in_loop(w).then_some(position);
                wiring.push(Wiring { product: l * windows + w, mid_to: position + 1, low_to, shift });
            }
        }
        wiring
    }
}

/// Where one product's pieces go (the top piece: to the addends, by the product's index).
struct Wiring {
    product: usize,
    mid_to: usize,
    low_to: Option<usize>,
    shift: u32,
}

impl Logic for WindowPieces {
    fn update(&mut self) {
        for a in &mut self.loop_addend {
            a.next = 0.into();
        }
        for Wiring { product: p, mid_to, low_to, shift } in self.wiring() {
            let (low, mid, top) = wide::split(self.products[p].val().to_u64(), shift);
            self.low[p].next = Bits::<LOW_BITS>::from(low);
            if let Some(position) = low_to {
                self.low[p].next = 0.into();
                self.loop_addend[position].next = Bits::<Y_BITS>::from(low);
            }
            self.loop_addend[mid_to].next = Bits::<Y_BITS>::from(mid);
            self.top[p].next = Bits::<TOP_BITS>::from(top);
        }
    }
    fn connect(&mut self) {
        for a in &mut self.loop_addend {
            a.connect();
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
        for a in 0..self.loop_addend.len() {
            writeln!(v, "   loop_addend${a} = {Y_BITS}'d0;").unwrap();
        }
        for Wiring { product: p, mid_to, low_to, shift } in self.wiring() {
            let low_bits = LOW_BITS - shift as usize;
            let low = format!("products${p}[{}:0] << {shift}", low_bits - 1);
            match low_to {
                Some(position) => {
                    writeln!(v, "   low${p} = {LOW_BITS}'d0;").unwrap();
                    writeln!(v, "   loop_addend${position} = {low};").unwrap();
                }
                None => writeln!(v, "   low${p} = {low};").unwrap(),
            }
            writeln!(v, "   loop_addend${mid_to} = products${p}[{}:{low_bits}];", low_bits + Y_BITS - 1).unwrap();
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
    // in rust-hdl and, through the Verilog, in Verilator); here that every loop position up to
    // the last middle piece's gets exactly one piece.
    #[test]
    fn each_position_gets_one_piece() {
        let (rows, windows) = (3, 92);
        let positions = positions(windows, 121);
        let pieces = WindowPieces::new(rows, windows, positions);
        let wiring = pieces.wiring();
        let mut targets: Vec<usize> =
            wiring.iter().map(|w| w.mid_to).chain(wiring.iter().filter_map(|w| w.low_to)).collect();
        targets.sort_unstable();
        let last_mid = wide::landing(windows - 1).0 + 1;
        let expected: Vec<usize> = (0..rows).flat_map(|l| (0..=last_mid).map(move |i| l * positions + i)).collect();
        assert_eq!(targets, expected);
    }

    #[test]
    fn window_pieces_is_synthesizable() {
        let mut uut = WindowPieces::new(2, 4, positions(4, 5));
        uut.connect_all();
        yosys_validate("ecrt_window_pieces", &generate_verilog(&uut)).unwrap();
    }
}
