//! Exponentiations in the deep loop's lanes: the fixed-window schedule inside the Montgomery
//! domain (`ecrt_golden::hw::exp_in_domain`, multiplication for multiplication) run in each of
//! the [`DeepMul`]'s k + 3 lanes at once, each lane with its own base and one of two keys, so
//! that every lane, and so every DSP, is busy. Not yet in the accelerator: the way into and out
//! of the domain and the eCRT path still run on the two-slot unit ([`super::modexp`]).
//!
//! A lane's state (its phase, table index, squarings in the window, the next window and its
//! value) circulates in a ring as the multiplier's lanes do, and is advanced three cycles before
//! the lane's load phase, when the multiplier says it will be free then (`free_ahead`): that
//! leaves a cycle for the table's address register and two for its read (the RAM's own register
//! and an output register, as a block RAM's DOREG), so that the operands reach the multiplier
//! through nothing but a multiplexer. The schedule does not depend on the values, so every
//! decision is known that early; its selects are registers, in copies.
//!
//! The lanes' tables share one memory, a RAM per limb addressed by (lane, entry): only the lane at
//! its load phase reads or writes it, one entry each. The table is written as it is built (the
//! result of each of its multiplications, T[1] = the base at the start); acc is never stored,
//! the result of the multiplication before being the next one's operand. Each key's Montgomery 1
//! (T[0], for the zero windows) has a region of its own; its M̂ and windows are loaded while
//! every lane is idle.

use crate::fanout::replicas::Replicas;
use crate::fanout::{copies, LIMBS_PER_COPY};
use crate::many;
use crate::multiplier::deep_mul::{DeepMul, LANE_BITS};
use crate::multiplier::mul_add::{X_BITS, Y_BITS};
use ecrt_golden::hw::FoldShape;
use rust_hdl::prelude::*;

/// Bits of a table address: (k + 5)·2^w entries, the lanes' tables and the two keys' 1.
pub const TABLE_ADDRESS_BITS: usize = 10;
/// Bits of a window's value.
pub const WINDOW_VALUE_BITS: usize = 6;
/// Bits of a window's index.
pub const WINDOW_INDEX_BITS: usize = 12;
/// Bits of the windows' memory's address: the key, then the window's index.
pub const WINDOW_ADDRESS_BITS: usize = WINDOW_INDEX_BITS + 1;

