//! The DSP48E1 leaves: `p = c + x·y` with an unsigned `x` of up to 24 bits (the 25-bit port) and
//! an unsigned 17-bit `y` (the 18-bit port), registered or combinational. rust-hdl's own `*` stops at 16 bits,
//! so each leaf is a small custom Verilog module with a Rust model of the same arithmetic.

use rust_hdl::prelude::*;

/// Width of the wide factor: redundant limbs of up to 18 bits.
pub const X_BITS: usize = 18;
/// Width of the narrow factor: exact 17-bit digits.
pub const Y_BITS: usize = 17;
/// Width of the addend and of the result.
pub const P_BITS: usize = 36;

/// Bits of a column sum: < k·(2^36 + 2^17 + 2^17 + 2^23) + 2^19 < 2^41 for k ≤ 16.
pub const SUM_BITS: usize = 42;

fn model<const C: usize, const X: usize, const Y: usize, const P: usize>(
    c: Bits<C>,
    x: Bits<X>,
    y: Bits<Y>,
) -> Bits<P> {
    let p = c.to_u64().wrapping_add(x.to_u64() * y.to_u64());
    Bits::<P>::from(p & ((1u64 << P) - 1))
}

/// Width of the folding multiplier's loop factor: a redundant limb of T (< 2^18 + 2^7).
pub const T_BITS: usize = 19;
/// Width of a window of the multiplicand B (< 2^24, `ecrt_golden::hw::wide`).
pub const WINDOW_BITS: usize = 24;
/// Width of an a·b product, a digit times a window (< 2^41).
pub const AB_BITS: usize = 41;
/// Width of the folding multiplier's loop product plus its addend, an a·b product's middle piece
/// (< 2^36 + 2^17).
pub const LOOP_BITS: usize = 37;

/// `p <= c + x·y` on the rising clock edge, with an unsigned `x` of `XB` bits on the 25-bit port,
/// a `CB`-bit addend and a `PB`-bit result: a DSP48E1 with its P register (Yosys and Vivado fold
/// the adder and the register into the DSP).
#[derive(LogicBlock, Default)]
pub struct RegisteredMulAdd<const XB: usize, const CB: usize, const PB: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The wide factor (unsigned).
    pub x: Signal<In, Bits<XB>>,
    /// The narrow factor (17 bits, unsigned).
    pub y: Signal<In, Bits<Y_BITS>>,
    /// The addend.
    pub c: Signal<In, Bits<CB>>,
    /// c + x·y, registered.
    pub p: Signal<Out, Bits<PB>>,
}

/// The digit-serial leaf: an 18-bit redundant limb times a 17-bit digit, plus a 36-bit addend.
pub type MulAddReg = RegisteredMulAdd<X_BITS, P_BITS, P_BITS>;

/// The folding multiplier's a·b leaf: a 24-bit window of B times a 17-bit digit of A.
pub type WindowMulReg = RegisteredMulAdd<WINDOW_BITS, P_BITS, AB_BITS>;

/// The folding multiplier's loop leaf: a 19-bit limb of T times a limb of M̂, plus the middle
/// piece of an a·b product registered the cycle before.
pub type LoopMulAddReg = RegisteredMulAdd<T_BITS, Y_BITS, LOOP_BITS>;

impl<const XB: usize, const CB: usize, const PB: usize> Logic for RegisteredMulAdd<XB, CB, PB> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self.p.next = model(self.c.val(), self.x.val(), self.y.val());
        }
    }
    fn connect(&mut self) {
        self.p.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "initial begin\n   p = {PB}'h0;\nend\n\nalways @(posedge clock) begin\n   p <= c + x * y;\nend\n"
        ))
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "mul_add_reg".into(),
            clock: "clock".into(),
            inputs: vec!["x".into(), "y".into(), "c".into()],
            outputs: vec!["p".into()],
        }]
    }
}

