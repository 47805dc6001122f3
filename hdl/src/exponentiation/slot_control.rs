//! One exponentiation slot: a key's constants, the base, the exponent's windows, the window table,
//! and the sequencer that feeds the multiplier one Montgomery multiplication after another.
//!
//! Schedule: fixed-window, left to right (`ecrt_golden::hw::Schedule::FixedWindow`), in which every
//! window costs w squarings and one table multiplication, also a zero window, so the sequence of
//! operations depends only on (exponent bits, w). Operations, for W = ⌈L/w⌉ windows:
//! 0. c̃ = REDC(c) = c·R^(−1) mod N for a base c < 2^(17L)·N of 2·S limbs (the ciphertext), split at
//!    limb L, the multiplier's operand width;
//! 1. x̃ = c̃·R³ = c·R (into the Montgomery domain), stored as T[1];
//! 2. T[j] = T[j−1]·x̃ for j = 2 … 2^w − 1 (T[0] = R mod N is loaded with the key);
//! 3. acc = T[top window]; then per remaining window: w squarings, one multiplication by T[window];
//! 4. acc·1 (out of the domain): x = c^e mod N, fully reduced (< N for a base coprime to N).
//!
//! The segmented schedule (`ecrt_golden::hw::Schedule::RightToLeft`, one segment: the slot runs
//! the whole exponent) replaces steps 2 and 3: acc = R mod N (T[0]), sq = x̃ (T[2]); per exponent
//! bit, least significant first, acc·sq (kept as acc, in T[1], when the bit is 1) and sq·sq, two
//! multiplications whatever the bit; then acc·1. The exponent loads in 1-bit windows.
//!
//! A decryption slot (`decrypt`) goes on with the eCRT path of its prime (golden model:
//! `ecrt_golden::hw::EcrtHwKey`), switching the multiplier's modulus per operation:
//! 5. L = REDC_{R−p}(x − 1) = (x − 1)/p, the exact division;
//! 6. term = L·(t_p·R mod n)·R^(−1) mod n = L·t_p mod n, < n: the slot's result.

use crate::fanout::replicas::Replicas;
use crate::fanout::{copies, LIMBS_PER_COPY};
use crate::many;
use crate::multiplier::mul_add::{X_BITS, Y_BITS};
use ecrt_golden::hw::Schedule;
use rust_hdl::prelude::*;

mod keys;
mod operands;
mod sequencer;
mod table;

/// Bits of a table address and of a window: windows up to 6 bits.
pub use ecrt_contract::config::WINDOW_BITS_MAX;
/// Bits of the window counter.
pub const WINDOW_COUNT_BITS: usize = 12;

/// What a load cycle writes (`load_target`, encoded as the variant's index): the contract's
/// `LoadTarget` (its docs say what each holds), in the same order (a test checks it). Limb vectors
/// shift in least significant limb first, exponent windows most significant window first.
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum LoadTarget {
    Modulus,
    NPrime,
    ModulusDiv,
    NPrimeDiv,
    ModulusN,
    NPrimeN,
    R3,
    One,
    TMont,
    Base,
    Exponent,
    MHat,
}

impl From<ecrt_contract::host::LoadTarget> for LoadTarget {
    fn from(target: ecrt_contract::host::LoadTarget) -> Self {
        use ecrt_contract::host::LoadTarget as T;
        match target {
            T::Modulus => LoadTarget::Modulus,
            T::NPrime => LoadTarget::NPrime,
            T::ModulusDiv => LoadTarget::ModulusDiv,
            T::NPrimeDiv => LoadTarget::NPrimeDiv,
            T::ModulusN => LoadTarget::ModulusN,
            T::NPrimeN => LoadTarget::NPrimeN,
            T::R3 => LoadTarget::R3,
            T::One => LoadTarget::One,
            T::TMont => LoadTarget::TMont,
            T::Base => LoadTarget::Base,
            T::Exponent => LoadTarget::Exponent,
            T::MHat => LoadTarget::MHat,
        }
    }
}