/// D lanes of fixed-window exponentiation on one deep-loop multiplier.
#[derive(LogicBlock)]
pub struct LaneExp {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Load key `key_select`'s M̂ and 1 (while every lane is idle).
    pub key_write: Signal<In, bool>,
    /// Which key a load writes (0 or 1).
    pub key_select: Signal<In, bool>,
    /// M̂ = 2^(−17k) mod N, exact limbs.
    pub key_m_hat: Vec<Signal<In, Bits<Y_BITS>>>,
    /// R mod N (the Montgomery 1), normalized limbs.
    pub key_one: Vec<Signal<In, Bits<X_BITS>>>,
    /// Write window `window_index` of key `key_select`'s exponent (most significant first; while
    /// every lane is idle).
    pub window_write: Signal<In, bool>,
    /// The window written.
    pub window_index: Signal<In, Bits<WINDOW_INDEX_BITS>>,
    /// Its value.
    pub window_value: Signal<In, Bits<WINDOW_VALUE_BITS>>,
    /// The lane three cycles before its load phase is idle: `start` begins an exponentiation in it.
    pub can_start: Signal<Out, bool>,
    /// Begin an exponentiation in the lane `can_start` is about, with key `start_key`; its base
    /// comes three cycles later, at its load phase.
    pub start: Signal<In, bool>,
    /// The key of a start.
    pub start_key: Signal<In, bool>,
    /// The base x̃ (Montgomery form, below X, normalized limbs), at the load phase of a lane
    /// started three cycles before.
    pub base_in: Vec<Signal<In, Bits<X_BITS>>>,
    /// The lane at its load phase now.
    pub lane: Signal<Out, Bits<LANE_BITS>>,
    /// `lane`'s exponentiation is done: `result` is base^e in Montgomery form, in this cycle only.
    pub done: Signal<Out, bool>,
    /// The multiplier's result: `done`'s, when it says so.
    pub result: Vec<Signal<Out, Bits<X_BITS>>>,
    /// A multiplication finished in `lane` (for tests: every product of every lane shows).
    pub mul_done: Signal<Out, bool>,
    mul: DeepMul,
    // Table entries a lane: 2^w. The table's last entry, the windows after the top one, w.
    entries: Constant<Bits<TABLE_ADDRESS_BITS>>,
    last_entry: Constant<Bits<WINDOW_VALUE_BITS>>,
    last_window: Constant<Bits<WINDOW_INDEX_BITS>>,
    window_bits: Constant<Bits<4>>,
    // The deciding lane's table region: lane·2^w, advancing with the lanes; the keys' 1.
    region: DFFWithInit<Bits<TABLE_ADDRESS_BITS>>,
    last_region: Constant<Bits<TABLE_ADDRESS_BITS>>,
    key_one_address: Constant<Bits<TABLE_ADDRESS_BITS>>,
    // The ring of lane states: position 0 decides, three cycles before its load phase.
    ring_active: Vec<DFF<bool>>,
    ring_key: Vec<DFF<bool>>,
    ring_table: Vec<DFF<bool>>,
    ring_index: Vec<DFF<Bits<WINDOW_VALUE_BITS>>>,
    ring_squares: Vec<DFF<Bits<4>>>,
    ring_window: Vec<DFF<Bits<WINDOW_INDEX_BITS>>>,
    ring_value: Vec<DFF<Bits<WINDOW_VALUE_BITS>>>,
    ring_last: Vec<DFF<bool>>,
    // The decision: issue a multiplication; its operands (A: the result, the table, the base;
    // B likewise); the table entry it reads; whether its result is written, where; whether the
    // base is written (T[1] at the start); whether it ends the exponentiation.
    issue: Signal<Local, bool>,
    a_table: Signal<Local, bool>,
    a_base: Signal<Local, bool>,
    b_result: Signal<Local, bool>,
    b_base: Signal<Local, bool>,
    read_entry: Signal<Local, Bits<WINDOW_VALUE_BITS>>,
    read_address: Signal<Local, Bits<TABLE_ADDRESS_BITS>>,
    write: Signal<Local, bool>,
    write_base: Signal<Local, bool>,
    write_entry: Signal<Local, Bits<WINDOW_VALUE_BITS>>,
    finish: Signal<Local, bool>,
    // The decision's registers, a cycle (1) and two (2) later, and at the load phase (copies).
    issue1: DFF<bool>,
    issue2: DFF<bool>,
    a_table1: DFF<bool>,
    a_table2: DFF<bool>,
    a_base1: DFF<bool>,
    a_base2: DFF<bool>,
    b_result1: DFF<bool>,
    b_result2: DFF<bool>,
    b_base1: DFF<bool>,
    b_base2: DFF<bool>,
    key1: DFF<bool>,
    key2: DFF<bool>,
    write1: DFF<bool>,
    write2: DFF<bool>,
    write3: DFF<bool>,
    write_base1: DFF<bool>,
    write_base2: DFF<bool>,
    write_address1: DFF<Bits<TABLE_ADDRESS_BITS>>,
    write_address2: DFF<Bits<TABLE_ADDRESS_BITS>>,
    finish1: DFF<bool>,
    finish2: DFF<bool>,
    finish3: DFF<bool>,
    a_table_copies: Replicas<bool>,
    a_base_copies: Replicas<bool>,
    b_result_copies: Replicas<bool>,
    b_base_copies: Replicas<bool>,
    key_copies: Replicas<bool>,
    write_base_copies: Replicas<bool>,
    read_copies: Replicas<Bits<TABLE_ADDRESS_BITS>>,
    write_copies: Replicas<Bits<TABLE_ADDRESS_BITS>>,
    // The table, a RAM per limb, and its output registers.
    table: Vec<RAM<Bits<X_BITS>, TABLE_ADDRESS_BITS>>,
    table_out: Vec<DFF<Bits<X_BITS>>>,
    write_data: Vec<Signal<Local, Bits<X_BITS>>>,
    // The keys: M̂ (index key·M + i); the windows, at (key, index).
    m_hat: Vec<DFF<Bits<Y_BITS>>>,
    windows: RAM<Bits<WINDOW_VALUE_BITS>, WINDOW_ADDRESS_BITS>,
    key1_windows: Constant<Bits<WINDOW_ADDRESS_BITS>>,
    window_address: Signal<Local, Bits<WINDOW_ADDRESS_BITS>>,
    next_window: Signal<Local, Bits<WINDOW_INDEX_BITS>>,
}

