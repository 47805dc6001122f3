//! The slot's sequencer (parts of [`SlotControl`]'s `update`): each cycle's defaults, the
//! schedule's step from state to state, the table's completion, the next multiplication's mode and
//! the exponent's rotation.

use super::*;

/// Each cycle's defaults: the sequencer's registers hold, the pulses are low, nothing is written
/// to the table.
impl part::Part<part::Defaults> for SlotControl {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            load_data_r,
            load_n_prime,
            load_n_prime_div,
            load_n_prime_n,
            state,
            n_prime,
            n_prime_div,
            n_prime_n,
            table_index,
            squares_left,
            windows_left,
            acc_set,
            read_address
        );
        self.busy.next = self.state.q.val() != SlotState::Idle;
        self.finishing.next = (self.state.q.val() == SlotState::Scale)
            | ((self.state.q.val() == SlotState::FromMontgomery) & !self.decrypt.val());
        self.done.next = false;
        self.issue.next = false;
        self.issue_redc.next = false;
        self.issue_decrement.next = false;
        self.rotate.next = false;
    }
}

/// The exponent bit of the current step (segmented).
impl part::Part<part::ExponentBit> for SlotControl {
    #[hdl_gen]
    fn update(&mut self) {
        for i in (self.exponent.len() - 1)..self.exponent.len() {
            self.exponent_bit.next = self.exponent[i].q.val().get_bit(0);
        }
    }
}

/// The schedule's step: in each state, when the multiplication in flight is done, issue the next
/// one (its operands, whether it is a wide REDC or takes A − 1), store its result in the table
/// where it is an entry, count the squarings and windows, and at the end signal `done`.
impl part::Part<part::Step> for SlotControl {
    #[hdl_gen]
    fn update(&mut self) {
        match self.state.q.val() {
            SlotState::Idle => {
                if self.start.val() {
                    self.acc_set.d.next = false;
                    self.state.d.next = SlotState::Waiting;
                }
            }
            SlotState::Waiting => {
                if self.my_turn.val() & !self.mm_busy.val() {
                    self.issue.next = true;
                    self.issue_redc.next = true;
                    self.state.d.next = SlotState::Reduce;
                }
            }
            SlotState::Reduce => {
                if self.mm_done.val() {
                    self.issue.next = true;
                    self.state.d.next = SlotState::ToMontgomery;
                }
            }
            SlotState::ToMontgomery => {
                if self.mm_done.val() {
                    self.issue.next = true;
                    if self.segmented.val() {
                        // sq = x̃ into T[2]; the first bit's acc·sq, acc = R mod N.
                        self.windows_left.d.next = self.windows.val();
                        self.state.d.next = SlotState::BitProduct;
                    } else {
                        // T[2] = x̃·x̃ (unless 1-bit windows: then the table is complete).
                        self.table_index.d.next = 2.into();
                        self.state.d.next = SlotState::Table;
                    }
                }
            }
            SlotState::Table => {
                if self.mm_done.val() {
                    self.issue.next = true;
                    self.table_index.d.next = self.table_index.q.val() + 1;
                }
            }
            SlotState::Square => {
                if self.mm_done.val() {
                    self.issue.next = true;
                    if self.squares_left.q.val() == 0 {
                        self.state.d.next = SlotState::Multiply;
                    } else {
                        self.squares_left.d.next = self.squares_left.q.val() - 1;
                    }
                }
            }
            SlotState::Multiply => {
                if self.mm_done.val() {
                    self.issue.next = true;
                    self.rotate.next = true;
                    self.windows_left.d.next = self.windows_left.q.val() - 1;
                    self.squares_left.d.next = self.window_bits.val() - 1;
                    self.state.d.next = SlotState::Square;
                    if self.windows_left.q.val() == 1 {
                        self.state.d.next = SlotState::FromMontgomery;
                    }
                }
            }
            SlotState::BitProduct => {
                if self.mm_done.val() {
                    // acc = acc·sq if the bit is 1 (the product is computed either way); sq·sq.
                    if self.exponent_bit.val() {
                        self.acc_set.d.next = true;
                    }
                    self.issue.next = true;
                    self.state.d.next = SlotState::BitSquare;
                }
            }
            SlotState::BitSquare => {
                if self.mm_done.val() {
                    // sq into T[2]; the next bit's acc·sq, or after the last bit acc·1.
                    self.rotate.next = true;
                    self.windows_left.d.next = self.windows_left.q.val() - 1;
                    self.issue.next = true;
                    self.state.d.next = SlotState::BitProduct;
                    if self.windows_left.q.val() == 1 {
                        self.state.d.next = SlotState::FromMontgomery;
                    }
                }
            }
            SlotState::FromMontgomery => {
                if self.mm_done.val() {
                    if self.decrypt.val() {
                        self.issue.next = true;
                        self.issue_decrement.next = true;
                        self.state.d.next = SlotState::Divide;
                    } else {
                        self.done.next = true;
                        self.state.d.next = SlotState::Idle;
                    }
                }
            }
            SlotState::Divide => {
                if self.mm_done.val() {
                    self.issue.next = true;
                    self.state.d.next = SlotState::Scale;
                }
            }
            SlotState::Scale => {
                if self.mm_done.val() {
                    self.done.next = true;
                    self.state.d.next = SlotState::Idle;
                }
            }
            _ => {
                self.state.d.next = SlotState::Idle;
            }
        }
    }
}