/// Bits of an exponent window as the slot loads it: the window width, or 1 for the segmented
/// schedule (which takes the exponent a bit at a time).
pub fn exponent_window_bits(schedule: Schedule) -> usize {
    match schedule {
        Schedule::FixedWindow { window_bits } => window_bits as usize,
        Schedule::RightToLeft { .. } => 1,
    }
}

/// The sequencer's state.
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum SlotState {
    Idle,
    Waiting,
    Reduce,
    ToMontgomery,
    Table,
    Square,
    Multiply,
    /// Segmented: acc·sq in flight.
    BitProduct,
    /// Segmented: sq·sq in flight.
    BitSquare,
    FromMontgomery,
    Divide,
    Scale,
}

/// One slot's storage and sequencer.
#[derive(LogicBlock)]
pub struct SlotControl {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Write `load_data` into `load_target` (shifting it in).
    pub load: Signal<In, bool>,
    /// Which register a load writes.
    pub load_target: Signal<In, LoadTarget>,
    /// The limb, constant or window being loaded.
    pub load_data: Signal<In, Bits<X_BITS>>,
    /// Begin an exponentiation of the loaded base.
    pub start: Signal<In, bool>,
    /// The multiplier serves this slot in this cycle (its `phase`).
    pub my_turn: Signal<In, bool>,
    /// The multiplier finished this slot's multiplication: `mm_result` holds it.
    pub mm_done: Signal<In, bool>,
    /// The multiplier is busy with this slot's multiplication.
    pub mm_busy: Signal<In, bool>,
    /// The multiplier's result.
    pub mm_result: Vec<Signal<In, Bits<X_BITS>>>,
    /// Start a multiplication of `a_out`·`b_out` now.
    pub issue: Signal<Out, bool>,
    /// The issued multiplication is a wide REDC of `b_out` + `a_out`·R.
    pub issue_redc: Signal<Out, bool>,
    /// The issued multiplication takes `a_out` − 1.
    pub issue_decrement: Signal<Out, bool>,
    /// The issued multiplication is a classic pass (exact quotient, modulus `n_out`), not a
    /// folding multiplication inside the Montgomery domain.
    pub issue_classic: Signal<Out, bool>,
    /// The next multiplier A.
    pub a_out: Vec<Signal<Out, Bits<X_BITS>>>,
    /// The next multiplicand B.
    pub b_out: Vec<Signal<Out, Bits<X_BITS>>>,
    /// This slot's modulus, for the multiplier.
    pub n_out: Vec<Signal<Out, Bits<Y_BITS>>>,
    /// This slot's −N^(−1) mod 2^17.
    pub n_prime_out: Signal<Out, Bits<Y_BITS>>,
    /// This slot's M̂ = 2^(−17k) mod N, for the folding multiplier.
    pub m_hat_out: Vec<Signal<Out, Bits<Y_BITS>>>,
    /// The slot finished: `mm_result` is c^e mod N (or, decrypting, the eCRT term) in this cycle.
    pub done: Signal<Out, bool>,
    /// The multiplication in flight is the slot's last: `done` comes with its `mm_done`.
    pub finishing: Signal<Out, bool>,
    /// The public modulus n's limbs (for the final correction).
    pub n_public: Vec<Signal<Out, Bits<Y_BITS>>>,
    /// An exponentiation is under way.
    pub busy: Signal<Out, bool>,
    /// In the next cycle the state issues its next multiplication when the one in flight is
    /// done (for the multiplier's registered copies of its load).
    pub issue_on_done_next: Signal<Out, bool>,
    window_bits: Constant<Bits<4>>,
    windows: Constant<Bits<WINDOW_COUNT_BITS>>,
    // 2^w − 1: the table's last entry, and the mask of a window's bits (the bits above it are
    // never loaded, so synthesis drops them).
    table_last: Constant<Bits<WINDOW_BITS_MAX>>,
    decrypt: Constant<bool>,
    segmented: Constant<bool>,
    state: DFF<SlotState>,
    modulus: Vec<DFF<Bits<Y_BITS>>>,
    n_prime: DFF<Bits<Y_BITS>>,
    modulus_div: Vec<DFF<Bits<Y_BITS>>>,
    n_prime_div: DFF<Bits<Y_BITS>>,
    modulus_n: Vec<DFF<Bits<Y_BITS>>>,
    n_prime_n: DFF<Bits<Y_BITS>>,
    // The multiplication in flight is the exact division's (the final correction's), in copies
    // for the modulus multiplexer, one per LIMBS_PER_COPY limbs.
    divide_sel: Replicas<bool>,
    scale_sel: Replicas<bool>,
    m_hat: Vec<DFF<Bits<Y_BITS>>>,
    r3: Vec<DFF<Bits<X_BITS>>>,
    one: Vec<DFF<Bits<X_BITS>>>,
    t_mont: Vec<DFF<Bits<X_BITS>>>,
    // The base's 2·S limbs, least significant first, split where a wide REDC splits it: its L
    // low limbs (the multiplier's operand width) and the rest.
    base_low: Vec<DFF<Bits<X_BITS>>>,
    base_high: Vec<DFF<Bits<X_BITS>>>,
    exponent: Vec<DFF<Bits<WINDOW_BITS_MAX>>>,
    table: Vec<RAM<Bits<X_BITS>, WINDOW_BITS_MAX>>,
    table_index: DFF<Bits<WINDOW_BITS_MAX>>,
    squares_left: DFF<Bits<4>>,
    windows_left: DFF<Bits<WINDOW_COUNT_BITS>>,
    // Segmented: acc has been written to T[1] (until then it is T[0] = R mod N).
    acc_set: DFF<bool>,
    // Segmented: the exponent bit of the current step.
    exponent_bit: Signal<Local, bool>,
    // The table entry T[exponent[0]] as read last cycle, or bypassed.
    entry: Vec<Signal<Local, Bits<X_BITS>>>,
    // The entry read in this cycle (decided from the sequencer's next values), and its copies
    // per LIMBS_PER_COPY limbs for the table's RAMs.
    read_address: DFF<Bits<WINDOW_BITS_MAX>>,
    read_copies: Replicas<Bits<WINDOW_BITS_MAX>>,
    // The load stage (`KeyLoad`): each register file's load enable, in copies per LIMBS_PER_COPY
    // limbs (windows) of it; the N′s' enables; the data.
    load_modulus: Replicas<bool>,
    load_modulus_div: Replicas<bool>,
    load_modulus_n: Replicas<bool>,
    load_m_hat: Replicas<bool>,
    load_r3: Replicas<bool>,
    load_one: Replicas<bool>,
    load_t_mont: Replicas<bool>,
    load_n_prime: DFF<bool>,
    load_n_prime_div: DFF<bool>,
    load_n_prime_n: DFF<bool>,
    load_base_low: Replicas<bool>,
    load_base_high: Replicas<bool>,
    load_exponent: Replicas<bool>,
    load_data_r: DFF<Bits<X_BITS>>,
    // The next state writes its result into the table when its multiplication is done, and
    // where: registered, like the operand selects, in copies per LIMBS_PER_COPY limbs of the
    // table (a write address bit reaches every LUT RAM of the table).
    write_on_done_next: Signal<Local, bool>,
    write_address_next: Signal<Local, Bits<WINDOW_BITS_MAX>>,
    write_on_done: Replicas<bool>,
    write_address: Replicas<Bits<WINDOW_BITS_MAX>>,
    rotate: Signal<Local, bool>,
    table_complete: Signal<Local, bool>,
    // Which operands the next state's multiplication takes when it is issued.
    a_next: Signal<Local, Operand>,
    b_next: Signal<Local, Operand>,
    // One-hot masks (all ones or zero) of the multiplexers' sources.
    ones: Constant<Bits<X_BITS>>,
    // The table entry's sources (its RAM, the result being written to it, T[0] = R mod N), in
    // copies per LIMBS_PER_COPY limbs registered from the next read address and table write.
    entry_ram_sel: Replicas<bool>,
    entry_bypass_sel: Replicas<bool>,
    entry_one_sel: Replicas<bool>,
    entry_ram: Vec<Signal<Local, Bits<X_BITS>>>,
    entry_bypass: Vec<Signal<Local, Bits<X_BITS>>>,
    entry_one: Vec<Signal<Local, Bits<X_BITS>>>,
    // The operand multiplexers' selects, registered from the next state in copies (one per
    // LIMBS_PER_COPY limbs), and the masks each copy makes: a decode of the state would reach
    // every bit of both operands from one LUT.
    a_result_sel: Replicas<bool>,
    a_entry_sel: Replicas<bool>,
    a_base_sel: Replicas<bool>,
    b_result_sel: Replicas<bool>,
    b_entry_sel: Replicas<bool>,
    b_base_sel: Replicas<bool>,
    b_r3_sel: Replicas<bool>,
    b_t_mont_sel: Replicas<bool>,
    b_unit_sel: DFF<bool>,
    a_result: Vec<Signal<Local, Bits<X_BITS>>>,
    a_entry: Vec<Signal<Local, Bits<X_BITS>>>,
    a_base: Vec<Signal<Local, Bits<X_BITS>>>,
    b_result: Vec<Signal<Local, Bits<X_BITS>>>,
    b_entry: Vec<Signal<Local, Bits<X_BITS>>>,
    b_base: Vec<Signal<Local, Bits<X_BITS>>>,
    b_r3: Vec<Signal<Local, Bits<X_BITS>>>,
    b_t_mont: Vec<Signal<Local, Bits<X_BITS>>>,
}

