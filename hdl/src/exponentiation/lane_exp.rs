//! The primes' decryption paths in the deep loop's lanes: each of the [`DeepMul`]'s k + 3 lanes
//! runs one prime's path of one ciphertext (`ecrt_golden::hw::FoldEcrtKey::decrypt_trace`,
//! multiplication for multiplication) with one of the key's two primes, so that every lane, and
//! so every DSP, is busy: the wide REDC of the ciphertext, ×R³ into the domain, the fixed-window
//! exponentiation by p − 1, the way out, the exact division and ×t·R mod n (see
//! [`super::slot_control`] for the path). Not yet in the accelerator, which runs the same path on
//! the two-slot unit ([`super::modexp`]); a lane's result is its prime's eCRT term.
//!
//! A lane's state (its phase, table index, squarings in the window, the next window and its
//! value) circulates in a ring as the multiplier's lanes do, and is advanced three cycles before
//! the lane's load phase, when the multiplier says it will be free then (`free_ahead`): that
//! leaves a cycle for the memories' address registers and two for their reads (the RAM's own
//! register and an output register, as a block RAM's DOREG), so that the operands reach the
//! multiplier through nothing but a multiplexer. The path does not depend on the values, so
//! every decision is known that early; its selects are registers, in copies.
//!
//! The lanes' window tables share one memory, a RAM per limb addressed by (lane, entry): only the
//! lane at its load phase reads or writes it, one entry each. A table is written as it is built
//! (x̃ = T[1] when ×R³ is done, then each entry); acc is never stored, the result of the
//! multiplication before being the next one's operand. Each prime has a region of the same memory
//! for its R mod p² (T[0], for the zero windows), R³ mod p² and t·R mod n, and a RAM per limb of
//! the moduli (M̂, p², 2^(17M) − p, n) addressed by (prime, kind), with their N′ in one more; the
//! exponent's windows are in a RAM of their own. The key loads as the two-slot unit's does, a limb or window a cycle
//! (`key_load_*`), while every lane is idle.

use crate::exponentiation::slot_control::LoadTarget;
use crate::fanout::replicas::{ReplicaSets, Replicas};
use crate::fanout::{copies, in_sets, sets, LIMBS_PER_COPY};
use crate::many;
use crate::multiplier::deep_mul::{DeepMul, LANE_BITS};
use crate::multiplier::delay_mul::DelayMul;
use crate::multiplier::mul_add::{X_BITS, Y_BITS};
use ecrt_golden::hw::{DelayedShape, FoldShape};
use rust_hdl::prelude::*;

/// Bits of a table address: (k + 5)·2^w entries, the lanes' tables and the two primes' constants.
pub const TABLE_ADDRESS_BITS: usize = 10;
/// Bits of a window's value.
pub const WINDOW_VALUE_BITS: usize = 6;
/// Bits of a window's index (and of a key load's limb index).
pub const WINDOW_INDEX_BITS: usize = 12;
/// Bits of the windows' memory's address: the prime, then the window's index.
pub const WINDOW_ADDRESS_BITS: usize = WINDOW_INDEX_BITS + 1;
/// Bits of the moduli's memory's address: the prime, then the kind (M̂, p², 2^(17M) − p, n).
const MODULUS_ADDRESS_BITS: usize = 3;

/// The lane that decides in the first cycle, of `lanes`: the multiplier's lane 0 is at its load
/// phase first, and a lane decides three cycles before its load phase.
pub fn first_deciding_lane(lanes: usize) -> usize {
    3 % lanes
}

/// A lane's phase: the multiplication in flight.
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum LanePhase {
    /// The wide REDC of the ciphertext (classic).
    Reduce,
    /// ×R³ mod p² (folding).
    ToMontgomery,
    /// An entry of the window table.
    Table,
    /// A squaring or a window's product.
    Window,
    /// ×1, out of the domain (classic).
    FromMontgomery,
    /// The exact division by p (classic, on x − 1).
    Divide,
    /// ×t·R mod n (classic): the term.
    Scale,
}