impl LaneExp {
    /// The lanes of `shape`'s deep-loop multiplier, for exponents of `exponent_bits` bits in
    /// windows of `window_bits` (2 to 6).
    pub fn new(shape: &FoldShape, exponent_bits: usize, window_bits: usize) -> Self {
        let (lanes, operands, modulus) = (shape.deep_lanes(), shape.operand_limbs, shape.modulus_limbs);
        assert!((2..=WINDOW_VALUE_BITS).contains(&window_bits), "windows of 2 to 6 bits");
        let entries = 1usize << window_bits;
        let windows = exponent_bits.div_ceil(window_bits);
        assert!((lanes + 2) * entries <= 1 << TABLE_ADDRESS_BITS, "the table memory is too small");
        assert!((2..1 << WINDOW_INDEX_BITS).contains(&windows), "2 windows at least");
        let region = |lane: usize| Bits::<TABLE_ADDRESS_BITS>::from((lane * entries) as u64);
        LaneExp {
            clock: Default::default(),
            key_write: Default::default(),
            key_select: Default::default(),
            key_m_hat: many(modulus),
            key_one: many(operands),
            window_write: Default::default(),
            window_index: Default::default(),
            window_value: Default::default(),
            can_start: Default::default(),
            start: Default::default(),
            start_key: Default::default(),
            base_in: many(operands),
            lane: Default::default(),
            done: Default::default(),
            result: many(operands),
            mul_done: Default::default(),
            mul: DeepMul::new(shape),
            entries: Constant::new(region(1)),
            last_entry: Constant::new(((entries - 1) as u64).into()),
            last_window: Constant::new(((windows - 1) as u64).into()),
            window_bits: Constant::new((window_bits as u64).into()),
            // The multiplier's lane 0 is at its load phase first: lane 3 mod D decides then.
            region: DFFWithInit::new(region(3 % lanes)),
            last_region: Constant::new(region(lanes - 1)),
            key_one_address: Constant::new(region(lanes)),
            ring_active: many(lanes),
            ring_key: many(lanes),
            ring_table: many(lanes),
            ring_index: many(lanes),
            ring_squares: many(lanes),
            ring_window: many(lanes),
            ring_value: many(lanes),
            ring_last: many(lanes),
            issue: Default::default(),
            a_table: Default::default(),
            a_base: Default::default(),
            b_result: Default::default(),
            b_base: Default::default(),
            read_entry: Default::default(),
            read_address: Default::default(),
            write: Default::default(),
            write_base: Default::default(),
            write_entry: Default::default(),
            finish: Default::default(),
            issue1: Default::default(),
            issue2: Default::default(),
            a_table1: Default::default(),
            a_table2: Default::default(),
            a_base1: Default::default(),
            a_base2: Default::default(),
            b_result1: Default::default(),
            b_result2: Default::default(),
            b_base1: Default::default(),
            b_base2: Default::default(),
            key1: Default::default(),
            key2: Default::default(),
            write1: Default::default(),
            write2: Default::default(),
            write3: Default::default(),
            write_base1: Default::default(),
            write_base2: Default::default(),
            write_address1: Default::default(),
            write_address2: Default::default(),
            finish1: Default::default(),
            finish2: Default::default(),
            finish3: Default::default(),
            a_table_copies: Replicas::new(copies(operands)),
            a_base_copies: Replicas::new(copies(operands)),
            b_result_copies: Replicas::new(copies(operands)),
            b_base_copies: Replicas::new(copies(operands)),
            key_copies: Replicas::new(copies(modulus)),
            write_base_copies: Replicas::new(copies(operands)),
            read_copies: Replicas::new(copies(operands)),
            write_copies: Replicas::new(copies(operands)),
            table: many(operands),
            table_out: many(operands),
            write_data: many(operands),
            m_hat: many(2 * modulus),
            windows: Default::default(),
            key1_windows: Constant::new((1u64 << WINDOW_INDEX_BITS).into()),
            window_address: Default::default(),
            next_window: Default::default(),
        }
    }
}