/// Where the next multiplication's operands come from.
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum Operand {
    /// The multiplier's result (the accumulator).
    Result,
    /// The low L limbs of the loaded base.
    BaseLow,
    /// The loaded base's limbs from L on.
    BaseHigh,
    /// The table entry of the current window.
    Entry,
    /// R³ mod N.
    R3,
    /// t·R mod n.
    TMont,
    /// The integer 1.
    Unit,
}

impl SlotControl {
    /// A slot for `digits`-limb values (S), a multiplier of `operand_limbs`-limb operands (L),
    /// moduli of `modulus_limbs` limbs (M̂'s), exponents of `exponent_bits` bits and `schedule`
    /// (fixed windows of up to [`WINDOW_BITS_MAX`] bits, or right to left in one segment); with
    /// `decrypt`, it goes on from the exponentiation to its prime's eCRT term.
    pub fn new(
        digits: usize,
        operand_limbs: usize,
        modulus_limbs: usize,
        exponent_bits: usize,
        schedule: Schedule,
        decrypt: bool,
    ) -> Self {
        assert!(operand_limbs <= digits, "values hold the multiplier's operands");
        let segmented = matches!(schedule, Schedule::RightToLeft { .. });
        assert!(
            !segmented || schedule == Schedule::RightToLeft { segments: 1 },
            "a slot runs its exponent as one segment"
        );
        let window_bits = exponent_window_bits(schedule);
        assert!((1..=WINDOW_BITS_MAX).contains(&window_bits), "windows of 1 to {WINDOW_BITS_MAX} bits");
        let windows = exponent_bits.div_ceil(window_bits);
        assert!((1..1 << WINDOW_COUNT_BITS).contains(&windows), "too many windows");
        SlotControl {
            clock: Default::default(),
            load: Default::default(),
            load_target: Default::default(),
            load_data: Default::default(),
            start: Default::default(),
            my_turn: Default::default(),
            mm_done: Default::default(),
            mm_busy: Default::default(),
            mm_result: many(operand_limbs),
            issue: Default::default(),
            issue_redc: Default::default(),
            issue_decrement: Default::default(),
            issue_classic: Default::default(),
            m_hat_out: many(modulus_limbs),
            m_hat: many(modulus_limbs),
            n_public: many(digits),
            a_out: many(operand_limbs),
            b_out: many(operand_limbs),
            n_out: many(modulus_limbs),
            n_prime_out: Default::default(),
            done: Default::default(),
            finishing: Default::default(),
            busy: Default::default(),
            issue_on_done_next: Default::default(),
            window_bits: Constant::new((window_bits as u64).into()),
            windows: Constant::new((windows as u64).into()),
            table_last: Constant::new(((1u64 << window_bits) - 1).into()),
            decrypt: Constant::new(decrypt),
            segmented: Constant::new(segmented),
            state: Default::default(),
            modulus: many(modulus_limbs),
            n_prime: Default::default(),
            modulus_div: many(modulus_limbs),
            n_prime_div: Default::default(),
            modulus_n: many(digits),
            n_prime_n: Default::default(),
            divide_sel: Replicas::new(copies(modulus_limbs)),
            scale_sel: Replicas::new(copies(modulus_limbs)),
            r3: many(operand_limbs),
            one: many(operand_limbs),
            t_mont: many(operand_limbs),
            base_low: many(operand_limbs),
            base_high: many(2 * digits - operand_limbs),
            exponent: many(windows),
            table: many(operand_limbs),
            table_index: Default::default(),
            squares_left: Default::default(),
            windows_left: Default::default(),
            acc_set: Default::default(),
            exponent_bit: Default::default(),
            entry: many(operand_limbs),
            read_address: Default::default(),
            write_on_done_next: Default::default(),
            write_address_next: Default::default(),
            write_on_done: Replicas::new(copies(operand_limbs)),
            write_address: Replicas::new(copies(operand_limbs)),
            read_copies: Replicas::new(copies(operand_limbs)),
            load_modulus: Replicas::new(copies(modulus_limbs)),
            load_modulus_div: Replicas::new(copies(modulus_limbs)),
            load_modulus_n: Replicas::new(copies(digits)),
            load_m_hat: Replicas::new(copies(modulus_limbs)),
            load_r3: Replicas::new(copies(operand_limbs)),
            load_one: Replicas::new(copies(operand_limbs)),
            load_t_mont: Replicas::new(copies(operand_limbs)),
            load_n_prime: Default::default(),
            load_n_prime_div: Default::default(),
            load_n_prime_n: Default::default(),
            load_base_low: Replicas::new(copies(operand_limbs)),
            load_base_high: Replicas::new(copies(2 * digits - operand_limbs)),
            load_exponent: Replicas::new(copies(windows)),
            load_data_r: Default::default(),
            rotate: Default::default(),
            table_complete: Default::default(),
            a_next: Default::default(),
            b_next: Default::default(),
            ones: Constant::new(((1u64 << X_BITS) - 1).into()),
            entry_ram_sel: Replicas::new(copies(operand_limbs)),
            entry_bypass_sel: Replicas::new(copies(operand_limbs)),
            entry_one_sel: Replicas::new(copies(operand_limbs)),
            entry_ram: many(copies(operand_limbs)),
            entry_bypass: many(copies(operand_limbs)),
            entry_one: many(copies(operand_limbs)),
            a_result_sel: Replicas::new(copies(operand_limbs)),
            a_entry_sel: Replicas::new(copies(operand_limbs)),
            a_base_sel: Replicas::new(copies(operand_limbs)),
            b_result_sel: Replicas::new(copies(operand_limbs)),
            b_entry_sel: Replicas::new(copies(operand_limbs)),
            b_base_sel: Replicas::new(copies(operand_limbs)),
            b_r3_sel: Replicas::new(copies(operand_limbs)),
            b_t_mont_sel: Replicas::new(copies(operand_limbs)),
            b_unit_sel: Default::default(),
            a_result: many(copies(operand_limbs)),
            a_entry: many(copies(operand_limbs)),
            a_base: many(copies(operand_limbs)),
            b_result: many(copies(operand_limbs)),
            b_entry: many(copies(operand_limbs)),
            b_base: many(copies(operand_limbs)),
            b_r3: many(copies(operand_limbs)),
            b_t_mont: many(copies(operand_limbs)),
        }
    }
}

