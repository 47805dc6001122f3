//! The AXI4-Lite slave: the register map of [`crate::interface`] (identification, configuration
//! read-back, status, sticky errors, job counters, the result stream's PACKET_HOLD) and key
//! loading.
//!
//! One transaction at a time per channel: a write is taken when its address and data are both
//! valid and no write is in flight (AW and W together), a read when no read data is pending. A
//! taken write is registered and acts in the next cycle, its response a cycle later still, and
//! its address is decoded beside the handshake into a flag per writable register: so no path runs
//! from the handshake or the address decoding through a register's update, and the response still
//! follows the write's effect.
//! Responses are always OKAY. Registers are written whole when any WSTRB bit is set (XDMA's
//! AXI4-Lite master writes 32-bit words); a write with no strobe changes nothing. An address that
//! is not a register's offset (a misaligned one too) reads 0 and ignores writes.
//!
//! Key loading (the rules the register table documents): `KEY_CONTROL.BEGIN` invalidates the key
//! and opens a load; each `KEY_DATA` write then becomes one `key_load` pulse with the path and
//! target of `KEY_SELECT`; `KEY_CONTROL.COMMIT` makes the key valid under its id. A key write while
//! `busy`, a `KEY_DATA` write with no load open, or a commit with no load open or after a refused
//! `KEY_DATA` write is refused: it has no effect and sets `ERRORS.KEY_LOAD_REFUSED`. So a key whose
//! loading lost a write never becomes valid. `CONTROL.SOFT_RESET` becomes one `soft_reset` pulse,
//! never refused.

use crate::interface::*;
use crate::limbs::LIMB_BITS;
use crate::shell::axi_lite::axi_lite_slave;
use rust_hdl::prelude::*;

/// Bits of `KEY_SELECT.TARGET`.
pub const TARGET_BITS: usize = KEY_SELECT_TARGET_BITS;