impl Logic for LaneExp {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            issue1,
            issue2,
            a_table1,
            a_table2,
            a_base1,
            a_base2,
            b_result1,
            b_result2,
            b_base1,
            b_base2,
            key1,
            key2,
            write1,
            write2,
            write3,
            write_base1,
            write_base2,
            write_address1,
            write_address2,
            finish1,
            finish2,
            finish3
        );
        clock!(
            self,
            clock,
            mul,
            region,
            a_table_copies,
            a_base_copies,
            b_result_copies,
            b_base_copies,
            key_copies,
            write_base_copies,
            read_copies,
            write_copies
        );
        for p in 0..self.ring_active.len() {
            self.ring_active[p].clock.next = self.clock.val();
            self.ring_key[p].clock.next = self.clock.val();
            self.ring_table[p].clock.next = self.clock.val();
            self.ring_index[p].clock.next = self.clock.val();
            self.ring_squares[p].clock.next = self.clock.val();
            self.ring_window[p].clock.next = self.clock.val();
            self.ring_value[p].clock.next = self.clock.val();
            self.ring_last[p].clock.next = self.clock.val();
        }
        for j in 0..self.table.len() {
            self.table[j].read_clock.next = self.clock.val();
            self.table[j].write_clock.next = self.clock.val();
            self.table_out[j].clock.next = self.clock.val();
        }
        for i in 0..self.m_hat.len() {
            self.m_hat[i].clock.next = self.clock.val();
        }
        self.windows.read_clock.next = self.clock.val();
        self.windows.write_clock.next = self.clock.val();

        // The deciding lane's region.
        self.region.d.next = self.region.q.val() + self.entries.val();
        if self.region.q.val() == self.last_region.val() {
            self.region.d.next = 0.into();
        }

        // The ring turns; position 0 decides and writes the lane's next state to the top.
        for dn in (self.ring_active.len())..(self.ring_active.len() + 1) {
            for p in 1..self.ring_active.len() {
                self.ring_active[p - 1].d.next = self.ring_active[p].q.val();
                self.ring_key[p - 1].d.next = self.ring_key[p].q.val();
                self.ring_table[p - 1].d.next = self.ring_table[p].q.val();
                self.ring_index[p - 1].d.next = self.ring_index[p].q.val();
                self.ring_squares[p - 1].d.next = self.ring_squares[p].q.val();
                self.ring_window[p - 1].d.next = self.ring_window[p].q.val();
                self.ring_value[p - 1].d.next = self.ring_value[p].q.val();
                self.ring_last[p - 1].d.next = self.ring_last[p].q.val();
            }
            self.ring_active[dn - 1].d.next = self.ring_active[0].q.val();
            self.ring_key[dn - 1].d.next = self.ring_key[0].q.val();
            self.ring_table[dn - 1].d.next = self.ring_table[0].q.val();
            self.ring_index[dn - 1].d.next = self.ring_index[0].q.val();
            self.ring_squares[dn - 1].d.next = self.ring_squares[0].q.val();
            self.ring_window[dn - 1].d.next = self.ring_window[0].q.val();
            self.ring_last[dn - 1].d.next = self.ring_last[0].q.val();
            self.ring_value[dn - 1].d.next = self.ring_value[0].q.val();

            // The decision. A start: T[2] = x̃·x̃, x̃ written to T[1]. A multiplication that ends at
            // the load phase: in the table, its result written to T[index], then the next entry
            // (·T[1]) or, the table complete, acc = T[top window] squared; in the windows, w
            // squarings of the result, then its product with T[window] (T[0] is the key's 1),
            // after the last window's the lane is done.
            self.can_start.next = !self.ring_active[0].q.val();
            self.issue.next = false;
            self.a_table.next = false;
            self.a_base.next = false;
            self.b_result.next = false;
            self.b_base.next = false;
            self.read_entry.next = 1.into();
            self.write.next = false;
            self.write_base.next = false;
            self.write_entry.next = self.ring_index[0].q.val();
            self.finish.next = false;
            self.next_window.next = self.ring_window[0].q.val();
            if !self.ring_active[0].q.val() {
                if self.start.val() {
                    self.issue.next = true;
                    self.a_base.next = true;
                    self.b_base.next = true;
                    self.write.next = true;
                    self.write_base.next = true;
                    self.write_entry.next = 1.into();
                    self.ring_active[dn - 1].d.next = true;
                    self.ring_key[dn - 1].d.next = self.start_key.val();
                    self.ring_table[dn - 1].d.next = true;
                    self.ring_index[dn - 1].d.next = 2.into();
                    self.ring_squares[dn - 1].d.next = 0.into();
                    self.ring_last[dn - 1].d.next = false;
                    self.next_window.next = 0.into();
                    self.ring_window[dn - 1].d.next = 0.into();
                }
            } else if self.mul.free_ahead.val() {
                self.issue.next = true;
                if self.ring_table[0].q.val() {
                    self.write.next = true;
                    if self.ring_index[0].q.val() != self.last_entry.val() {
                        self.ring_index[dn - 1].d.next = self.ring_index[0].q.val() + 1;
                    } else {
                        // acc = T[top window], squared: the entry being written is the result.
                        self.ring_table[dn - 1].d.next = false;
                        self.ring_squares[dn - 1].d.next = 1.into();
                        self.next_window.next = 1.into();
                        self.ring_window[dn - 1].d.next = 1.into();
                        self.read_entry.next = self.ring_value[0].q.val();
                        if self.ring_value[0].q.val() != self.last_entry.val() {
                            self.a_table.next = true;
                        }
                        self.b_result.next = !self.a_table.val();
                    }
                } else if self.ring_last[0].q.val() & !self.ring_squares[0].q.val().any() {
                    // The last window's product shows: done.
                    self.issue.next = false;
                    self.finish.next = true;
                    self.ring_active[dn - 1].d.next = false;
                } else if self.ring_squares[0].q.val() != self.window_bits.val() {
                    self.b_result.next = true;
                    self.ring_squares[dn - 1].d.next = self.ring_squares[0].q.val() + 1;
                } else {
                    self.read_entry.next = self.ring_value[0].q.val();
                    self.ring_squares[dn - 1].d.next = 0.into();
                    self.next_window.next = self.ring_window[0].q.val() + 1;
                    self.ring_window[dn - 1].d.next = self.ring_window[0].q.val() + 1;
                    self.ring_last[dn - 1].d.next = self.ring_window[0].q.val() == self.last_window.val();
                }
            }
            // The entry read: the lane's, or the key's 1 for a zero window.
            self.read_address.next =
                self.region.q.val() + bit_cast::<TABLE_ADDRESS_BITS, WINDOW_VALUE_BITS>(self.read_entry.val());
            if !self.read_entry.val().any() {
                self.read_address.next = self.key_one_address.val();
                if self.ring_key[0].q.val() {
                    self.read_address.next = self.key_one_address.val() + self.entries.val();
                }
            }
            // The window after the next decision's: its value reaches the ring two cycles later.
            self.window_address.next = bit_cast::<WINDOW_ADDRESS_BITS, WINDOW_INDEX_BITS>(self.next_window.val());
            if self.ring_key[dn - 1].d.val() {
                self.window_address.next = bit_cast::<WINDOW_ADDRESS_BITS, WINDOW_INDEX_BITS>(self.next_window.val())
                    | self.key1_windows.val();
            }
            self.windows.read_address.next = self.window_address.val();
            self.ring_value[dn - 2].d.next = self.windows.read_data.val();
        }
        self.windows.write_address.next = bit_cast::<WINDOW_ADDRESS_BITS, WINDOW_INDEX_BITS>(self.window_index.val());
        if self.key_select.val() {
            self.windows.write_address.next =
                bit_cast::<WINDOW_ADDRESS_BITS, WINDOW_INDEX_BITS>(self.window_index.val()) | self.key1_windows.val();
        }
        self.windows.write_data.next = self.window_value.val();
        self.windows.write_enable.next = self.window_write.val();

        // The decision's way to the load phase: the read address is registered (1), the RAM
        // reads (2), its output is registered (3).
        self.issue1.d.next = self.issue.val();
        self.issue2.d.next = self.issue1.q.val();
        self.mul.start_next.next = self.issue2.q.val();
        self.a_table1.d.next = self.a_table.val();
        self.a_table2.d.next = self.a_table1.q.val();
        self.a_table_copies.d.next = self.a_table2.q.val();
        self.a_base1.d.next = self.a_base.val();
        self.a_base2.d.next = self.a_base1.q.val();
        self.a_base_copies.d.next = self.a_base2.q.val();
        self.b_result1.d.next = self.b_result.val();
        self.b_result2.d.next = self.b_result1.q.val();
        self.b_result_copies.d.next = self.b_result2.q.val();
        self.b_base1.d.next = self.b_base.val();
        self.b_base2.d.next = self.b_base1.q.val();
        self.b_base_copies.d.next = self.b_base2.q.val();
        self.key1.d.next = self.ring_key[0].q.val();
        if !self.ring_active[0].q.val() {
            self.key1.d.next = self.start_key.val();
        }
        self.key2.d.next = self.key1.q.val();
        self.key_copies.d.next = self.key2.q.val();
        self.read_copies.d.next = self.read_address.val();
        self.write1.d.next = self.write.val();
        self.write2.d.next = self.write1.q.val();
        self.write3.d.next = self.write2.q.val();
        self.write_base1.d.next = self.write_base.val();
        self.write_base2.d.next = self.write_base1.q.val();
        self.write_base_copies.d.next = self.write_base2.q.val();
        self.write_address1.d.next =
            self.region.q.val() + bit_cast::<TABLE_ADDRESS_BITS, WINDOW_VALUE_BITS>(self.write_entry.val());
        self.write_address2.d.next = self.write_address1.q.val();
        self.write_copies.d.next = self.write_address2.q.val();
        self.finish1.d.next = self.finish.val();
        self.finish2.d.next = self.finish1.q.val();
        self.finish3.d.next = self.finish2.q.val();

        // The load phase: the operands, the lane's key's M̂, the table's write.
        for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
            for j in 0..self.table.len() {
                self.table[j].read_address.next = self.read_copies.q[j / g].val();
                self.table_out[j].d.next = self.table[j].read_data.val();
                self.mul.a_in[j].next = self.mul.result[j].val();
                if self.a_table_copies.q[j / g].val() {
                    self.mul.a_in[j].next = self.table_out[j].q.val();
                }
                if self.a_base_copies.q[j / g].val() {
                    self.mul.a_in[j].next = self.base_in[j].val();
                }
                self.mul.b_in[j].next = self.table_out[j].q.val();
                if self.b_result_copies.q[j / g].val() {
                    self.mul.b_in[j].next = self.mul.result[j].val();
                }
                if self.b_base_copies.q[j / g].val() {
                    self.mul.b_in[j].next = self.base_in[j].val();
                }
                self.write_data[j].next = self.mul.result[j].val();
                if self.write_base_copies.q[j / g].val() {
                    self.write_data[j].next = self.base_in[j].val();
                }
                self.table[j].write_address.next = self.write_copies.q[j / g].val();
                self.table[j].write_enable.next = self.write3.q.val();
                if self.key_write.val() {
                    self.write_data[j].next = self.key_one[j].val();
                    self.table[j].write_address.next = self.key_one_address.val();
                    if self.key_select.val() {
                        self.table[j].write_address.next = self.key_one_address.val() + self.entries.val();
                    }
                    self.table[j].write_enable.next = true;
                }
                self.table[j].write_data.next = self.write_data[j].val();
            }
            for mn in (self.key_m_hat.len())..(self.key_m_hat.len() + 1) {
                for i in 0..self.key_m_hat.len() {
                    self.mul.m_hat_in[i].next = self.m_hat[i].q.val();
                    if self.key_copies.q[i / g].val() {
                        self.mul.m_hat_in[i].next = self.m_hat[mn + i].q.val();
                    }
                    self.m_hat[i].d.next = self.m_hat[i].q.val();
                    self.m_hat[mn + i].d.next = self.m_hat[mn + i].q.val();
                    if self.key_write.val() & !self.key_select.val() {
                        self.m_hat[i].d.next = self.key_m_hat[i].val();
                    }
                    if self.key_write.val() & self.key_select.val() {
                        self.m_hat[mn + i].d.next = self.key_m_hat[i].val();
                    }
                }
            }
        }
        self.mul.classic_in.next = false;
        self.mul.redc_in.next = false;
        self.mul.decrement_in.next = false;
        self.mul.n_prime_in.next = 0.into();

        self.lane.next = self.mul.lane.val();
        self.mul_done.next = self.mul.done.val();
        self.done.next = self.mul.done.val() & self.finish3.q.val();
        for j in 0..self.result.len() {
            self.result[j].next = self.mul.result[j].val();
        }
    }
}

#[cfg(test)]
mod tests;