/// `p <= c + m`, `m <= a·b`, `a <= x`, `b <= y` on the rising clock edge: a DSP48E1 with every
/// stage registered (AREG, BREG, MREG, PREG), so that a path into or out of it holds nothing but
/// routing and the port's setup or clock-to-out. `c` is not registered: it comes from another
/// DSP's P (a cascade) or from a register in the fabric. `MB` is the product's exact width,
/// XB + 17: a register with bits that are constant 0 stops Yosys from packing the adder after it.
/// Without its A register ([`Self::with_a_register`]) it multiplies x as it comes (AREG = 0):
/// `m <= x·b`, a cycle less, for an x from a register in the fabric (its setup before the M
/// register is 1.42 ns in the 7-series cell delays).
#[derive(LogicBlock)]
pub struct PipelinedMulAdd<const XB: usize, const MB: usize, const CB: usize, const PB: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The wide factor (unsigned), taken into the A register.
    pub x: Signal<In, Bits<XB>>,
    /// The narrow factor (17 bits, unsigned), taken into the B register.
    pub y: Signal<In, Bits<Y_BITS>>,
    /// The addend, added to the M register's product.
    pub c: Signal<In, Bits<CB>>,
    /// c + a·b, three clock edges after x and y, one after c (without the A register, two after
    /// x and three after y).
    pub p: Signal<Out, Bits<PB>>,
    a: Signal<Local, Bits<XB>>,
    b: Signal<Local, Bits<Y_BITS>>,
    m: Signal<Local, Bits<MB>>,
    no_a_register: Constant<bool>,
}

impl<const XB: usize, const MB: usize, const CB: usize, const PB: usize> PipelinedMulAdd<XB, MB, CB, PB> {
    /// The leaf with its A register, or without it: x then multiplied as it comes.
    pub fn with_a_register(a_register: bool) -> Self {
        PipelinedMulAdd {
            clock: Default::default(),
            x: Default::default(),
            y: Default::default(),
            c: Default::default(),
            p: Default::default(),
            a: Default::default(),
            b: Default::default(),
            m: Default::default(),
            no_a_register: Constant::new(!a_register),
        }
    }
}

impl<const XB: usize, const MB: usize, const CB: usize, const PB: usize> Default for PipelinedMulAdd<XB, MB, CB, PB> {
    fn default() -> Self {
        Self::with_a_register(true)
    }
}

/// The deep loop's leaf: a limb of T (`XB` bits: t_0 has 17, t_1 18, the others 19) times a limb
/// of M̂, plus the column's sum so far (the DSP above it in the cascade, or the column's addend).
pub type CascadeMulAdd<const XB: usize, const MB: usize> = PipelinedMulAdd<XB, MB, SUM_BITS, SUM_BITS>;

/// The deep loop's a·b leaf: a 24-bit window of B times a 17-bit digit of A (its addend is 0).
pub type PipelinedWindowMul = PipelinedMulAdd<WINDOW_BITS, AB_BITS, 1, AB_BITS>;

impl<const XB: usize, const MB: usize, const CB: usize, const PB: usize> Logic for PipelinedMulAdd<XB, MB, CB, PB> {
    fn update(&mut self) {
        // Local and output signals read back what was written in this pass: every register's next
        // value is formed before any is written.
        if self.clock.pos_edge() {
            let a = if self.no_a_register.val() { self.x.val() } else { self.a.val() };
            let m = model(Bits::<1>::default(), a, self.b.val());
            let p = Bits::<PB>::from(self.c.val().to_u64().wrapping_add(self.m.val().to_u64()) & ((1u64 << PB) - 1));
            self.a.next = self.x.val();
            self.b.next = self.y.val();
            self.m.next = m;
            self.p.next = p;
        }
    }
    fn connect(&mut self) {
        self.p.connect();
        self.a.connect();
        self.b.connect();
        self.m.connect();
    }
    fn hdl(&self) -> Verilog {
        let (a_init, a_load, factor) = if self.no_a_register.val() {
            (String::new(), "", "x")
        } else {
            (format!("   a = {XB}'h0;\n"), "   a <= x;\n", "a")
        };
        Verilog::Custom(format!(
            "initial begin\n{a_init}   b = {Y_BITS}'h0;\n   m = {MB}'h0;\n   p = {PB}'h0;\nend\n\n\
             always @(posedge clock) begin\n{a_load}   b <= y;\n   m <= {factor} * b;\n   p <= c + m;\nend\n"
        ))
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "pipelined_mul_add".into(),
            clock: "clock".into(),
            inputs: vec!["x".into(), "y".into(), "c".into()],
            outputs: vec!["p".into()],
        }]
    }
}