/// The exponentiation unit of a multiplier of lanes: `$name`, whose multiplier `$mul` (with
/// `$mul::new(&$shape)` and `$mul::lanes(&$shape)`, the ports of [`DeepMul`]) has D lanes.
macro_rules! lanes_unit {
    ($(#[$doc:meta])* $name:ident, $mul:ident, $shape:ty) => {
        $(#[$doc])*
        #[derive(LogicBlock)]
        pub struct $name {
            /// The clock.
            pub clock: Signal<In, Clock>,
            /// Write `key_load_data` into the next limb (or window) of `key_load_target` of prime
            /// `key_load_slot` (while every lane is idle; a target's limbs in order, least significant
            /// first, the exponent's windows most significant first).
            pub key_load: Signal<In, bool>,
            /// The prime a key load writes: false = p, true = q.
            pub key_load_slot: Signal<In, bool>,
            /// The constant a key load writes.
            pub key_load_target: Signal<In, LoadTarget>,
            /// A limb, constant or window.
            pub key_load_data: Signal<In, Bits<Y_BITS>>,
            /// The lane three cycles before its load phase is idle: `start` begins a path in it.
            pub can_start: Signal<Out, bool>,
            /// Begin prime `start_prime`'s path of a ciphertext in the lane `can_start` is about; its
            /// ciphertext comes three cycles later, at its load phase.
            pub start: Signal<In, bool>,
            /// The prime of a start: false = p, true = q.
            pub start_prime: Signal<In, bool>,
            /// The ciphertext's limbs below L (exact), at the load phase of a lane started three cycles
            /// before.
            pub cipher_low: Vec<Signal<In, Bits<X_BITS>>>,
            /// The ciphertext's limbs from L on, likewise.
            pub cipher_high: Vec<Signal<In, Bits<X_BITS>>>,
            /// The lane at its load phase now.
            pub lane: Signal<Out, Bits<LANE_BITS>>,
            /// The lane `can_start` is about: it reaches its load phase in three cycles.
            pub deciding_lane: Signal<Out, Bits<LANE_BITS>>,
            /// `lane`'s path is done: `result` is its prime's eCRT term (< n), in this cycle only.
            pub done: Signal<Out, bool>,
            /// `done` in the next cycle, for a user that registers the term's write enables: one
            /// signal per set of at most `MAX_REGISTER_FANOUT` copies of an enable for
            /// `LIMBS_PER_COPY` limbs each, each formed by a LUT of its own.
            pub done_next: Vec<Signal<Out, bool>>,
            /// The multiplier's result: `done`'s, when it says so.
            pub result: Vec<Signal<Out, Bits<X_BITS>>>,
            /// A multiplication finished in `lane` (for tests: every product of every lane shows).
            pub mul_done: Signal<Out, bool>,
            mul: $mul,
            // Table entries a lane: 2^w. The table's last entry, the last window, w.
            entries: Constant<Bits<TABLE_ADDRESS_BITS>>,
            last_entry: Constant<Bits<WINDOW_VALUE_BITS>>,
            last_window: Constant<Bits<WINDOW_INDEX_BITS>>,
            window_bits: Constant<Bits<4>>,
            // The deciding lane's table region: lane·2^w, advancing with the lanes; the primes' regions
            // (entries: R mod p², R³ mod p², t·R mod n).
            region: DFFWithInit<Bits<TABLE_ADDRESS_BITS>>,
            last_region: Constant<Bits<TABLE_ADDRESS_BITS>>,
            deciding: DFFWithInit<Bits<LANE_BITS>>,
            last_lane: Constant<Bits<LANE_BITS>>,
            p_region: Constant<Bits<TABLE_ADDRESS_BITS>>,
            q_region: Constant<Bits<TABLE_ADDRESS_BITS>>,
            key1_windows: Constant<Bits<WINDOW_ADDRESS_BITS>>,
            // The ring of lane states: position 0 decides, three cycles before its load phase.
            ring_active: Vec<DFF<bool>>,
            ring_prime: Vec<DFF<bool>>,
            ring_phase: Vec<DFF<LanePhase>>,
            ring_index: Vec<DFF<Bits<WINDOW_VALUE_BITS>>>,
            ring_squares: Vec<DFF<Bits<4>>>,
            ring_window: Vec<DFF<Bits<WINDOW_INDEX_BITS>>>,
            ring_value: Vec<DFF<Bits<WINDOW_VALUE_BITS>>>,
            ring_last: Vec<DFF<bool>>,
            // Position 0's comparisons and next window, made a cycle ahead from position 1 (which turns
            // into position 0), so that the decision starts from registers: its table index is the last
            // entry, its squarings are a window's or none, its window value is the last entry or 0,
            // its window is the last; its window plus one.
            index_last: DFF<bool>,
            squares_full: DFF<bool>,
            squares_none: DFF<bool>,
            value_last: DFF<bool>,
            value_zero: DFF<bool>,
            window_last: DFF<bool>,
            window_next: DFF<Bits<WINDOW_INDEX_BITS>>,
            // The decision: issue a multiplication; its A (the result, the table, the ciphertext) and B
            // (the table, the result, the ciphertext, 1); its mode and modulus (0: M̂, 1: p², 2:
            // 2^(17M) − p, 3: n); the entry it reads (in the prime's region or the lane's); whether its
            // result is written to the table, where; whether it ends the path.
            issue: Signal<Local, bool>,
            a_table: Signal<Local, bool>,
            // The ciphertext: its upper limbs as A and lower as B, a wide REDC (a start's).
            cipher: Signal<Local, bool>,
            b_result: Signal<Local, bool>,
            b_unit: Signal<Local, bool>,
            classic: Signal<Local, bool>,
            decrement: Signal<Local, bool>,
            kind: Signal<Local, Bits<2>>,
            prime: Signal<Local, bool>,
            // The table's read address, formed per set of at most MAX_REGISTER_FANOUT of its copies,
            // each on a copy of position 0's phase (one LUT drove all operands / LIMBS_PER_COPY
            // copies): whether it reads the prime's region, the entry, the address.
            phase_copies: Replicas<LanePhase>,
            each_read_prime_entry: Vec<Signal<Local, bool>>,
            each_read_entry: Vec<Signal<Local, Bits<TABLE_ADDRESS_BITS>>>,
            each_read_address: Vec<Signal<Local, Bits<TABLE_ADDRESS_BITS>>>,
            modulus_address: Signal<Local, Bits<MODULUS_ADDRESS_BITS>>,
            write: Signal<Local, bool>,
            write_entry: Signal<Local, Bits<WINDOW_VALUE_BITS>>,
            finish: Signal<Local, bool>,
            // The decision's registers, a cycle (1) and two (2) later (a copy per set of at most
            // MAX_REGISTER_FANOUT copies where copies follow), and at the load phase (3, or copies).
            issue1: DFF<bool>,
            issue2: DFF<bool>,
            a_table1: DFF<bool>,
            a_table2: Replicas<bool>,
            cipher1: DFF<bool>,
            // Kept copies: a set for A's copies, one for B's (equal registers would be merged).
            cipher2: Replicas<bool>,
            b_result1: DFF<bool>,
            b_result2: Replicas<bool>,
            b_unit1: DFF<bool>,
            b_unit2: Replicas<bool>,
            classic1: DFF<bool>,
            classic2: DFF<bool>,
            classic3: DFF<bool>,
            decrement1: DFF<bool>,
            decrement2: DFF<bool>,
            decrement3: DFF<bool>,
            n_prime_address1: DFF<Bits<MODULUS_ADDRESS_BITS>>,
            write1: DFF<bool>,
            write2: Replicas<bool>,
            write3: ReplicaSets<bool>,
            write_address1: DFF<Bits<TABLE_ADDRESS_BITS>>,
            write_address2: Replicas<Bits<TABLE_ADDRESS_BITS>>,
            finish1: DFF<bool>,
            finish2: Replicas<bool>,
            finish3: DFF<bool>,
            a_table_copies: ReplicaSets<bool>,
            cipher_a_copies: ReplicaSets<bool>,
            cipher_b_copies: ReplicaSets<bool>,
            b_result_copies: ReplicaSets<bool>,
            b_unit_copies: ReplicaSets<bool>,
            read_copies: ReplicaSets<Bits<TABLE_ADDRESS_BITS>>,
            write_copies: ReplicaSets<Bits<TABLE_ADDRESS_BITS>>,
            modulus_copies: Replicas<Bits<MODULUS_ADDRESS_BITS>>,
            // The table, a RAM per limb, and its output registers.
            table: Vec<RAM<Bits<X_BITS>, TABLE_ADDRESS_BITS>>,
            table_out: Vec<DFF<Bits<X_BITS>>>,
            // The moduli, a RAM per limb, and their output registers; N′ per (prime, kind), likewise.
            moduli: Vec<RAM<Bits<Y_BITS>, MODULUS_ADDRESS_BITS>>,
            moduli_out: Vec<DFF<Bits<Y_BITS>>>,
            n_primes: RAM<Bits<Y_BITS>, MODULUS_ADDRESS_BITS>,
            n_prime_out: DFF<Bits<Y_BITS>>,
            // The windows, at (prime, index).
            windows: RAM<Bits<WINDOW_VALUE_BITS>, WINDOW_ADDRESS_BITS>,
            window_address: Signal<Local, Bits<WINDOW_ADDRESS_BITS>>,
            window_address_r: DFF<Bits<WINDOW_ADDRESS_BITS>>,
            next_window: Signal<Local, Bits<WINDOW_INDEX_BITS>>,
            // Key loads: each registered as it comes (the prime and the data in copies: a set of
            // the prime's for the table's addresses, one for the moduli's, one for the rest); the
            // last load's limb (or window) index within its target, its target and prime, whether
            // there was one; each load decoded and registered, in copies per LIMBS_PER_COPY limbs
            // of the memories it writes (a table or moduli write, its address, the limb's index,
            // the data), and for N′ and the windows.
            key_load_r: DFF<bool>,
            key_load_target_r: DFF<LoadTarget>,
            key_load_data_r: Replicas<Bits<X_BITS>>,
            key_load_slot_r: Replicas<bool>,
            load_target: DFF<LoadTarget>,
            load_slot: DFF<bool>,
            loaded: DFF<bool>,
            table_load: ReplicaSets<bool>,
            table_load_address: ReplicaSets<Bits<TABLE_ADDRESS_BITS>>,
            moduli_load: Replicas<bool>,
            moduli_load_address: Replicas<Bits<MODULUS_ADDRESS_BITS>>,
            load_index_copies: ReplicaSets<Bits<WINDOW_INDEX_BITS>>,
            load_data: ReplicaSets<Bits<X_BITS>>,
            n_prime_load: DFF<bool>,
            n_prime_load_address: DFF<Bits<MODULUS_ADDRESS_BITS>>,
            window_load: DFF<bool>,
            load_n_prime: Signal<Local, bool>,
            // The limb index, whether the table is written and its entry, per set of at most
            // MAX_REGISTER_FANOUT of their copies (one LUT drove all operands / LIMBS_PER_COPY of
            // them): the index on the set's copy of the last load's (`load_index`, a copy a set),
            // the others decoded from the load's target as it comes, a register a set.
            load_index: Replicas<Bits<WINDOW_INDEX_BITS>>,
            load_follows: Signal<Local, bool>,
            each_index: Vec<Signal<Local, Bits<WINDOW_INDEX_BITS>>>,
            load_entry_sets: Replicas<Bits<TABLE_ADDRESS_BITS>>,
            load_table_sets: Replicas<bool>,
            load_modulus: Signal<Local, bool>,
            load_kind: Signal<Local, Bits<2>>,
            load_modulus_address: Signal<Local, Bits<MODULUS_ADDRESS_BITS>>,
            // Each limb's index, and q's half of the moduli's memory.
            limb_index: Vec<Constant<Bits<WINDOW_INDEX_BITS>>>,
            second_prime_moduli: Constant<Bits<MODULUS_ADDRESS_BITS>>,
        }

        impl $name {
            /// The lanes of `shape`'s deep-loop multiplier, for exponents of `exponent_bits` bits in
            /// windows of `window_bits` (2 to 6).
            pub fn new(shape: &$shape, exponent_bits: usize, window_bits: usize) -> Self {
                let (lanes, operands, modulus) = ($mul::lanes(shape), shape.operand_limbs, shape.modulus_limbs);
                assert!((2..=WINDOW_VALUE_BITS).contains(&window_bits), "windows of 2 to 6 bits");
                let entries = 1usize << window_bits;
                let windows = exponent_bits.div_ceil(window_bits);
                assert!((lanes + 2) * entries <= 1 << TABLE_ADDRESS_BITS, "the table memory is too small");
                assert!((2..1 << WINDOW_INDEX_BITS).contains(&windows), "2 windows at least");
                let region = |lane: usize| Bits::<TABLE_ADDRESS_BITS>::from((lane * entries) as u64);
                $name {
                    clock: Default::default(),
                    key_load: Default::default(),
                    key_load_slot: Default::default(),
                    key_load_target: Default::default(),
                    key_load_data: Default::default(),
                    can_start: Default::default(),
                    start: Default::default(),
                    start_prime: Default::default(),
                    cipher_low: many(operands),
                    cipher_high: many(operands),
                    lane: Default::default(),
                    deciding_lane: Default::default(),
                    done: Default::default(),
                    done_next: many(sets(copies(operands))),
                    result: many(operands),
                    mul_done: Default::default(),
                    mul: $mul::new(shape),
                    entries: Constant::new(region(1)),
                    last_entry: Constant::new(((entries - 1) as u64).into()),
                    last_window: Constant::new(((windows - 1) as u64).into()),
                    window_bits: Constant::new((window_bits as u64).into()),
                    region: DFFWithInit::new(region(first_deciding_lane(lanes))),
                    last_region: Constant::new(region(lanes - 1)),
                    deciding: DFFWithInit::new((first_deciding_lane(lanes) as u64).into()),
                    last_lane: Constant::new(((lanes - 1) as u64).into()),
                    p_region: Constant::new(region(lanes)),
                    q_region: Constant::new(region(lanes + 1)),
                    key1_windows: Constant::new((1u64 << WINDOW_INDEX_BITS).into()),
                    ring_active: many(lanes),
                    ring_prime: many(lanes),
                    ring_phase: many(lanes),
                    ring_index: many(lanes),
                    ring_squares: many(lanes),
                    ring_window: many(lanes),
                    ring_value: many(lanes),
                    ring_last: many(lanes),
                    index_last: Default::default(),
                    squares_full: Default::default(),
                    squares_none: Default::default(),
                    value_last: Default::default(),
                    value_zero: Default::default(),
                    window_last: Default::default(),
                    window_next: Default::default(),
                    issue: Default::default(),
                    a_table: Default::default(),
                    cipher: Default::default(),
                    b_result: Default::default(),
                    b_unit: Default::default(),
                    classic: Default::default(),
                    decrement: Default::default(),
                    kind: Default::default(),
                    prime: Default::default(),
                    phase_copies: Replicas::new(sets(copies(operands))),
                    each_read_prime_entry: many(sets(copies(operands))),
                    each_read_entry: many(sets(copies(operands))),
                    each_read_address: many(sets(copies(operands))),
                    modulus_address: Default::default(),
                    write: Default::default(),
                    write_entry: Default::default(),
                    finish: Default::default(),
                    issue1: Default::default(),
                    issue2: Default::default(),
                    a_table1: Default::default(),
                    a_table2: Replicas::new(sets(copies(operands))),
                    cipher1: Default::default(),
                    cipher2: Replicas::new(2 * sets(copies(operands))),
                    b_result1: Default::default(),
                    b_result2: Replicas::new(sets(copies(operands))),
                    b_unit1: Default::default(),
                    b_unit2: Replicas::new(sets(copies(operands))),
                    classic1: Default::default(),
                    classic2: Default::default(),
                    classic3: Default::default(),
                    decrement1: Default::default(),
                    decrement2: Default::default(),
                    decrement3: Default::default(),
                    n_prime_address1: Default::default(),
                    write1: Default::default(),
                    write2: Replicas::new(sets(copies(operands))),
                    write3: in_sets(copies(operands), 1),
                    write_address1: Default::default(),
                    write_address2: Replicas::new(sets(copies(operands))),
                    finish1: Default::default(),
                    finish2: Replicas::new(sets(copies(operands))),
                    finish3: Default::default(),
                    a_table_copies: in_sets(copies(operands), 1),
                    cipher_a_copies: in_sets(copies(operands), 1),
                    cipher_b_copies: in_sets(copies(operands), 1),
                    b_result_copies: in_sets(copies(operands), 1),
                    b_unit_copies: in_sets(copies(operands), 1),
                    read_copies: in_sets(copies(operands), 1),
                    write_copies: in_sets(copies(operands), 1),
                    modulus_copies: Replicas::new(copies(modulus)),
                    table: many(operands),
                    table_out: many(operands),
                    moduli: many(modulus),
                    moduli_out: many(modulus),
                    n_primes: Default::default(),
                    n_prime_out: Default::default(),
                    windows: Default::default(),
                    window_address: Default::default(),
                    window_address_r: Default::default(),
                    next_window: Default::default(),
                    load_target: Default::default(),
                    load_slot: Default::default(),
                    table_load: in_sets(copies(operands), 1),
                    table_load_address: in_sets(copies(operands), 1),
                    moduli_load: Replicas::new(copies(modulus)),
                    moduli_load_address: Replicas::new(copies(modulus)),
                    load_index_copies: in_sets(copies(operands), 1),
                    load_data: in_sets(copies(operands), 1),
                    n_prime_load: Default::default(),
                    n_prime_load_address: Default::default(),
                    key_load_r: Default::default(),
                    key_load_target_r: Default::default(),
                    key_load_data_r: Replicas::new(sets(copies(operands))),
                    key_load_slot_r: Replicas::new(sets(copies(operands)) + 2),
                    window_load: Default::default(),
                    load_n_prime: Default::default(),
                    loaded: Default::default(),
                    load_index: Replicas::new(sets(copies(operands))),
                    load_follows: Default::default(),
                    each_index: many(sets(copies(operands))),
                    load_entry_sets: Replicas::new(sets(copies(operands))),
                    load_table_sets: Replicas::new(sets(copies(operands))),
                    load_modulus: Default::default(),
                    load_kind: Default::default(),
                    load_modulus_address: Default::default(),
                    limb_index: (0..operands.max(modulus)).map(|j| Constant::new((j as u64).into())).collect(),
                    second_prime_moduli: Constant::new(4u64.into()),
                }
            }
        }

        impl Logic for $name {
            #[hdl_gen]
            fn update(&mut self) {
                dff_setup!(
                    self,
                    clock,
                    issue1,
                    issue2,
                    a_table1,
                    cipher1,
                    b_result1,
                    b_unit1,
                    classic1,
                    classic2,
                    classic3,
                    decrement1,
                    decrement2,
                    decrement3,
                    n_prime_address1,
                    write1,
                    write_address1,
                    finish1,
                    finish3,
                    window_address_r,
                    load_target,
                    load_slot,
                    n_prime_load,
                    n_prime_load_address,
                    window_load,
                    n_prime_out,
                    loaded,
                    key_load_r,
                    key_load_target_r,
                    index_last,
                    squares_full,
                    squares_none,
                    value_last,
                    value_zero,
                    window_last,
                    window_next
                );
                clock!(
                    self,
                    clock,
                    mul,
                    region,
                    deciding,
                    a_table2,
                    b_result2,
                    b_unit2,
                    write2,
                    write_address2,
                    key_load_data_r,
                    a_table_copies,
                    cipher2,
                    cipher_a_copies,
                    cipher_b_copies,
                    b_result_copies,
                    b_unit_copies,
                    read_copies,
                    write_copies,
                    write3,
                    modulus_copies,
                    table_load,
                    table_load_address,
                    moduli_load,
                    moduli_load_address,
                    key_load_slot_r,
                    load_index_copies,
                    load_data,
                    phase_copies,
                    load_index,
                    load_entry_sets,
                    finish2,
                    load_table_sets
                );
                for p in 0..self.ring_active.len() {
                    self.ring_active[p].clock.next = self.clock.val();
                    self.ring_prime[p].clock.next = self.clock.val();
                    self.ring_phase[p].clock.next = self.clock.val();
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
                for i in 0..self.moduli.len() {
                    self.moduli[i].read_clock.next = self.clock.val();
                    self.moduli[i].write_clock.next = self.clock.val();
                    self.moduli_out[i].clock.next = self.clock.val();
                }
                self.n_primes.read_clock.next = self.clock.val();
                self.n_primes.write_clock.next = self.clock.val();
                self.windows.read_clock.next = self.clock.val();
                self.windows.write_clock.next = self.clock.val();

                // The deciding lane and its region.
                self.region.d.next = self.region.q.val() + self.entries.val();
                if self.region.q.val() == self.last_region.val() {
                    self.region.d.next = 0.into();
                }
                self.deciding.d.next = self.deciding.q.val() + 1;
                if self.deciding.q.val() == self.last_lane.val() {
                    self.deciding.d.next = 0.into();
                }
                self.deciding_lane.next = self.deciding.q.val();

                // The ring turns; position 0 decides and writes the lane's next state to the top.
                for dn in (self.ring_active.len())..(self.ring_active.len() + 1) {
                    for p in 1..self.ring_active.len() {
                        self.ring_active[p - 1].d.next = self.ring_active[p].q.val();
                        self.ring_prime[p - 1].d.next = self.ring_prime[p].q.val();
                        self.ring_phase[p - 1].d.next = self.ring_phase[p].q.val();
                        self.ring_index[p - 1].d.next = self.ring_index[p].q.val();
                        self.ring_squares[p - 1].d.next = self.ring_squares[p].q.val();
                        self.ring_window[p - 1].d.next = self.ring_window[p].q.val();
                        self.ring_value[p - 1].d.next = self.ring_value[p].q.val();
                        self.ring_last[p - 1].d.next = self.ring_last[p].q.val();
                    }
                    self.ring_active[dn - 1].d.next = self.ring_active[0].q.val();
                    self.ring_prime[dn - 1].d.next = self.ring_prime[0].q.val();
                    self.ring_phase[dn - 1].d.next = self.ring_phase[0].q.val();
                    self.ring_index[dn - 1].d.next = self.ring_index[0].q.val();
                    self.ring_squares[dn - 1].d.next = self.ring_squares[0].q.val();
                    self.ring_window[dn - 1].d.next = self.ring_window[0].q.val();
                    self.ring_last[dn - 1].d.next = self.ring_last[0].q.val();
                    self.ring_value[dn - 1].d.next = self.ring_value[0].q.val();
                    for q in 1..2 {
                        self.index_last.d.next = self.ring_index[q].q.val() == self.last_entry.val();
                        self.squares_full.d.next = self.ring_squares[q].q.val() == self.window_bits.val();
                        self.squares_none.d.next = !self.ring_squares[q].q.val().any();
                        self.value_last.d.next = self.ring_value[q].q.val() == self.last_entry.val();
                        self.value_zero.d.next = !self.ring_value[q].q.val().any();
                        self.window_last.d.next = self.ring_window[q].q.val() == self.last_window.val();
                        self.window_next.d.next = self.ring_window[q].q.val() + 1;
                    }

                    // The decision: a start issues the wide REDC; a multiplication that ends at the load
                    // phase issues the path's next (the window table written as it is built; acc =
                    // T[top window], bypassed when that entry is being written; T[0] is the prime's R
                    // mod p²), and the path's last ends it.
                    self.can_start.next = !self.ring_active[0].q.val();
                    self.issue.next = false;
                    self.a_table.next = false;
                    self.cipher.next = false;
                    self.b_result.next = false;
                    self.b_unit.next = false;
                    self.classic.next = false;
                    self.decrement.next = false;
                    self.kind.next = 0.into();
                    self.prime.next = self.ring_prime[0].q.val();
                    self.write.next = false;
                    self.write_entry.next = self.ring_index[0].q.val();
                    self.finish.next = false;
                    self.next_window.next = self.ring_window[0].q.val();
                    if !self.ring_active[0].q.val() {
                        if self.start.val() {
                            self.issue.next = true;
                            self.cipher.next = true;
                            self.classic.next = true;
                            self.kind.next = 1.into();
                            self.prime.next = self.start_prime.val();
                            self.ring_active[dn - 1].d.next = true;
                            self.ring_prime[dn - 1].d.next = self.start_prime.val();
                            self.ring_phase[dn - 1].d.next = LanePhase::Reduce;
                            self.ring_squares[dn - 1].d.next = 0.into();
                            self.ring_last[dn - 1].d.next = false;
                            self.next_window.next = 0.into();
                            self.ring_window[dn - 1].d.next = 0.into();
                        }
                    } else if self.mul.free_ahead.val() {
                        self.issue.next = true;
                        match self.ring_phase[0].q.val() {
                            LanePhase::Reduce => {
                                // ×R³ mod p².
                                self.ring_phase[dn - 1].d.next = LanePhase::ToMontgomery;
                            }
                            LanePhase::ToMontgomery => {
                                // x̃ into T[1]; T[2] = x̃·x̃.
                                self.write.next = true;
                                self.write_entry.next = 1.into();
                                self.b_result.next = true;
                                self.ring_phase[dn - 1].d.next = LanePhase::Table;
                                self.ring_index[dn - 1].d.next = 2.into();
                            }
                            LanePhase::Table => {
                                self.write.next = true;
                                if !self.index_last.q.val() {
                                    self.ring_index[dn - 1].d.next = self.ring_index[0].q.val() + 1;
                                } else {
                                    // acc = T[top window], squared.
                                    self.ring_phase[dn - 1].d.next = LanePhase::Window;
                                    self.ring_squares[dn - 1].d.next = 1.into();
                                    self.next_window.next = 1.into();
                                    self.ring_window[dn - 1].d.next = 1.into();
                                    if !self.value_last.q.val() {
                                        self.a_table.next = true;
                                    }
                                    self.b_result.next = !self.a_table.val();
                                }
                            }
                            LanePhase::Window => {
                                if self.ring_last[0].q.val() & self.squares_none.q.val() {
                                    // The last window's product: out of the domain.
                                    self.b_unit.next = true;
                                    self.classic.next = true;
                                    self.kind.next = 1.into();
                                    self.ring_phase[dn - 1].d.next = LanePhase::FromMontgomery;
                                } else if !self.squares_full.q.val() {
                                    self.b_result.next = true;
                                    self.ring_squares[dn - 1].d.next = self.ring_squares[0].q.val() + 1;
                                } else {
                                    self.ring_squares[dn - 1].d.next = 0.into();
                                    self.next_window.next = self.window_next.q.val();
                                    self.ring_window[dn - 1].d.next = self.window_next.q.val();
                                    self.ring_last[dn - 1].d.next = self.window_last.q.val();
                                }
                            }
                            LanePhase::FromMontgomery => {
                                // The exact division: (x − 1)·1 modulo 2^(17M) − p.
                                self.b_unit.next = true;
                                self.classic.next = true;
                                self.decrement.next = true;
                                self.kind.next = 2.into();
                                self.ring_phase[dn - 1].d.next = LanePhase::Divide;
                            }
                            LanePhase::Divide => {
                                // ×t·R mod n.
                                self.classic.next = true;
                                self.kind.next = 3.into();
                                self.ring_phase[dn - 1].d.next = LanePhase::Scale;
                            }
                            LanePhase::Scale => {
                                self.issue.next = false;
                                self.finish.next = true;
                                self.ring_active[dn - 1].d.next = false;
                            }
                        }
                    }
                    // The entry read: the lane's table, or the prime's region (its R mod p² for a zero
                    // window, whose value is the only entry 0 read). Regions are aligned to 2^w
                    // entries: an entry's address is its region's ORed with it. It is the entry the
                    // lane's next multiplication reads if it issues: what is read when nothing issues
                    // goes unused, so the address does not wait for `free_ahead` (the multiplier's
                    // turn count: with it, five LUT levels in some of Yosys' mappings).
                    // Position 0's phase in copies: position 1's, as the ring turns.
                    self.phase_copies.d.next = self.ring_phase[0].d.val();
                    for s in 0..self.each_read_address.len() {
                        self.each_read_prime_entry[s].next = false;
                        self.each_read_entry[s].next = 1.into();
                        match self.phase_copies.q[s].val() {
                            LanePhase::Reduce => {
                                self.each_read_prime_entry[s].next = true; // R³ mod p²
                            }
                            LanePhase::ToMontgomery => {}
                            LanePhase::Table => {
                                if self.index_last.q.val() {
                                    // acc = T[top window].
                                    self.each_read_entry[s].next =
                                        bit_cast::<TABLE_ADDRESS_BITS, WINDOW_VALUE_BITS>(self.ring_value[0].q.val());
                                    self.each_read_prime_entry[s].next = self.value_zero.q.val();
                                }
                            }
                            LanePhase::Window => {
                                if self.squares_full.q.val() & !(self.ring_last[0].q.val() & self.squares_none.q.val()) {
                                    // The window's table entry.
                                    self.each_read_entry[s].next =
                                        bit_cast::<TABLE_ADDRESS_BITS, WINDOW_VALUE_BITS>(self.ring_value[0].q.val());
                                    self.each_read_prime_entry[s].next = self.value_zero.q.val();
                                }
                            }
                            LanePhase::FromMontgomery => {}
                            LanePhase::Divide => {
                                self.each_read_prime_entry[s].next = true; // t·R mod n
                                self.each_read_entry[s].next = 2.into();
                            }
                            LanePhase::Scale => {}
                        }
                        self.each_read_address[s].next = self.region.q.val() | self.each_read_entry[s].val();
                        if self.each_read_prime_entry[s].val() {
                            self.each_read_address[s].next = self.p_region.val() | self.each_read_entry[s].val();
                            if self.prime.val() {
                                self.each_read_address[s].next = self.q_region.val() | self.each_read_entry[s].val();
                            }
                        }
                    }
                    self.modulus_address.next = bit_cast::<MODULUS_ADDRESS_BITS, 2>(self.kind.val());
                    if self.prime.val() {
                        self.modulus_address.next =
                            bit_cast::<MODULUS_ADDRESS_BITS, 2>(self.kind.val()) | self.second_prime_moduli.val();
                    }
                    // The window after the next decision's: its address is registered, its value reaches
                    // the ring three cycles later.
                    self.window_address.next = bit_cast::<WINDOW_ADDRESS_BITS, WINDOW_INDEX_BITS>(self.next_window.val());
                    if self.prime.val() {
                        self.window_address.next = bit_cast::<WINDOW_ADDRESS_BITS, WINDOW_INDEX_BITS>(self.next_window.val())
                            | self.key1_windows.val();
                    }
                    self.window_address_r.d.next = self.window_address.val();
                    self.windows.read_address.next = self.window_address_r.q.val();
                    // Three cycles on, the deciding lane is at position −3 mod D.
                    for vp in ((2 * self.ring_value.len() - 3) % self.ring_value.len())
                        ..((2 * self.ring_value.len() - 3) % self.ring_value.len() + 1)
                    {
                        self.ring_value[vp].d.next = self.windows.read_data.val();
                    }
                }

                // The decision's way to the load phase: the addresses are registered (1), the RAMs read
                // (2), their outputs are registered (3).
                self.issue1.d.next = self.issue.val();
                self.issue2.d.next = self.issue1.q.val();
                self.mul.start_next.next = self.issue2.q.val();
                self.a_table1.d.next = self.a_table.val();
                // Each source drives a set of at most MAX_REGISTER_FANOUT copies.
                self.a_table2.d.next = self.a_table1.q.val();
                self.cipher2.d.next = self.cipher1.q.val();
                self.b_result2.d.next = self.b_result1.q.val();
                self.b_unit2.d.next = self.b_unit1.q.val();
                for sn in (self.a_table_copies.d.len())..(self.a_table_copies.d.len() + 1) {
                    for i in 0..self.a_table_copies.d.len() {
                        self.a_table_copies.d[i].next = self.a_table2.q[i].val();
                        self.cipher_a_copies.d[i].next = self.cipher2.q[i].val();
                        self.cipher_b_copies.d[i].next = self.cipher2.q[sn + i].val();
                        self.b_result_copies.d[i].next = self.b_result2.q[i].val();
                        self.b_unit_copies.d[i].next = self.b_unit2.q[i].val();
                    }
                }
                self.cipher1.d.next = self.cipher.val();
                self.b_result1.d.next = self.b_result.val();
                self.b_unit1.d.next = self.b_unit.val();
                self.classic1.d.next = self.classic.val();
                self.classic2.d.next = self.classic1.q.val();
                self.classic3.d.next = self.classic2.q.val();
                self.mul.classic_in.next = self.classic3.q.val();
                // A start's wide REDC is the one multiplication of the ciphertext.
                self.mul.redc_in.next = self.cipher_a_copies.q[0].val();
                self.decrement1.d.next = self.decrement.val();
                self.decrement2.d.next = self.decrement1.q.val();
                self.decrement3.d.next = self.decrement2.q.val();
                self.mul.decrement_in.next = self.decrement3.q.val();
                self.n_prime_address1.d.next = self.modulus_address.val();
                for s in 0..self.read_copies.d.len() {
                    self.read_copies.d[s].next = self.each_read_address[s].val();
                }
                self.modulus_copies.d.next = self.modulus_address.val();
                self.write1.d.next = self.write.val();
                self.write2.d.next = self.write1.q.val();
                for i in 0..self.write3.d.len() {
                    self.write3.d[i].next = self.write2.q[i].val();
                }
                self.write_address1.d.next =
                    self.region.q.val() | bit_cast::<TABLE_ADDRESS_BITS, WINDOW_VALUE_BITS>(self.write_entry.val());
                self.write_address2.d.next = self.write_address1.q.val();
                for i in 0..self.write_copies.d.len() {
                    self.write_copies.d[i].next = self.write_address2.q[i].val();
                }
                self.finish1.d.next = self.finish.val();
                self.finish2.d.next = self.finish1.q.val();
                self.finish3.d.next = self.finish2.q[0].val();

                // Key loads: registered as they come; each limb's index within its target (0 when the
                // target or the prime changes) and where it goes, decoded from the registered load and
                // registered, in copies per LIMBS_PER_COPY limbs of the memories they write.
                // The prime's copies: a set for the tables' addresses, one for the moduli's, one
                // for the rest.
                for sn in (self.table_load_address.d.len())..(self.table_load_address.d.len() + 1) {
                    self.key_load_r.d.next = self.key_load.val();
                    self.key_load_target_r.d.next = self.key_load_target.val();
                    self.key_load_data_r.d.next = bit_cast::<X_BITS, Y_BITS>(self.key_load_data.val());
                    self.key_load_slot_r.d.next = self.key_load_slot.val();
                    self.load_follows.next = self.loaded.q.val()
                        & (self.load_target.q.val() == self.key_load_target_r.q.val())
                        & (self.load_slot.q.val() == self.key_load_slot_r.q[sn + 1].val());
                    for s in 0..self.each_index.len() {
                        self.each_index[s].next = 0.into();
                        if self.load_follows.val() {
                            self.each_index[s].next = self.load_index.q[s].val() + 1;
                        }
                        self.load_index_copies.d[s].next = self.each_index[s].val();
                    }
                    self.load_index.d.next = self.load_index.q[0].val();
                    if self.key_load_r.q.val() {
                        self.load_index.d.next = self.each_index[0].val();
                        self.load_target.d.next = self.key_load_target_r.q.val();
                        self.load_slot.d.next = self.key_load_slot_r.q[sn + 1].val();
                        self.loaded.d.next = true;
                    }
                    self.load_table_sets.d.next = false;
                    self.load_entry_sets.d.next = 0.into();
                    match self.key_load_target.val() {
                        LoadTarget::One => {
                            self.load_table_sets.d.next = true;
                        }
                        LoadTarget::R3 => {
                            self.load_table_sets.d.next = true;
                            self.load_entry_sets.d.next = 1.into();
                        }
                        LoadTarget::TMont => {
                            self.load_table_sets.d.next = true;
                            self.load_entry_sets.d.next = 2.into();
                        }
                        _ => {}
                    }
                    self.load_modulus.next = false;
                    self.load_n_prime.next = false;
                    self.load_kind.next = 0.into();
                    match self.key_load_target_r.q.val() {
                        LoadTarget::MHat => {
                            self.load_modulus.next = true;
                        }
                        LoadTarget::Modulus => {
                            self.load_modulus.next = true;
                            self.load_kind.next = 1.into();
                        }
                        LoadTarget::ModulusDiv => {
                            self.load_modulus.next = true;
                            self.load_kind.next = 2.into();
                        }
                        LoadTarget::ModulusN => {
                            self.load_modulus.next = true;
                            self.load_kind.next = 3.into();
                        }
                        LoadTarget::NPrime => {
                            self.load_n_prime.next = true;
                            self.load_kind.next = 1.into();
                        }
                        LoadTarget::NPrimeDiv => {
                            self.load_n_prime.next = true;
                            self.load_kind.next = 2.into();
                        }
                        LoadTarget::NPrimeN => {
                            self.load_n_prime.next = true;
                            self.load_kind.next = 3.into();
                        }
                        _ => {}
                    }
                    for i in 0..self.table_load_address.d.len() {
                        self.table_load_address.d[i].next = self.p_region.val() | self.load_entry_sets.q[i].val();
                        if self.key_load_slot_r.q[i].val() {
                            self.table_load_address.d[i].next = self.q_region.val() | self.load_entry_sets.q[i].val();
                        }
                    }
                    self.load_modulus_address.next = bit_cast::<MODULUS_ADDRESS_BITS, 2>(self.load_kind.val());
                    if self.key_load_slot_r.q[sn].val() {
                        self.load_modulus_address.next =
                            bit_cast::<MODULUS_ADDRESS_BITS, 2>(self.load_kind.val()) | self.second_prime_moduli.val();
                    }
                    for s in 0..self.table_load.d.len() {
                        self.table_load.d[s].next = self.key_load_r.q.val() & self.load_table_sets.q[s].val();
                    }
                    self.moduli_load.d.next = self.key_load_r.q.val() & self.load_modulus.val();
                    self.moduli_load_address.d.next = self.load_modulus_address.val();
                    for i in 0..self.load_data.d.len() {
                        self.load_data.d[i].next = self.key_load_data_r.q[i].val();
                    }
                    self.n_prime_load.d.next = self.key_load_r.q.val() & self.load_n_prime.val();
                    self.n_prime_load_address.d.next = self.load_modulus_address.val();
                    self.window_load.d.next = self.key_load_r.q.val() & (self.key_load_target_r.q.val() == LoadTarget::Exponent);
                    self.n_primes.write_address.next = self.n_prime_load_address.q.val();
                    self.n_primes.write_data.next = self.load_data.q[0].val().get_bits::<Y_BITS>(0);
                    self.n_primes.write_enable.next = self.n_prime_load.q.val();
                    self.windows.write_address.next = bit_cast::<WINDOW_ADDRESS_BITS, WINDOW_INDEX_BITS>(self.load_index.q[0].val());
                    if self.load_slot.q.val() {
                        self.windows.write_address.next =
                            bit_cast::<WINDOW_ADDRESS_BITS, WINDOW_INDEX_BITS>(self.load_index.q[0].val()) | self.key1_windows.val();
                    }
                    self.windows.write_data.next = self.load_data.q[0].val().get_bits::<WINDOW_VALUE_BITS>(0);
                    self.windows.write_enable.next = self.window_load.q.val();
                }

                // The load phase: the operands, the modulus and N′, the table's write.
                for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
                    for j in 0..self.table.len() {
                        self.table[j].read_address.next = self.read_copies.q[j / g].val();
                        self.table_out[j].d.next = self.table[j].read_data.val();
                        self.mul.a_in[j].next = self.mul.result[j].val();
                        if self.a_table_copies.q[j / g].val() {
                            self.mul.a_in[j].next = self.table_out[j].q.val();
                        }
                        if self.cipher_a_copies.q[j / g].val() {
                            self.mul.a_in[j].next = self.cipher_high[j].val();
                        }
                        self.mul.b_in[j].next = self.table_out[j].q.val();
                        if self.b_result_copies.q[j / g].val() {
                            self.mul.b_in[j].next = self.mul.result[j].val();
                        }
                        if self.cipher_b_copies.q[j / g].val() {
                            self.mul.b_in[j].next = self.cipher_low[j].val();
                        }
                        if self.b_unit_copies.q[j / g].val() {
                            self.mul.b_in[j].next = 0.into();
                        }
                        self.table[j].write_address.next = self.write_copies.q[j / g].val();
                        self.table[j].write_data.next = self.mul.result[j].val();
                        self.table[j].write_enable.next = self.write3.q[j / g].val();
                        if self.table_load.q[j / g].val() {
                            self.table[j].write_address.next = self.table_load_address.q[j / g].val();
                            self.table[j].write_data.next = self.load_data.q[j / g].val();
                            self.table[j].write_enable.next = self.load_index_copies.q[j / g].val() == self.limb_index[j].val();
                        }
                    }
                    for i in 0..self.moduli.len() {
                        self.moduli[i].read_address.next = self.modulus_copies.q[i / g].val();
                        self.moduli_out[i].d.next = self.moduli[i].read_data.val();
                        self.mul.m_hat_in[i].next = self.moduli_out[i].q.val();
                        self.moduli[i].write_address.next = self.moduli_load_address.q[i / g].val();
                        self.moduli[i].write_data.next = self.load_data.q[i / g].val().get_bits::<Y_BITS>(0);
                        self.moduli[i].write_enable.next = self.moduli_load.q[i / g].val()
                            & (self.load_index_copies.q[i / g].val() == self.limb_index[i].val());
                    }
                }
                if self.b_unit_copies.q[0].val() {
                    self.mul.b_in[0].next = 1.into();
                }
                self.n_primes.read_address.next = self.n_prime_address1.q.val();
                self.n_prime_out.d.next = self.n_primes.read_data.val();
                self.mul.n_prime_in.next = self.n_prime_out.q.val();

                self.lane.next = self.mul.lane.val();
                self.mul_done.next = self.mul.done.val();
                self.done.next = self.mul.done.val() & self.finish3.q.val();
                for s in 0..self.done_next.len() {
                    self.done_next[s].next = self.mul.done_next.val() & self.finish2.q[s].val();
                }
                for j in 0..self.result.len() {
                    self.result[j].next = self.mul.result[j].val();
                }
            }
        }
    };
}

lanes_unit!(
    /// D = k + 3 lanes of the primes' decryption paths on one deep-loop multiplier.
    LaneExp,
    DeepMul,
    FoldShape
);

lanes_unit!(
    /// The two lanes of the delayed-quotient multiplier, a prime's decryption path each.
    DelayExp,
    DelayMul,
    DelayedShape
);

#[cfg(test)]
mod tests;