// `update` in parts, each one job. rust-hdl's `#[hdl_gen]` translates one function body into the
// block's always block and its `connect`; a helper function called from that body would be
// simulated but not translated. So each part is a `#[hdl_gen]` function of its own (`update` of
// `part::Part<P>`, P naming the part), and `Logic for SlotControl` runs the parts in the order of
// `PARTS` and writes their statements, in the same order, as one always block: the Verilog is
// that of a single `update` whose body is the parts' bodies one after another.

mod part {
    use rust_hdl::prelude::Verilog;

    /// One part of [`super::SlotControl`]'s `update`, named by `P`. Kept in this module, out of
    /// the slot's scope, so that `self.update()` and `self.connect()` there stay `Logic`'s.
    pub(super) trait Part<P> {
        /// The part's share of a simulation step.
        fn update(&mut self);
        /// Marks what the part drives as driven (written by `#[hdl_gen]` from `update`).
        fn connect(&mut self);
        /// The part's statements of the always block (written by `#[hdl_gen]` from `update`).
        fn hdl(&self) -> Verilog;
    }

    // The parts' names, in the order of `PARTS`; each `impl Part` (in this module's files:
    // sequencer, keys, table, operands) says what its part does.
    pub(super) enum Defaults {}
    pub(super) enum ExponentBit {}
    pub(super) enum TableRead {}
    pub(super) enum KeyHold {}
    pub(super) enum KeyLoad {}
    pub(super) enum Step {}
    pub(super) enum TableComplete {}
    pub(super) enum NextMode {}
    pub(super) enum ExponentRotation {}
    pub(super) enum TableStorage {}
    pub(super) enum OperandSelect {}
    pub(super) enum ModulusSelect {}
}