/// `m <= x·b`, `b <= y` on the rising clock edge, and `p` the product's low `PB` bits: a DSP48E1
/// with its B and M registers only, for a product needed two cycles after its wide factor (the
/// deep loop's classic quotient, formed from a column addend in time for the next turn). The A
/// port is unregistered: with MREG it needs its input 1.42 ns before the clock in the 7-series
/// cell delays, which a path from a register holds. The M register's clock-to-out is slower
/// than P's (1.67 ns against 0.33 ns), so only a register should follow it.
#[derive(LogicBlock, Default)]
pub struct PipelinedMul<const XB: usize, const MB: usize, const PB: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The wide factor (unsigned), a cycle after `y`.
    pub x: Signal<In, Bits<XB>>,
    /// The narrow factor (17 bits, unsigned), taken into the B register.
    pub y: Signal<In, Bits<Y_BITS>>,
    /// The low `PB` bits of x·b, a clock edge after x.
    pub p: Signal<Out, Bits<PB>>,
    b: Signal<Local, Bits<Y_BITS>>,
    m: Signal<Local, Bits<MB>>,
}

/// The deep loop's classic quotient: lo17(t′_0·N′).
pub type QuotientMul = PipelinedMul<Y_BITS, 34, Y_BITS>;

impl<const XB: usize, const MB: usize, const PB: usize> Logic for PipelinedMul<XB, MB, PB> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let m = model(Bits::<1>::default(), self.x.val(), self.b.val());
            self.b.next = self.y.val();
            self.m.next = m;
        }
        self.p.next = Bits::<PB>::from(self.m.val().to_u64() & ((1u64 << PB) - 1));
    }
    fn connect(&mut self) {
        self.p.connect();
        self.b.connect();
        self.m.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "initial begin\n   b = {Y_BITS}'h0;\n   m = {MB}'h0;\nend\n\n\
             always @(posedge clock) begin\n   b <= y;\n   m <= x * b;\nend\n\n\
             always @(*) p = m[{}:0];\n",
            PB - 1
        ))
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "pipelined_mul".into(),
            clock: "clock".into(),
            inputs: vec!["x".into(), "y".into()],
            outputs: vec!["p".into()],
        }]
    }
}

/// `p = c + x·y`, combinational: a DSP48E1 without its P register, for the one place where the
/// product must be added and redistributed in the same cycle.
#[derive(LogicBlock, Default)]
pub struct MulAdd {
    /// The wide factor (up to 18 bits, unsigned).
    pub x: Signal<In, Bits<X_BITS>>,
    /// The narrow factor (17 bits, unsigned).
    pub y: Signal<In, Bits<Y_BITS>>,
    /// The addend.
    pub c: Signal<In, Bits<P_BITS>>,
    /// c + x·y.
    pub p: Signal<Out, Bits<P_BITS>>,
}

