//! The key's registers, the base and the exponent (parts of [`SlotControl`]'s `update`): they hold,
//! and a load shifts one of them.

use super::*;

/// The key's registers, the base and the exponent hold (a load shifts one of them, in
/// `KeyLoad`); M̂ goes to the multiplier.
impl part::Part<part::KeyHold> for SlotControl {
    #[hdl_gen]
    fn update(&mut self) {
        for j in 0..self.modulus.len() {
            self.modulus[j].clock.next = self.clock.val();
            self.modulus_div[j].clock.next = self.clock.val();
            self.modulus[j].d.next = self.modulus[j].q.val();
            self.modulus_div[j].d.next = self.modulus_div[j].q.val();
        }
        for j in 0..self.modulus_n.len() {
            self.modulus_n[j].clock.next = self.clock.val();
            self.modulus_n[j].d.next = self.modulus_n[j].q.val();
        }
        for j in 0..self.r3.len() {
            self.r3[j].clock.next = self.clock.val();
            self.one[j].clock.next = self.clock.val();
            self.t_mont[j].clock.next = self.clock.val();
            self.r3[j].d.next = self.r3[j].q.val();
            self.one[j].d.next = self.one[j].q.val();
            self.t_mont[j].d.next = self.t_mont[j].q.val();
        }
        for j in 0..self.base_low.len() {
            self.base_low[j].clock.next = self.clock.val();
            self.base_low[j].d.next = self.base_low[j].q.val();
        }
        for j in 0..self.base_high.len() {
            self.base_high[j].clock.next = self.clock.val();
            self.base_high[j].d.next = self.base_high[j].q.val();
        }
        for i in 0..self.exponent.len() {
            self.exponent[i].clock.next = self.clock.val();
            self.exponent[i].d.next = self.exponent[i].q.val();
        }
        for j in 0..self.m_hat.len() {
            self.m_hat[j].clock.next = self.clock.val();
            self.m_hat[j].d.next = self.m_hat[j].q.val();
            self.m_hat_out[j].next = self.m_hat[j].q.val();
        }
    }
}