axi_lite_slave! {
    /// The register block.
    #[derive(LogicBlock)]
    pub struct Registers {
        /// The clock.
        pub clock: Signal<In, Clock>,
        // Then the AXI4-Lite slave, `s_axil_*` (written in by `axi_lite_slave!`).
        /// A core is busy, a frame is in progress or a result is pending (STATUS.BUSY; key writes are
        /// refused).
        pub busy: Signal<In, bool>,
        /// A request frame was taken (JOBS_IN counts it).
        pub job_in: Signal<In, bool>,
        /// A result frame was sent (JOBS_OUT counts it).
        pub job_out: Signal<In, bool>,
        /// The result frame sent was an error (JOBS_FAILED counts it; with `job_out`).
        pub job_failed: Signal<In, bool>,
        /// A request was refused with KEY_NOT_LOADED (sets ERRORS.KEY_NOT_LOADED).
        pub saw_key_not_loaded: Signal<In, bool>,
        /// A request was refused as MALFORMED (sets ERRORS.MALFORMED).
        pub saw_malformed: Signal<In, bool>,
        /// A key is committed.
        pub key_valid: Signal<Out, bool>,
        /// The committed key's id.
        pub key_id: Signal<Out, Bits<8>>,
        /// Shift `key_load_data` into register `key_load_target` of path `key_load_slot` of every
        /// core (one cycle per accepted KEY_DATA write).
        pub key_load: Signal<Out, bool>,
        /// The path a key load writes: false = p, true = q (KEY_SELECT.PATH).
        pub key_load_slot: Signal<Out, bool>,
        /// The load target's index (KEY_SELECT.TARGET).
        pub key_load_target: Signal<Out, Bits<TARGET_BITS>>,
        /// The 17 bits written to KEY_DATA.
        pub key_load_data: Signal<Out, Bits<LIMB_BITS>>,
        /// One cycle: CONTROL.SOFT_RESET was written (never refused; the key stays).
        pub soft_reset: Signal<Out, bool>,
        /// PACKET_HOLD: cycles the result stream holds a burst's last beat for another result to
        /// join its packet (0: none).
        pub packet_hold: Signal<Out, Bits<PACKET_HOLD_BITS>>,
        // The read-only configuration values.
        id_value: Constant<Bits<32>>,
        version_value: Constant<Bits<32>>,
        key_bits_value: Constant<Bits<32>>,
        cores_value: Constant<Bits<32>>,
        digits_value: Constant<Bits<32>>,
        window_bits_value: Constant<Bits<32>>,
        digits_per_step_value: Constant<Bits<32>>,
        schedule_value: Constant<Bits<32>>,
        engine_value: Constant<Bits<32>>,
        jobs_per_core_value: Constant<Bits<32>>,
        stream_bits_value: Constant<Bits<32>>,
        limb_bits_value: Constant<Bits<32>>,
        // The fields' bits, from the contract.
        begin_bit: Constant<Bits<32>>,
        soft_reset_bit: Constant<Bits<32>>,
        commit_bit: Constant<Bits<32>>,
        key_id_shift: Constant<Bits<32>>,
        q_path_bit: Constant<Bits<32>>,
        status_key_valid_at: Constant<Bits<32>>,
        status_busy_at: Constant<Bits<32>>,
        status_key_loading_at: Constant<Bits<32>>,
        q_path_at: Constant<Bits<32>>,
        error_key_not_loaded_at: Constant<Bits<ERROR_BITS>>,
        error_malformed_at: Constant<Bits<ERROR_BITS>>,
        error_key_load_refused_at: Constant<Bits<ERROR_BITS>>,
        // The registers' byte offsets.
        at_id: Constant<Bits<ADDRESS_BITS>>,
        at_version: Constant<Bits<ADDRESS_BITS>>,
        at_key_bits: Constant<Bits<ADDRESS_BITS>>,
        at_cores: Constant<Bits<ADDRESS_BITS>>,
        at_digits: Constant<Bits<ADDRESS_BITS>>,
        at_window_bits: Constant<Bits<ADDRESS_BITS>>,
        at_digits_per_step: Constant<Bits<ADDRESS_BITS>>,
        at_schedule: Constant<Bits<ADDRESS_BITS>>,
        at_engine: Constant<Bits<ADDRESS_BITS>>,
        at_jobs_per_core: Constant<Bits<ADDRESS_BITS>>,
        at_stream_bits: Constant<Bits<ADDRESS_BITS>>,
        at_limb_bits: Constant<Bits<ADDRESS_BITS>>,
        at_status: Constant<Bits<ADDRESS_BITS>>,
        at_errors: Constant<Bits<ADDRESS_BITS>>,
        at_jobs_in: Constant<Bits<ADDRESS_BITS>>,
        at_jobs_out: Constant<Bits<ADDRESS_BITS>>,
        at_jobs_failed: Constant<Bits<ADDRESS_BITS>>,
        at_control: Constant<Bits<ADDRESS_BITS>>,
        at_key_control: Constant<Bits<ADDRESS_BITS>>,
        at_key_id: Constant<Bits<ADDRESS_BITS>>,
        at_key_select: Constant<Bits<ADDRESS_BITS>>,
        at_key_data: Constant<Bits<ADDRESS_BITS>>,
        at_packet_hold: Constant<Bits<ADDRESS_BITS>>,
        // Channel state: a write taken in the previous cycle (its response is next), and the
        // response.
        accepted: DFF<bool>,
        bvalid: DFF<bool>,
        rvalid: DFF<bool>,
        rdata: DFF<Bits<32>>,
        // Register state.
        key_valid_r: DFF<bool>,
        key_id_r: DFF<Bits<8>>,
        loading: DFF<bool>,
        spoiled: DFF<bool>,
        select_target: DFF<Bits<TARGET_BITS>>,
        select_q: DFF<bool>,
        errors: DFF<Bits<ERROR_BITS>>,
        jobs_in: DFF<Bits<32>>,
        jobs_out: DFF<Bits<32>>,
        jobs_failed: DFF<Bits<32>>,
        load_pulse: DFF<bool>,
        load_data: DFF<Bits<LIMB_BITS>>,
        reset_pulse: DFF<bool>,
        packet_hold_r: DFF<Bits<PACKET_HOLD_BITS>>,
        // The write taken in the previous cycle (with a strobe set), its data, and which writable
        // register its address names, each decoded as the write is taken and registered; this
        // cycle's write and data; this cycle's read address and value.
        write_r: DFF<bool>,
        write_data_r: DFF<Bits<32>>,
        to_control: DFF<bool>,
        to_errors: DFF<bool>,
        to_key_control: DFF<bool>,
        to_key_select: DFF<bool>,
        to_key_data: DFF<bool>,
        to_packet_hold: DFF<bool>,
        write: Signal<Local, bool>,
        write_data: Signal<Local, Bits<32>>,
        read_at: Signal<Local, Bits<ADDRESS_BITS>>,
        read_value: Signal<Local, Bits<32>>,
        // The key writes of this cycle, and whether they are refused.
        key_begin: Signal<Local, bool>,
        key_commit: Signal<Local, bool>,
        key_data: Signal<Local, bool>,
        refuse: Signal<Local, bool>,
        // Errors seen this cycle, and bits cleared by this cycle's ERRORS write.
        raised: Signal<Local, Bits<ERROR_BITS>>,
        cleared: Signal<Local, Bits<ERROR_BITS>>,
    }
}