impl Logic for MulAdd {
    fn update(&mut self) {
        self.p.next = model(self.c.val(), self.x.val(), self.y.val());
    }
    fn connect(&mut self) {
        self.p.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom("always @(*) begin\n   p = c + x * y;\nend\n".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::simulate;

    #[test]
    fn mul_add_reg_is_synthesizable() {
        let mut uut = MulAddReg::default();
        uut.connect_all();
        yosys_validate("ecrt_mul_add_reg", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn loop_mul_add_reg_is_synthesizable() {
        let mut uut = LoopMulAddReg::default();
        uut.connect_all();
        yosys_validate("ecrt_loop_mul_add_reg", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn window_mul_reg_is_synthesizable() {
        let mut uut = WindowMulReg::default();
        uut.connect_all();
        yosys_validate("ecrt_window_mul_reg", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn loop_leaf_takes_the_widest_limb_and_addend() {
        let (x, y, c) = ((1u64 << 19) - 1, (1u64 << 17) - 1, (1u64 << 17) - 1);
        let outputs = simulate(LoopMulAddReg::default(), 2, move |uut, _| {
            uut.x.next = x.into();
            uut.y.next = y.into();
            uut.c.next = c.into();
            uut.p.val().to_u64()
        });
        assert_eq!(outputs[1], c + x * y);
        assert!(c + x * y < 1 << LOOP_BITS);
    }

    #[test]
    fn pipelined_mul_is_synthesizable() {
        let mut uut = QuotientMul::default();
        uut.connect_all();
        yosys_validate("ecrt_pipelined_mul", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn pipelined_mul_multiplies_x_by_the_previous_y() {
        let cases = [(0u64, 5u64), ((1 << 17) - 1, (1 << 17) - 1), (12345, 54321), (99_999, 3), (7, 0)];
        let outputs = simulate(QuotientMul::default(), cases.len() + 1, move |uut, i| {
            if let Some(&(x, y)) = cases.get(i) {
                uut.x.next = x.into();
                uut.y.next = y.into();
            }
            uut.p.val().to_u64()
        });
        for i in 1..cases.len() {
            assert_eq!(outputs[i + 1], (cases[i].0 * cases[i - 1].1) & ((1 << 17) - 1), "case {i}");
        }
    }

    #[test]
    fn mul_add_is_synthesizable() {
        let mut uut = MulAdd::default();
        uut.connect_all();
        yosys_validate("ecrt_mul_add", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn registered_leaf_computes_c_plus_x_times_y_one_cycle_later() {
        let cases = [
            (0u64, 0u64, 0u64),
            ((1 << 18) - 1, (1 << 17) - 1, (1 << 36) - 1 - ((1 << 35) - (1 << 18) - (1 << 17) + 1)),
            (12345, 54321, 99),
            ((1 << 17) + 3, 77777, 1 << 35),
        ];
        let outputs = simulate(MulAddReg::default(), cases.len() + 1, move |uut, i| {
            if let Some(&(x, y, c)) = cases.get(i) {
                uut.x.next = x.into();
                uut.y.next = y.into();
                uut.c.next = c.into();
            }
            uut.p.val().to_u64()
        });
        for (i, &(x, y, c)) in cases.iter().enumerate() {
            assert_eq!(outputs[i + 1], (c + x * y) & ((1 << 36) - 1), "case {i}");
        }
    }

    #[test]
    fn a_leaf_without_its_a_register_is_synthesizable() {
        let mut uut = CascadeMulAdd::<18, 35>::with_a_register(false);
        uut.connect_all();
        yosys_validate("ecrt_cascade_mul_add_no_areg", &generate_verilog(&uut)).unwrap();
    }

    /// With its A register p shows c + x·y three edges after x and y; without it, x two edges
    /// before p and y three.
    #[test]
    fn a_leaf_without_its_a_register_takes_x_a_cycle_later() {
        let cases = [(0u64, 0u64), ((1 << 18) - 1, (1 << 17) - 1), (12345, 54321), ((1 << 17) + 3, 77777)];
        let c = 1u64 << 40;
        for a_register in [true, false] {
            let uut = CascadeMulAdd::<18, 35>::with_a_register(a_register);
            let x_lag = usize::from(!a_register);
            let outputs = simulate(uut, cases.len() + 4, move |uut, i| {
                uut.x.next = i.checked_sub(x_lag).and_then(|i| cases.get(i)).map_or(0, |&(x, _)| x).into();
                uut.y.next = cases.get(i).map_or(0, |&(_, y)| y).into();
                uut.c.next = c.into();
                uut.p.val().to_u64()
            });
            for (i, &(x, y)) in cases.iter().enumerate() {
                assert_eq!(outputs[i + 3], c + x * y, "case {i}, A register {a_register}");
            }
        }
    }
}
