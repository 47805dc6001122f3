//! What the slot hands the multiplier (parts of [`SlotControl`]'s `update`): the operands, the
//! modulus and its N′.

use super::*;

/// The operand multiplexers (a wide REDC's: the base's limbs below L as B, from L on as A), and
/// B = 1 (`Operand::Unit`: the way out of the domain and the exact division). Which operands a
/// state's multiplication takes depends on the state and its counters only, which hold from one
/// issue to the next, so the selects are registered from the next state (this part comes after
/// every part that sets it) and are ready, in copies, whenever the state issues.
impl part::Part<part::OperandSelect> for SlotControl {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self,
            clock,
            a_result_sel,
            a_entry_sel,
            a_base_sel,
            b_result_sel,
            b_entry_sel,
            b_base_sel,
            b_r3_sel,
            b_t_mont_sel
        );
        self.b_unit_sel.clock.next = self.clock.val();
        self.a_next.next = Operand::Result;
        self.b_next.next = Operand::Result;
        match self.state.d.val() {
            SlotState::Waiting => {
                self.a_next.next = Operand::BaseHigh;
                self.b_next.next = Operand::BaseLow;
            }
            SlotState::Reduce => {
                self.b_next.next = Operand::R3;
            }
            SlotState::ToMontgomery => {
                // Segmented: acc (T[0]) · x̃. Fixed windows: x̃·x̃, unless the table is complete
                // already (1-bit windows): acc = T[top window], then as below.
                if self.segmented.val() {
                    self.a_next.next = Operand::Entry;
                } else if self.table_last.val() == 1 {
                    self.a_next.next = Operand::Entry;
                    self.b_next.next = Operand::Entry;
                    if self.windows.val() == 1 {
                        self.b_next.next = Operand::Unit;
                    }
                }
            }
            SlotState::Table => {
                // The next entry: T[j − 1]·x̃; the last one done, acc = T[top window] squared.
                self.b_next.next = Operand::Entry;
                if self.table_index.d.val() == self.table_last.val() {
                    self.a_next.next = Operand::Entry;
                    if self.windows.val() == 1 {
                        self.b_next.next = Operand::Unit;
                    }
                }
            }
            SlotState::Square => {
                // The window's last squaring is followed by its table multiplication.
                if self.squares_left.d.val() == 0 {
                    self.b_next.next = Operand::Entry;
                } else {
                    self.b_next.next = Operand::Result;
                }
            }
            SlotState::Multiply => {
                // After the last window's, out of the domain.
                if self.windows_left.d.val() == 1 {
                    self.b_next.next = Operand::Unit;
                } else {
                    self.b_next.next = Operand::Result;
                }
            }
            SlotState::BitProduct => {
                self.a_next.next = Operand::Entry;
                self.b_next.next = Operand::Entry;
            }
            SlotState::BitSquare => {
                self.a_next.next = Operand::Entry;
                if self.windows_left.d.val() == 1 {
                    self.b_next.next = Operand::Unit;
                }
            }
            SlotState::FromMontgomery => {
                self.b_next.next = Operand::Unit;
            }
            SlotState::Divide => {
                self.b_next.next = Operand::TMont;
            }
            _ => {}
        }
        self.a_result_sel.d.next = self.a_next.val() == Operand::Result;
        self.a_entry_sel.d.next = self.a_next.val() == Operand::Entry;
        self.a_base_sel.d.next = self.a_next.val() == Operand::BaseHigh;
        self.b_result_sel.d.next = self.b_next.val() == Operand::Result;
        self.b_entry_sel.d.next = self.b_next.val() == Operand::Entry;
        self.b_base_sel.d.next = self.b_next.val() == Operand::BaseLow;
        self.b_r3_sel.d.next = self.b_next.val() == Operand::R3;
        self.b_t_mont_sel.d.next = self.b_next.val() == Operand::TMont;
        self.b_unit_sel.d.next = self.b_next.val() == Operand::Unit;
        for c in 0..self.a_result.len() {
            self.a_result[c].next = 0.into();
            self.a_entry[c].next = 0.into();
            self.a_base[c].next = 0.into();
            self.b_result[c].next = 0.into();
            self.b_entry[c].next = 0.into();
            self.b_base[c].next = 0.into();
            self.b_r3[c].next = 0.into();
            self.b_t_mont[c].next = 0.into();
            if self.a_result_sel.q[c].val() {
                self.a_result[c].next = self.ones.val();
            }
            if self.a_entry_sel.q[c].val() {
                self.a_entry[c].next = self.ones.val();
            }
            if self.a_base_sel.q[c].val() {
                self.a_base[c].next = self.ones.val();
            }
            if self.b_result_sel.q[c].val() {
                self.b_result[c].next = self.ones.val();
            }
            if self.b_entry_sel.q[c].val() {
                self.b_entry[c].next = self.ones.val();
            }
            if self.b_base_sel.q[c].val() {
                self.b_base[c].next = self.ones.val();
            }
            if self.b_r3_sel.q[c].val() {
                self.b_r3[c].next = self.ones.val();
            }
            if self.b_t_mont_sel.q[c].val() {
                self.b_t_mont[c].next = self.ones.val();
            }
        }
        // The group size as a loop variable: rust-hdl indexes with loop variables only.
        for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
            for j in 0..self.a_out.len() {
                self.a_out[j].next = (self.mm_result[j].val() & self.a_result[j / g].val())
                    | (self.entry[j].val() & self.a_entry[j / g].val())
                    | (self.base_high[j].q.val() & self.a_base[j / g].val());
                self.b_out[j].next = (self.mm_result[j].val() & self.b_result[j / g].val())
                    | (self.entry[j].val() & self.b_entry[j / g].val())
                    | (self.base_low[j].q.val() & self.b_base[j / g].val())
                    | (self.r3[j].q.val() & self.b_r3[j / g].val())
                    | (self.t_mont[j].q.val() & self.b_t_mont[j / g].val());
            }
        }
        for j in 0..1 {
            if self.b_unit_sel.q.val() {
                self.b_out[j].next = 1.into();
            }
        }
    }
}

/// The multiplier's modulus and N′: the operation's (the state names the multiplication in
/// flight): p², the exact division's 2^(17M) − p or n; and n for the final correction. The
/// modulus's selects are copies of the next state's, so this part comes after every part that
/// sets the next state.
impl part::Part<part::ModulusSelect> for SlotControl {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, divide_sel, scale_sel);
        self.divide_sel.d.next = self.state.d.val() == SlotState::Divide;
        self.scale_sel.d.next = self.state.d.val() == SlotState::Scale;
        self.n_prime_out.next = self.n_prime.q.val();
        if self.state.q.val() == SlotState::Divide {
            self.n_prime_out.next = self.n_prime_div.q.val();
        }
        if self.state.q.val() == SlotState::Scale {
            self.n_prime_out.next = self.n_prime_n.q.val();
        }
        // The group size as a loop variable: rust-hdl indexes with loop variables only.
        for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
            for j in 0..self.n_out.len() {
                self.n_out[j].next = self.modulus[j].q.val();
                if self.divide_sel.q[j / g].val() {
                    self.n_out[j].next = self.modulus_div[j].q.val();
                }
                if self.scale_sel.q[j / g].val() {
                    self.n_out[j].next = self.modulus_n[j].q.val();
                }
            }
        }
        for j in 0..self.modulus_n.len() {
            self.n_public[j].next = self.modulus_n[j].q.val();
        }
    }
}
