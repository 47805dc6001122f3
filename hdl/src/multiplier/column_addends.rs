//! The deep-loop multiplier's column addends ([`super::deep_mul`]): each column's t_(j+k) plus
//! the pieces of the a·b products landing in it. Every product of a digit and a window of B is
//! cut into its three grid-aligned pieces (`ecrt_golden::hw::wide::split`: the low piece lands in
//! column l + c_w, the middle one a column up, the top one two up), each column's pieces are added
//! by a balanced tree of two-input adders, one register a level, and the last level adds t_(j+k):
//! no path holds more than one adder of a column's width. Where the limb each column adds is known
//! as early as the products (the delay engine's, a wide REDC's digit of C_hi), it joins the
//! pieces' trees instead ([`BaseLevel::WithPieces`]): a level fewer where the trees are on the path
//! that sets a multiplication's lead. Each register is read at the width its
//! largest sum needs, so that synthesis sees every adder at its own width from the start (read
//! whole, the unused high bits were found one level of the tree per pass of Yosys' `opt` loop,
//! a pass over the whole multiplier each). The products do not depend on T, so their trees run
//! ahead of the loop; their depth is padded with registers to what the multiplier's timing asks
//! for. Written from the shape, like [`super::fold_base`]: which piece lands where is fixed by it.

use crate::many;
use crate::multiplier::fold_base::BASE_BITS;
use crate::multiplier::mul_add::{AB_BITS, SUM_BITS, T_BITS};
use ecrt_golden::hw::wide;
use rust_hdl::prelude::*;
use std::fmt::Write;

/// One of the three pieces of a product.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Piece {
    Low,
    Mid,
    Top,
}

/// An input of a register of the trees.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Term {
    /// A piece of product p, whose window lands with `shift`.
    Piece { product: usize, piece: Piece, shift: u32 },
    /// The limb column j adds as it is, with its pieces.
    Base(usize),
    /// Register r of the trees.
    Reg(usize),
}

/// The trees: each register's one or two inputs and the bits its largest sum needs, and each
/// column's last register of its terms (none where none lands).
struct Plan {
    regs: Vec<(Term, Option<Term>)>,
    widths: Vec<u32>,
    columns: Vec<Option<usize>>,
}

/// The largest value of a piece of a product < 2^AB_BITS whose window lands with `shift`.
fn piece_max(piece: Piece, shift: u32) -> u64 {
    let low_bits = wide::LIMB_BITS - shift;
    match piece {
        Piece::Low => ((1 << low_bits) - 1) << shift,
        Piece::Mid => (1 << wide::LIMB_BITS) - 1,
        Piece::Top => (1 << (AB_BITS as u32 - low_bits - wide::LIMB_BITS)) - 1,
    }
}

impl Plan {
    fn new(rows: usize, windows: usize, columns: usize, levels: usize, base: BaseLevel) -> Plan {
        let mut terms: Vec<Vec<Term>> = vec![Vec::new(); columns];
        for l in 0..rows {
            for w in 0..windows {
                let (column, shift) = wide::landing(w);
                let product = l * windows + w;
                for (up, piece) in [Piece::Low, Piece::Mid, Piece::Top].into_iter().enumerate() {
                    if let Some(t) = terms.get_mut(l + column + up) {
                        t.push(Term::Piece { product, piece, shift });
                    }
                }
            }
        }
        if base == BaseLevel::WithPieces {
            for (j, t) in terms.iter_mut().enumerate() {
                t.push(Term::Base(j));
            }
        }
        let mut regs = Vec::new();
        let mut maxima: Vec<u64> = Vec::new();
        let max = |maxima: &[u64], term: Term| match term {
            Term::Reg(r) => maxima[r],
            Term::Piece { piece, shift, .. } => piece_max(piece, shift),
            Term::Base(_) => (1 << T_BITS) - 1,
        };
        for _ in 0..levels {
            for column in &mut terms {
                *column = column
                    .chunks(2)
                    .map(|pair| {
                        regs.push((pair[0], pair.get(1).copied()));
                        maxima.push(pair.iter().map(|&t| max(&maxima, t)).sum());
                        Term::Reg(regs.len() - 1)
                    })
                    .collect();
            }
        }
        let widths: Vec<u32> = maxima.iter().map(|m| u64::BITS - m.leading_zeros()).collect();
        assert!(widths.iter().all(|&w| w as usize <= BASE_BITS), "a column's pieces overflow {BASE_BITS} bits");
        let columns = terms
            .iter()
            .map(|t| match t.as_slice() {
                [] => None,
                [Term::Reg(r)] => Some(*r),
                _ => panic!("{levels} levels cannot add a column of {} terms", t.len()),
            })
            .collect();
        Plan { regs, widths, columns }
    }
}