/// A part's functions, so that [`PARTS`] lists the parts once, in order.
struct PartFns {
    update: fn(&mut SlotControl),
    connect: fn(&mut SlotControl),
    hdl: fn(&SlotControl) -> Verilog,
}

const fn part<P>() -> PartFns
where
    SlotControl: part::Part<P>,
{
    PartFns {
        update: <SlotControl as part::Part<P>>::update,
        connect: <SlotControl as part::Part<P>>::connect,
        hdl: <SlotControl as part::Part<P>>::hdl,
    }
}

/// The parts of `update`, in the order they run and their statements are written.
const PARTS: [PartFns; 12] = [
    part::<part::Defaults>(),
    part::<part::ExponentBit>(),
    part::<part::KeyHold>(),
    part::<part::KeyLoad>(),
    part::<part::Step>(),
    part::<part::TableComplete>(),
    part::<part::NextMode>(),
    part::<part::ExponentRotation>(),
    part::<part::TableRead>(),
    part::<part::TableStorage>(),
    part::<part::OperandSelect>(),
    part::<part::ModulusSelect>(),
];

impl Logic for SlotControl {
    fn update(&mut self) {
        for part in &PARTS {
            (part.update)(self);
        }
    }
    fn connect(&mut self) {
        for part in &PARTS {
            (part.connect)(self);
        }
    }
    fn hdl(&self) -> Verilog {
        let statements = PARTS.iter().flat_map(|part| match (part.hdl)(self) {
            Verilog::Combinatorial(statements) => statements,
            _ => unreachable!("#[hdl_gen] writes an always block"),
        });
        Verilog::Combinatorial(statements.collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_control_is_synthesizable() {
        let mut uut = SlotControl::new(3, 3, 2, 10, Schedule::FixedWindow { window_bits: 2 }, true);
        uut.connect_all();
        yosys_validate("ecrt_slot_control", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn segmented_slot_control_is_synthesizable() {
        let mut uut = SlotControl::new(3, 3, 2, 10, Schedule::RightToLeft { segments: 1 }, true);
        uut.connect_all();
        yosys_validate("ecrt_slot_control_segmented", &generate_verilog(&uut)).unwrap();
    }
}