fn word(x: usize) -> Constant<Bits<32>> {
    Constant::new((x as u64).into())
}

fn at(offset: u32) -> Constant<Bits<ADDRESS_BITS>> {
    Constant::new((offset as u64).into())
}

/// The position of a one-bit field's mask.
fn bit_at<const N: usize>(mask: u32) -> Constant<Bits<N>> {
    assert_eq!(mask.count_ones(), 1, "a one-bit field");
    Constant::new((mask.trailing_zeros() as u64).into())
}

const _: () =
    assert!(KEY_SELECT_TARGET_MASK & 1 == 1 && KEY_DATA_MASK & 1 == 1 && PACKET_HOLD_MASK & 1 == 1, "fields at bit 0");

impl Registers {
    /// The register block of a configuration: its read-only values.
    pub fn new(config: &crate::config::AcceleratorConfig) -> Self {
        let (key_bits, cores, digits) = (config.key_bits, config.cores, config.digits());
        let (window_bits, stream_bits, digits_per_step) =
            (config.window_bits, config.stream_bits, config.digits_per_step);
        axi_lite_slave!(Registers {
            clock: Default::default(),
            busy: Default::default(),
            job_in: Default::default(),
            job_out: Default::default(),
            job_failed: Default::default(),
            saw_key_not_loaded: Default::default(),
            saw_malformed: Default::default(),
            key_valid: Default::default(),
            key_id: Default::default(),
            key_load: Default::default(),
            key_load_slot: Default::default(),
            key_load_target: Default::default(),
            key_load_data: Default::default(),
            soft_reset: Default::default(),
            packet_hold: Default::default(),
            id_value: word(ID_VALUE as usize),
            version_value: word(VERSION_VALUE as usize),
            key_bits_value: word(key_bits),
            cores_value: word(cores),
            digits_value: word(digits),
            window_bits_value: word(window_bits),
            digits_per_step_value: word(digits_per_step),
            schedule_value: word(config.schedule.register_value() as usize),
            engine_value: word(config.engine.register_value() as usize),
            jobs_per_core_value: word(config.jobs_per_core()),
            stream_bits_value: word(stream_bits),
            limb_bits_value: word(LIMB_BITS),
            begin_bit: word(KEY_CONTROL_BEGIN as usize),
            soft_reset_bit: word(CONTROL_SOFT_RESET as usize),
            commit_bit: word(KEY_CONTROL_COMMIT as usize),
            key_id_shift: word(KEY_CONTROL_ID_SHIFT as usize),
            q_path_bit: word(KEY_SELECT_Q_PATH as usize),
            status_key_valid_at: bit_at(STATUS_KEY_VALID),
            status_busy_at: bit_at(STATUS_BUSY),
            status_key_loading_at: bit_at(STATUS_KEY_LOADING),
            q_path_at: bit_at(KEY_SELECT_Q_PATH),
            error_key_not_loaded_at: bit_at(ERROR_KEY_NOT_LOADED),
            error_malformed_at: bit_at(ERROR_MALFORMED),
            error_key_load_refused_at: bit_at(ERROR_KEY_LOAD_REFUSED),
            at_id: at(REG_ID),
            at_version: at(REG_VERSION),
            at_key_bits: at(REG_KEY_BITS),
            at_cores: at(REG_CORES),
            at_digits: at(REG_DIGITS),
            at_window_bits: at(REG_WINDOW_BITS),
            at_digits_per_step: at(REG_DIGITS_PER_STEP),
            at_schedule: at(REG_SCHEDULE),
            at_engine: at(REG_ENGINE),
            at_jobs_per_core: at(REG_JOBS_PER_CORE),
            at_stream_bits: at(REG_STREAM_BITS),
            at_limb_bits: at(REG_LIMB_BITS),
            at_status: at(REG_STATUS),
            at_errors: at(REG_ERRORS),
            at_jobs_in: at(REG_JOBS_IN),
            at_jobs_out: at(REG_JOBS_OUT),
            at_jobs_failed: at(REG_JOBS_FAILED),
            at_control: at(REG_CONTROL),
            at_key_control: at(REG_KEY_CONTROL),
            at_key_id: at(REG_KEY_ID),
            at_key_select: at(REG_KEY_SELECT),
            at_key_data: at(REG_KEY_DATA),
            at_packet_hold: at(REG_PACKET_HOLD),
            accepted: Default::default(),
            bvalid: Default::default(),
            rvalid: Default::default(),
            rdata: Default::default(),
            key_valid_r: Default::default(),
            key_id_r: Default::default(),
            loading: Default::default(),
            spoiled: Default::default(),
            select_target: Default::default(),
            select_q: Default::default(),
            errors: Default::default(),
            jobs_in: Default::default(),
            jobs_out: Default::default(),
            jobs_failed: Default::default(),
            load_pulse: Default::default(),
            load_data: Default::default(),
            reset_pulse: Default::default(),
            packet_hold_r: Default::default(),
            write_r: Default::default(),
            write_data_r: Default::default(),
            to_control: Default::default(),
            to_errors: Default::default(),
            to_key_control: Default::default(),
            to_key_select: Default::default(),
            to_key_data: Default::default(),
            to_packet_hold: Default::default(),
            write: Default::default(),
            write_data: Default::default(),
            read_at: Default::default(),
            read_value: Default::default(),
            key_begin: Default::default(),
            key_commit: Default::default(),
            key_data: Default::default(),
            refuse: Default::default(),
            raised: Default::default(),
            cleared: Default::default(),
        })
    }
}