pub use ecrt_golden::hw::{tree_levels, tree_levels_with_base};

/// Where a column's limb of T (`base`) is added.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BaseLevel {
    /// In a level of its own after the pieces' trees, a cycle after it arrives (it depends on T).
    Last,
    /// With the pieces, as they arrive (known as early as the products).
    WithPieces,
}

impl BaseLevel {
    /// The fewest levels that add `rows` rows of pieces and the base this way.
    pub fn fewest_levels(self, rows: usize) -> usize {
        match self {
            BaseLevel::Last => tree_levels(rows),
            BaseLevel::WithPieces => tree_levels_with_base(rows),
        }
    }
}

/// k rows of W a·b products and T's limbs in, every column's addend out.
#[derive(LogicBlock)]
pub struct ColumnAddends {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Product (l, w) at index l·W + w: row l's digit times window w, `levels` cycles before
    /// its addends.
    pub products: Vec<Signal<In, Bits<AB_BITS>>>,
    /// The limb of T each column adds as it is (t_(j+k)): a cycle before its addends
    /// ([`BaseLevel::Last`]) or with the products ([`BaseLevel::WithPieces`]).
    pub base: Vec<Signal<In, Bits<T_BITS>>>,
    /// Each column's addend (< 2^28).
    pub addends: Vec<Signal<Out, Bits<SUM_BITS>>>,
    regs: Vec<Signal<Local, Bits<BASE_BITS>>>,
    last: Vec<Signal<Local, Bits<BASE_BITS>>>,
    /// k, the levels and whether the base is added with the pieces (constants of the shape, kept
    /// where the Verilog writer can read them).
    rows: Constant<Bits<8>>,
    levels: Constant<Bits<8>>,
    base_with_pieces: Constant<bool>,
}

impl ColumnAddends {
    /// The addends for `rows` (k) rows of `windows` products over `columns` columns, the products
    /// `levels` cycles ahead (at least [`BaseLevel::fewest_levels`]).
    pub fn new(rows: usize, windows: usize, columns: usize, levels: usize, base: BaseLevel) -> Self {
        assert!(levels >= base.fewest_levels(rows), "{levels} levels cannot add {} pieces and T", 3 * rows);
        let plan = Plan::new(rows, windows, columns, Self::rounds(levels, base), base);
        ColumnAddends {
            clock: Default::default(),
            products: many(rows * windows),
            base: many(columns),
            addends: many(columns),
            regs: many(plan.regs.len()),
            last: many(if base == BaseLevel::Last { columns } else { 0 }),
            rows: Constant::new((rows as u64).into()),
            levels: Constant::new((levels as u64).into()),
            base_with_pieces: Constant::new(base == BaseLevel::WithPieces),
        }
    }

    /// Levels of the trees: all of them, or all but the base's own.
    fn rounds(levels: usize, base: BaseLevel) -> usize {
        if base == BaseLevel::Last {
            levels - 1
        } else {
            levels
        }
    }

    fn base_level(&self) -> BaseLevel {
        if self.base_with_pieces.val() {
            BaseLevel::WithPieces
        } else {
            BaseLevel::Last
        }
    }

    fn plan(&self) -> Plan {
        let rows = self.rows.val().to_u64() as usize;
        let (levels, base) = (self.levels.val().to_u64() as usize, self.base_level());
        Plan::new(rows, self.products.len() / rows, self.addends.len(), Self::rounds(levels, base), base)
    }

    fn value(&self, term: Term) -> u64 {
        match term {
            Term::Reg(r) => self.regs[r].val().to_u64(),
            Term::Base(j) => self.base[j].val().to_u64(),
            Term::Piece { product, piece, shift } => {
                let (low, mid, top) = wide::split(self.products[product].val().to_u64(), shift);
                match piece {
                    Piece::Low => low,
                    Piece::Mid => mid,
                    Piece::Top => top,
                }
            }
        }
    }
}