/// The table is complete (fixed windows): acc = T[top window], then its first squaring (or, for
/// a single window, straight out of the domain).
impl part::Part<part::TableComplete> for SlotControl {
    #[hdl_gen]
    fn update(&mut self) {
        self.table_complete.next = self.mm_done.val()
            & !self.segmented.val()
            & (((self.state.q.val() == SlotState::ToMontgomery) & (self.table_last.val() == 1))
                | ((self.state.q.val() == SlotState::Table) & (self.table_index.q.val() == self.table_last.val())));
        if self.table_complete.val() {
            self.rotate.next = true;
            self.windows_left.d.next = self.windows.val() - 1;
            self.squares_left.d.next = self.window_bits.val() - 1;
            self.state.d.next = SlotState::Square;
            if self.windows.val() == 1 {
                self.state.d.next = SlotState::FromMontgomery;
            }
        }
    }
}

/// The next multiplication's mode, classic or folding: the next state names it; and whether the
/// next state issues when its multiplication is done (`Step`: every state with a multiplication
/// in flight but the last, and the way out of the domain only when decrypting).
impl part::Part<part::NextMode> for SlotControl {
    #[hdl_gen]
    fn update(&mut self) {
        self.issue_classic.next = (self.state.d.val() == SlotState::Reduce)
            | (self.state.d.val() == SlotState::FromMontgomery)
            | (self.state.d.val() == SlotState::Divide)
            | (self.state.d.val() == SlotState::Scale);
        self.issue_on_done_next.next = (self.state.d.val() != SlotState::Idle)
            & (self.state.d.val() != SlotState::Waiting)
            & (self.state.d.val() != SlotState::Scale)
            & ((self.state.d.val() != SlotState::FromMontgomery) | self.decrypt.val());
    }
}

/// The exponent rotates by one window as each window is consumed (segmented: the other way,
/// least significant bit first): after W rotations it is back as loaded, for the next base.
impl part::Part<part::ExponentRotation> for SlotControl {
    #[hdl_gen]
    fn update(&mut self) {
        if self.rotate.val() {
            if self.segmented.val() {
                for i in 1..self.exponent.len() {
                    self.exponent[i].d.next = self.exponent[i - 1].q.val();
                }
                for i in 0..1 {
                    for k in (self.exponent.len() - 1)..self.exponent.len() {
                        self.exponent[i].d.next = self.exponent[k].q.val();
                    }
                }
            } else {
                for i in 0..(self.exponent.len() - 1) {
                    self.exponent[i].d.next = self.exponent[i + 1].q.val();
                }
                for i in (self.exponent.len() - 1)..self.exponent.len() {
                    for k in 0..1 {
                        self.exponent[i].d.next = self.exponent[k].q.val();
                    }
                }
            }
        }
    }
}