impl Logic for Registers {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            accepted,
            bvalid,
            write_r,
            write_data_r,
            to_control,
            to_errors,
            to_key_control,
            to_key_select,
            to_key_data,
            to_packet_hold,
            rvalid,
            rdata,
            key_valid_r,
            key_id_r,
            loading,
            spoiled,
            select_target,
            select_q,
            errors,
            jobs_in,
            jobs_out,
            jobs_failed,
            load_pulse,
            load_data,
            reset_pulse,
            packet_hold_r
        );
        // Write channel: AW and W are taken together, when no write is in flight; a write with no
        // strobe set writes nothing.
        self.s_axil_awready.next =
            self.s_axil_awvalid.val() & self.s_axil_wvalid.val() & !self.accepted.q.val() & !self.bvalid.q.val();
        self.s_axil_wready.next = self.s_axil_awready.val();
        self.accepted.d.next = self.s_axil_awready.val();
        self.write_r.d.next = self.s_axil_awready.val() & self.s_axil_wstrb.val().any();
        self.to_control.d.next = self.s_axil_awaddr.val() == self.at_control.val();
        self.to_errors.d.next = self.s_axil_awaddr.val() == self.at_errors.val();
        self.to_key_control.d.next = self.s_axil_awaddr.val() == self.at_key_control.val();
        self.to_key_select.d.next = self.s_axil_awaddr.val() == self.at_key_select.val();
        self.to_key_data.d.next = self.s_axil_awaddr.val() == self.at_key_data.val();
        self.to_packet_hold.d.next = self.s_axil_awaddr.val() == self.at_packet_hold.val();
        self.write_data_r.d.next = self.s_axil_wdata.val();
        self.write.next = self.write_r.q.val();
        self.write_data.next = self.write_data_r.q.val();
        self.s_axil_bresp.next = 0.into();
        self.s_axil_bvalid.next = self.bvalid.q.val();
        if self.accepted.q.val() {
            self.bvalid.d.next = true;
        } else if self.s_axil_bready.val() {
            self.bvalid.d.next = false;
        }

        // Key writes; refused ones have no effect but the error flag.
        self.key_begin.next =
            self.write.val() & self.to_key_control.q.val() & (self.write_data.val() & self.begin_bit.val()).any();
        self.key_commit.next = self.write.val()
            & self.to_key_control.q.val()
            & !(self.write_data.val() & self.begin_bit.val()).any()
            & (self.write_data.val() & self.commit_bit.val()).any();
        self.key_data.next = self.write.val() & self.to_key_data.q.val();
        self.refuse.next = (self.busy.val() & (self.key_begin.val() | self.key_commit.val() | self.key_data.val()))
            | (self.key_data.val() & !self.loading.q.val())
            | (self.key_commit.val() & (!self.loading.q.val() | self.spoiled.q.val()));
        self.load_pulse.d.next = false;
        if self.refuse.val() {
            // A refused write during a load spoils it: its commit will be refused too.
            self.spoiled.d.next = self.loading.q.val();
        } else {
            if self.key_begin.val() {
                self.key_valid_r.d.next = false;
                self.loading.d.next = true;
                self.spoiled.d.next = false;
            }
            if self.key_commit.val() {
                self.key_valid_r.d.next = true;
                self.key_id_r.d.next = bit_cast::<8, 32>(self.write_data.val() >> self.key_id_shift.val());
                self.loading.d.next = false;
            }
            if self.key_data.val() {
                self.load_pulse.d.next = true;
                self.load_data.d.next = self.write_data.val().get_bits::<LIMB_BITS>(0);
            }
        }
        if self.write.val() & self.to_key_select.q.val() {
            self.select_target.d.next = self.write_data.val().get_bits::<TARGET_BITS>(0);
            self.select_q.d.next = (self.write_data.val() & self.q_path_bit.val()).any();
        }
        // Configuration: a soft reset leaves it alone (a new host finds it as it was set).
        if self.write.val() & self.to_packet_hold.q.val() {
            self.packet_hold_r.d.next = self.write_data.val().get_bits::<PACKET_HOLD_BITS>(0);
        }
        self.packet_hold.next = self.packet_hold_r.q.val();
        self.reset_pulse.d.next =
            self.write.val() & self.to_control.q.val() & (self.write_data.val() & self.soft_reset_bit.val()).any();
        self.soft_reset.next = self.reset_pulse.q.val();
        self.key_load.next = self.load_pulse.q.val();
        self.key_load_slot.next = self.select_q.q.val();
        self.key_load_target.next = self.select_target.q.val();
        self.key_load_data.next = self.load_data.q.val();
        self.key_valid.next = self.key_valid_r.q.val();
        self.key_id.next = self.key_id_r.q.val();

        // Sticky errors: set by events, cleared by writing 1 (an event in the same cycle wins).
        self.raised.next = (bit_cast::<ERROR_BITS, 1>(self.saw_key_not_loaded.val().into())
            << self.error_key_not_loaded_at.val())
            | (bit_cast::<ERROR_BITS, 1>(self.saw_malformed.val().into()) << self.error_malformed_at.val())
            | (bit_cast::<ERROR_BITS, 1>(self.refuse.val().into()) << self.error_key_load_refused_at.val());
        self.cleared.next = 0.into();
        if self.write.val() & self.to_errors.q.val() {
            self.cleared.next = self.write_data.val().get_bits::<ERROR_BITS>(0);
        }
        self.errors.d.next = (self.errors.q.val() & !self.cleared.val()) | self.raised.val();

        // Job counters (wrapping).
        if self.job_in.val() {
            self.jobs_in.d.next = self.jobs_in.q.val() + 1;
        }
        if self.job_out.val() {
            self.jobs_out.d.next = self.jobs_out.q.val() + 1;
        }
        if self.job_out.val() & self.job_failed.val() {
            self.jobs_failed.d.next = self.jobs_failed.q.val() + 1;
        }

        // Read channel: one read in flight; the data is registered.
        self.read_at.next = self.s_axil_araddr.val();
        self.read_value.next = 0.into();
        if self.read_at.val() == self.at_id.val() {
            self.read_value.next = self.id_value.val();
        }
        if self.read_at.val() == self.at_version.val() {
            self.read_value.next = self.version_value.val();
        }
        if self.read_at.val() == self.at_key_bits.val() {
            self.read_value.next = self.key_bits_value.val();
        }
        if self.read_at.val() == self.at_cores.val() {
            self.read_value.next = self.cores_value.val();
        }
        if self.read_at.val() == self.at_digits.val() {
            self.read_value.next = self.digits_value.val();
        }
        if self.read_at.val() == self.at_digits_per_step.val() {
            self.read_value.next = self.digits_per_step_value.val();
        }
        if self.read_at.val() == self.at_schedule.val() {
            self.read_value.next = self.schedule_value.val();
        }
        if self.read_at.val() == self.at_engine.val() {
            self.read_value.next = self.engine_value.val();
        }
        if self.read_at.val() == self.at_jobs_per_core.val() {
            self.read_value.next = self.jobs_per_core_value.val();
        }
        if self.read_at.val() == self.at_window_bits.val() {
            self.read_value.next = self.window_bits_value.val();
        }
        if self.read_at.val() == self.at_stream_bits.val() {
            self.read_value.next = self.stream_bits_value.val();
        }
        if self.read_at.val() == self.at_limb_bits.val() {
            self.read_value.next = self.limb_bits_value.val();
        }
        if self.read_at.val() == self.at_status.val() {
            self.read_value.next = (bit_cast::<32, 1>(self.key_valid_r.q.val().into())
                << self.status_key_valid_at.val())
                | (bit_cast::<32, 1>(self.busy.val().into()) << self.status_busy_at.val())
                | (bit_cast::<32, 1>(self.loading.q.val().into()) << self.status_key_loading_at.val());
        }
        if self.read_at.val() == self.at_errors.val() {
            self.read_value.next = bit_cast::<32, ERROR_BITS>(self.errors.q.val());
        }
        if self.read_at.val() == self.at_jobs_in.val() {
            self.read_value.next = self.jobs_in.q.val();
        }
        if self.read_at.val() == self.at_jobs_out.val() {
            self.read_value.next = self.jobs_out.q.val();
        }
        if self.read_at.val() == self.at_jobs_failed.val() {
            self.read_value.next = self.jobs_failed.q.val();
        }
        if self.read_at.val() == self.at_key_id.val() {
            self.read_value.next = bit_cast::<32, 8>(self.key_id_r.q.val());
        }
        if self.read_at.val() == self.at_key_select.val() {
            self.read_value.next = bit_cast::<32, TARGET_BITS>(self.select_target.q.val())
                | (bit_cast::<32, 1>(self.select_q.q.val().into()) << self.q_path_at.val());
        }
        if self.read_at.val() == self.at_packet_hold.val() {
            self.read_value.next = bit_cast::<32, PACKET_HOLD_BITS>(self.packet_hold_r.q.val());
        }
        self.s_axil_arready.next = !self.rvalid.q.val();
        self.s_axil_rvalid.next = self.rvalid.q.val();
        self.s_axil_rdata.next = self.rdata.q.val();
        self.s_axil_rresp.next = 0.into();
        if self.s_axil_arvalid.val() & !self.rvalid.q.val() {
            self.rvalid.d.next = true;
            self.rdata.d.next = self.read_value.val();
        } else if self.s_axil_rready.val() {
            self.rvalid.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests;