fn verilog_term(plan: &Plan, term: Term) -> String {
    match term {
        Term::Reg(r) => format!("regs${r}[{}:0]", plan.widths[r] - 1),
        Term::Base(j) => format!("base${j}"),
        Term::Piece { product, piece, shift } => {
            let low_bits = wide::LIMB_BITS - shift;
            match piece {
                Piece::Low if shift == 0 => format!("products${product}[16:0]"),
                Piece::Low => format!("{{products${product}[{}:0], {shift}'d0}}", low_bits - 1),
                Piece::Mid => format!("products${product}[{}:{low_bits}]", low_bits + 16),
                Piece::Top => format!("products${product}[{}:{}]", AB_BITS - 1, low_bits + 17),
            }
        }
    }
}

impl Logic for ColumnAddends {
    fn update(&mut self) {
        let plan = self.plan();
        let mask = (1 << BASE_BITS) - 1;
        // Local signals read back what was written in this pass: every register's next value is
        // formed before any is written.
        if self.clock.pos_edge() {
            let regs: Vec<u64> =
                plan.regs.iter().map(|&(a, b)| self.value(a) + b.map_or(0, |b| self.value(b))).collect();
            // The last level's sums (none where the base is added with the pieces).
            let last: Vec<u64> = (plan.columns.iter().enumerate().take(self.last.len()))
                .map(|(j, pieces)| self.base[j].val().to_u64() + pieces.map_or(0, |r| self.regs[r].val().to_u64()))
                .collect();
            for (reg, sum) in self.regs.iter_mut().chain(&mut self.last).zip(regs.into_iter().chain(last)) {
                reg.next = Bits::<BASE_BITS>::from(sum & mask);
            }
        }
        for j in 0..self.addends.len() {
            let addend = match (self.last.get(j), plan.columns[j]) {
                (Some(last), _) => last.val().to_u64(),
                (None, Some(r)) => self.regs[r].val().to_u64(),
                (None, None) => 0,
            };
            self.addends[j].next = Bits::<SUM_BITS>::from(addend);
        }
    }
    fn connect(&mut self) {
        for a in &mut self.addends {
            a.connect();
        }
        for r in self.regs.iter_mut().chain(&mut self.last) {
            r.connect();
        }
    }
    fn hdl(&self) -> Verilog {
        let plan = self.plan();
        let mut v = String::from("initial begin\n");
        for r in 0..plan.regs.len() {
            writeln!(v, "   regs${r} = {BASE_BITS}'h0;").unwrap();
        }
        for j in 0..self.last.len() {
            writeln!(v, "   last${j} = {BASE_BITS}'h0;").unwrap();
        }
        let with_pieces = self.base_level() == BaseLevel::WithPieces;
        v.push_str("end\n\nalways @(posedge clock) begin\n");
        for (r, &(a, b)) in plan.regs.iter().enumerate() {
            match b {
                Some(b) => {
                    writeln!(v, "   regs${r} <= {} + {};", verilog_term(&plan, a), verilog_term(&plan, b)).unwrap()
                }
                None => writeln!(v, "   regs${r} <= {};", verilog_term(&plan, a)).unwrap(),
            }
        }
        for (j, pieces) in plan.columns.iter().enumerate().take(self.last.len()) {
            match pieces {
                Some(r) => writeln!(v, "   last${j} <= base${j} + {};", verilog_term(&plan, Term::Reg(*r))).unwrap(),
                None => writeln!(v, "   last${j} <= base${j};").unwrap(),
            }
        }
        v.push_str("end\n\nalways @(*) begin\n");
        for (j, column) in plan.columns.iter().enumerate() {
            match (with_pieces, column) {
                (false, _) => writeln!(v, "   addends${j} = last${j};").unwrap(),
                (true, Some(r)) => writeln!(v, "   addends${j} = {};", verilog_term(&plan, Term::Reg(*r))).unwrap(),
                (true, None) => writeln!(v, "   addends${j} = {SUM_BITS}'d0;").unwrap(),
            }
        }
        v.push_str("end\n");
        Verilog::Custom(v)
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "column_addends".into(),
            clock: "clock".into(),
            inputs: (0..self.products.len())
                .map(|p| format!("products${p}"))
                .chain((0..self.base.len()).map(|j| format!("base${j}")))
                .collect(),
            outputs: (0..self.addends.len()).map(|j| format!("addends${j}")).collect(),
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::simulate;

    const BOTH: [BaseLevel; 2] = [BaseLevel::Last, BaseLevel::WithPieces];

    #[test]
    fn column_addends_is_synthesizable() {
        for (name, base) in ["last", "with_pieces"].into_iter().zip(BOTH) {
            let mut uut = ColumnAddends::new(2, 4, 10, base.fewest_levels(2) + 1, base);
            uut.connect_all();
            yosys_validate(&format!("ecrt_column_addends_{name}"), &generate_verilog(&uut)).unwrap();
        }
    }

    #[test]
    fn a_column_adds_its_limb_of_t_and_every_piece_landing_in_it() {
        for base in BOTH {
            adds_every_piece(base);
        }
    }

    /// The limb arrives a cycle before the addends, or with the products.
    fn adds_every_piece(base_level: BaseLevel) {
        let (rows, windows, columns) = (3, 5, 12);
        let levels = base_level.fewest_levels(rows) + 1;
        let base_cycle = if base_level == BaseLevel::Last { levels - 1 } else { 0 };
        let digits = [0x1_2345u64, 0x1_ffff, 0x0_0001];
        let window_values = [0xff_ffffu64, 0x12_3456, 0x80_0001, 0x00_0007, 0x7f_0f0f];
        let base: Vec<u64> = (0..columns as u64).map(|j| (1 << 18) + 1000 * j).collect();
        let mut expected = base.clone();
        for (l, &d) in digits.iter().enumerate() {
            wide::add_row(&mut expected, l, d, &window_values);
        }
        let t = base.clone();
        let uut = ColumnAddends::new(rows, windows, columns, levels, base_level);
        let outputs = simulate(uut, levels + 2, move |uut, cycle| {
            for (l, &digit) in digits.iter().enumerate() {
                for (w, &window) in window_values.iter().enumerate() {
                    let product = if cycle == 0 { digit * window } else { 0 };
                    uut.products[l * windows + w].next = product.into();
                }
            }
            for (j, &limb) in t.iter().enumerate() {
                uut.base[j].next = if cycle == base_cycle { limb.into() } else { 0.into() };
            }
            uut.addends.iter().map(|s| s.val().to_u64()).collect::<Vec<_>>()
        });
        assert_eq!(outputs[levels], expected, "the addends {levels} edges after the products ({base_level:?})");
        assert!(outputs[levels - 1].iter().all(|&s| s == 0), "not a cycle earlier");
        assert!(outputs[levels + 1].iter().all(|&s| s == 0), "nor a cycle later");
    }

    /// The busiest column of a 4096-bit operand's fits the levels its base adds among its pieces.
    #[test]
    fn a_full_width_column_fits_its_levels_with_its_base_among_its_pieces() {
        for rows in 1..=8 {
            let windows = wide::window_count(250);
            let plan = Plan::new(rows, windows, rows + 250, tree_levels_with_base(rows), BaseLevel::WithPieces);
            assert!(plan.columns.iter().all(Option::is_some), "k = {rows}");
        }
    }

    #[test]
    fn every_register_holds_its_largest_sum_at_the_width_it_is_read() {
        // Every product at 2^41 − 1, above any digit times window: each piece at its largest.
        let (rows, windows, columns) = (4, 7, 16);
        for base in BOTH {
            let levels = base.fewest_levels(rows) + 1;
            let uut = ColumnAddends::new(rows, windows, columns, levels, base);
            let overflows = simulate(uut, levels + 1, |uut, _| {
                for p in &mut uut.products {
                    p.next = ((1u64 << AB_BITS) - 1).into();
                }
                for b in &mut uut.base {
                    b.next = ((1u64 << T_BITS) - 1).into();
                }
                let plan = uut.plan();
                (uut.regs.iter().zip(&plan.widths)).filter(|(r, &w)| r.val().to_u64() >> w != 0).count()
            });
            assert_eq!(overflows, vec![0; levels + 1], "{base:?}");
        }
    }
}
