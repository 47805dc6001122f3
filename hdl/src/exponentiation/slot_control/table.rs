//! The window table (parts of [`SlotControl`]'s `update`): the entry to read and its sources,
//! the writes of results into it.

use super::*;

/// The address of the table entry to read in the next cycle (`TableStorage` reads it then):
/// the window's; building the table, x̃ (T[1]) for the next entry until the last one; segmented,
/// sq (T[2]) while acc·sq is in flight, for the squaring that follows it, acc otherwise. It is
/// decided from the sequencer's next values, so that the table's address is a register, in
/// copies (`read_copies`), where it would otherwise be logic that reaches every limb's RAM.
impl part::Part<part::TableRead> for SlotControl {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, read_copies);
        if self.segmented.val() {
            self.read_address.d.next = 0.into();
            if self.acc_set.d.val() {
                self.read_address.d.next = 1.into();
            }
            if self.state.d.val() == SlotState::BitProduct {
                self.read_address.d.next = 2.into();
            }
        } else {
            for i in 0..1 {
                self.read_address.d.next = self.exponent[i].d.val();
            }
            if (self.state.d.val() == SlotState::Table) & (self.table_index.d.val() != self.table_last.val()) {
                self.read_address.d.next = 1.into();
            }
        }
        self.read_copies.d.next = self.read_address.d.val();
    }
}

/// The table: written with the result when a multiplication that stores it is done (the
/// window table's entries as it is built; segmented, sq into T[2] and acc into T[1] when the
/// exponent bit is 1), read at `read_address`, with the result bypassed when it is written to
/// the entry being read. Which state writes where depends on the state, its table index and
/// the exponent, so the write and the entry's sources are registered from the next ones and
/// ready, in copies, when the state issues (the entry is read only then).
impl part::Part<part::TableStorage> for SlotControl {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, entry_ram_sel, entry_bypass_sel, entry_one_sel, write_on_done, write_address);
        self.write_on_done_next.next = false;
        self.write_address_next.next = self.table_index.d.val();
        match self.state.d.val() {
            SlotState::ToMontgomery => {
                // x̃ into T[1], or segmented sq = x̃ into T[2].
                self.write_on_done_next.next = true;
                self.write_address_next.next = 1.into();
                if self.segmented.val() {
                    self.write_address_next.next = 2.into();
                }
            }
            SlotState::Table => {
                self.write_on_done_next.next = true;
            }
            SlotState::BitProduct => {
                // acc = acc·sq into T[1] when the bit is 1.
                for i in (self.exponent.len() - 1)..self.exponent.len() {
                    self.write_on_done_next.next = self.exponent[i].d.val().get_bit(0);
                }
                self.write_address_next.next = 1.into();
            }
            SlotState::BitSquare => {
                self.write_on_done_next.next = true;
                self.write_address_next.next = 2.into();
            }
            _ => {}
        }
        self.write_on_done.d.next = self.write_on_done_next.val();
        self.write_address.d.next = self.write_address_next.val();
        // The group size as a loop variable: rust-hdl indexes with loop variables only.
        for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
            for j in 0..self.table.len() {
                self.table[j].read_clock.next = self.clock.val();
                self.table[j].write_clock.next = self.clock.val();
                self.table[j].read_address.next = self.read_copies.q[j / g].val();
                self.table[j].write_address.next = self.write_address.q[j / g].val();
                self.table[j].write_data.next = self.mm_result[j].val();
                self.table[j].write_enable.next = self.mm_done.val() & self.write_on_done.q[j / g].val();
            }
        }

        // Every multiplexer here and in `OperandSelect` is an AND-OR of one-hot masks: per bit one
        // LUT over its sources, where an if-chain over the operand codes becomes a 16-way
        // multiplexer tree per bit.
        self.entry_one_sel.d.next = false;
        self.entry_bypass_sel.d.next = false;
        self.entry_ram_sel.d.next = false;
        if self.read_address.q.val() == 0 {
            self.entry_one_sel.d.next = true;
        } else if self.write_on_done_next.val() & (self.write_address_next.val() == self.read_address.q.val()) {
            self.entry_bypass_sel.d.next = true;
        } else {
            self.entry_ram_sel.d.next = true;
        }
        for c in 0..self.entry_ram.len() {
            self.entry_ram[c].next = 0.into();
            self.entry_bypass[c].next = 0.into();
            self.entry_one[c].next = 0.into();
            if self.entry_ram_sel.q[c].val() {
                self.entry_ram[c].next = self.ones.val();
            }
            if self.entry_bypass_sel.q[c].val() {
                self.entry_bypass[c].next = self.ones.val();
            }
            if self.entry_one_sel.q[c].val() {
                self.entry_one[c].next = self.ones.val();
            }
        }
        // The group size as a loop variable: rust-hdl indexes with loop variables only.
        for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
            for j in 0..self.table.len() {
                self.entry[j].next = (self.table[j].read_data.val() & self.entry_ram[j / g].val())
                    | (self.mm_result[j].val() & self.entry_bypass[j / g].val())
                    | (self.one[j].q.val() & self.entry_one[j / g].val());
            }
        }
    }
}