/// The load path: a load shifts the chosen register by one limb (entering at the top) or one
/// window, in the cycle after it: each register's enable is registered from the load and its
/// target, in copies per LIMBS_PER_COPY limbs (windows) of that register, and the data beside
/// them, so that no decoder's net reaches a whole register file. So a start must come at least a
/// cycle after the last load.
impl part::Part<part::KeyLoad> for SlotControl {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self,
            clock,
            load_modulus,
            load_modulus_div,
            load_modulus_n,
            load_m_hat,
            load_r3,
            load_one,
            load_t_mont,
            load_base_low,
            load_base_high,
            load_exponent
        );
        self.load_data_r.d.next = self.load_data.val();
        self.load_modulus.d.next = self.load.val() & (self.load_target.val() == LoadTarget::Modulus);
        self.load_modulus_div.d.next = self.load.val() & (self.load_target.val() == LoadTarget::ModulusDiv);
        self.load_modulus_n.d.next = self.load.val() & (self.load_target.val() == LoadTarget::ModulusN);
        self.load_m_hat.d.next = self.load.val() & (self.load_target.val() == LoadTarget::MHat);
        self.load_r3.d.next = self.load.val() & (self.load_target.val() == LoadTarget::R3);
        self.load_one.d.next = self.load.val() & (self.load_target.val() == LoadTarget::One);
        self.load_t_mont.d.next = self.load.val() & (self.load_target.val() == LoadTarget::TMont);
        self.load_n_prime.d.next = self.load.val() & (self.load_target.val() == LoadTarget::NPrime);
        self.load_n_prime_div.d.next = self.load.val() & (self.load_target.val() == LoadTarget::NPrimeDiv);
        self.load_n_prime_n.d.next = self.load.val() & (self.load_target.val() == LoadTarget::NPrimeN);
        self.load_base_low.d.next = self.load.val() & (self.load_target.val() == LoadTarget::Base);
        self.load_base_high.d.next = self.load.val() & (self.load_target.val() == LoadTarget::Base);
        self.load_exponent.d.next = self.load.val() & (self.load_target.val() == LoadTarget::Exponent);
        if self.load_n_prime.q.val() {
            self.n_prime.d.next = self.load_data_r.q.val().get_bits::<Y_BITS>(0);
        }
        if self.load_n_prime_div.q.val() {
            self.n_prime_div.d.next = self.load_data_r.q.val().get_bits::<Y_BITS>(0);
        }
        if self.load_n_prime_n.q.val() {
            self.n_prime_n.d.next = self.load_data_r.q.val().get_bits::<Y_BITS>(0);
        }
        // The group size as a loop variable: rust-hdl indexes with loop variables only.
        for g in (LIMBS_PER_COPY)..(LIMBS_PER_COPY + 1) {
            for j in 0..(self.modulus.len() - 1) {
                if self.load_modulus.q[j / g].val() {
                    self.modulus[j].d.next = self.modulus[j + 1].q.val();
                }
            }
            for j in (self.modulus.len() - 1)..self.modulus.len() {
                if self.load_modulus.q[j / g].val() {
                    self.modulus[j].d.next = self.load_data_r.q.val().get_bits::<Y_BITS>(0);
                }
            }
            for j in 0..(self.modulus_div.len() - 1) {
                if self.load_modulus_div.q[j / g].val() {
                    self.modulus_div[j].d.next = self.modulus_div[j + 1].q.val();
                }
            }
            for j in (self.modulus_div.len() - 1)..self.modulus_div.len() {
                if self.load_modulus_div.q[j / g].val() {
                    self.modulus_div[j].d.next = self.load_data_r.q.val().get_bits::<Y_BITS>(0);
                }
            }
            for j in 0..(self.modulus_n.len() - 1) {
                if self.load_modulus_n.q[j / g].val() {
                    self.modulus_n[j].d.next = self.modulus_n[j + 1].q.val();
                }
            }
            for j in (self.modulus_n.len() - 1)..self.modulus_n.len() {
                if self.load_modulus_n.q[j / g].val() {
                    self.modulus_n[j].d.next = self.load_data_r.q.val().get_bits::<Y_BITS>(0);
                }
            }
            for j in 0..(self.m_hat.len() - 1) {
                if self.load_m_hat.q[j / g].val() {
                    self.m_hat[j].d.next = self.m_hat[j + 1].q.val();
                }
            }
            for j in (self.m_hat.len() - 1)..self.m_hat.len() {
                if self.load_m_hat.q[j / g].val() {
                    self.m_hat[j].d.next = self.load_data_r.q.val().get_bits::<Y_BITS>(0);
                }
            }
            for j in 0..(self.r3.len() - 1) {
                if self.load_r3.q[j / g].val() {
                    self.r3[j].d.next = self.r3[j + 1].q.val();
                }
            }
            for j in (self.r3.len() - 1)..self.r3.len() {
                if self.load_r3.q[j / g].val() {
                    self.r3[j].d.next = self.load_data_r.q.val();
                }
            }
            for j in 0..(self.one.len() - 1) {
                if self.load_one.q[j / g].val() {
                    self.one[j].d.next = self.one[j + 1].q.val();
                }
            }
            for j in (self.one.len() - 1)..self.one.len() {
                if self.load_one.q[j / g].val() {
                    self.one[j].d.next = self.load_data_r.q.val();
                }
            }
            for j in 0..(self.t_mont.len() - 1) {
                if self.load_t_mont.q[j / g].val() {
                    self.t_mont[j].d.next = self.t_mont[j + 1].q.val();
                }
            }
            for j in (self.t_mont.len() - 1)..self.t_mont.len() {
                if self.load_t_mont.q[j / g].val() {
                    self.t_mont[j].d.next = self.load_data_r.q.val();
                }
            }
            // 2·S limbs through base_high into base_low.
            for j in 0..(self.base_low.len() - 1) {
                if self.load_base_low.q[j / g].val() {
                    self.base_low[j].d.next = self.base_low[j + 1].q.val();
                }
            }
            for j in (self.base_low.len() - 1)..self.base_low.len() {
                if self.load_base_low.q[j / g].val() {
                    self.base_low[j].d.next = self.base_high[0].q.val();
                }
            }
            for j in 0..(self.base_high.len() - 1) {
                if self.load_base_high.q[j / g].val() {
                    self.base_high[j].d.next = self.base_high[j + 1].q.val();
                }
            }
            for j in (self.base_high.len() - 1)..self.base_high.len() {
                if self.load_base_high.q[j / g].val() {
                    self.base_high[j].d.next = self.load_data_r.q.val();
                }
            }
            for i in 0..(self.exponent.len() - 1) {
                if self.load_exponent.q[i / g].val() {
                    self.exponent[i].d.next = self.exponent[i + 1].q.val();
                }
            }
            for i in (self.exponent.len() - 1)..self.exponent.len() {
                if self.load_exponent.q[i / g].val() {
                    self.exponent[i].d.next =
                        self.load_data_r.q.val().get_bits::<WINDOW_BITS_MAX>(0) & self.table_last.val();
                }
            }
        }
    }
}
