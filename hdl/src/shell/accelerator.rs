//! The accelerator top: the AXI4-Lite [`Registers`], the request parser and dispatcher
//! [`StreamIn`], `cores` × a decryption core ([`DecryptCore`] on the two-slot engine, [`DeepCore`]
//! on the lanes engine, [`DelayCore`] on the delay engine: the same ports), and the result
//! collector [`StreamOut`]. Its ports are
//! what the XDMA IP connects to: the AXI4-Lite slave `s_axil_*`, the AXI4-Stream slave `s_axis_*`
//! (requests, H2C) and master `m_axis_*` (results, C2H), TDATA as 32-bit lanes (`s_axis_tdata$i`
//! is TDATA[32i+31:32i]).
//!
//! Key loads from the register block go to every core at once; the register block refuses them
//! while anything is busy (a core, a frame in progress, a result pending), so a key never changes
//! under a job. A soft reset (CONTROL) clears the parser and makes the collector drop the results
//! of the jobs under way; the cores run those jobs out, and the key stays.

use crate::config::{AcceleratorConfig, Engine};
use crate::decryption::decrypt_core::DecryptCore;
use crate::decryption::deep_core::{DeepCore, DelayCore};
use crate::exponentiation::slot_control::LoadTarget;
use crate::interface::{FRAME_TIMEOUT_CYCLES, LANE_BITS};
use crate::many;
use crate::shell::axi_lite::axi_lite_slave;
use crate::shell::registers::{Registers, TARGET_BITS};
use crate::shell::stream_in::StreamIn;
use crate::shell::stream_out::StreamOut;
use rust_hdl::prelude::*;

/// The load targets the register block's 4-bit `KEY_SELECT.TARGET` decodes (in encoding order;
/// the test `accelerator_decodes_every_load_target` checks it against [`LoadTarget`]).
pub const DECODED_TARGETS: usize = ecrt_contract::host::LoadTarget::ALL.len();
const _: () = assert!(DECODED_TARGETS <= 1 << TARGET_BITS);

axi_lite_slave! {
    /// The accelerator.
    #[derive(LogicBlock)]
    pub struct Accelerator {
        /// The clock (XDMA's `axi_aclk`).
        pub clock: Signal<In, Clock>,
        // Then the AXI4-Lite slave, `s_axil_*` (written in by `axi_lite_slave!`).
        /// Request stream TDATA, one 32-bit lane per element.
        pub s_axis_tdata: Vec<Signal<In, Bits<LANE_BITS>>>,
        /// Request stream TVALID.
        pub s_axis_tvalid: Signal<In, bool>,
        /// Request stream TREADY.
        pub s_axis_tready: Signal<Out, bool>,
        /// Request stream TLAST.
        pub s_axis_tlast: Signal<In, bool>,
        /// Result stream TDATA, one 32-bit lane per element.
        pub m_axis_tdata: Vec<Signal<Out, Bits<LANE_BITS>>>,
        /// Result stream TVALID.
        pub m_axis_tvalid: Signal<Out, bool>,
        /// Result stream TREADY.
        pub m_axis_tready: Signal<In, bool>,
        /// Result stream TLAST.
        pub m_axis_tlast: Signal<Out, bool>,
        registers: Registers,
        stream_in: StreamIn,
        // The configuration's engine's cores (the other engines' lists are empty).
        cores: Vec<DecryptCore>,
        deep_cores: Vec<DeepCore>,
        delay_cores: Vec<DelayCore>,
        stream_out: StreamOut,
        // The cores' ready, registered for the dispatcher: its limbs and starts depend on it, and the
        // cores' ready shares an always block with their inputs (a false combinational loop for
        // Verilator otherwise). The dispatcher allows for the cycle of delay.
        core_ready: Vec<DFF<bool>>,
        // Any core busy; the key load target decoded from its 4-bit index, and whether it is one.
        cores_busy: Signal<Local, bool>,
        load_target: Signal<Local, LoadTarget>,
        target_known: Signal<Local, bool>,
        target_index: Signal<Local, Bits<TARGET_BITS>>,
    }
}

impl Accelerator {
    /// The accelerator of `config` (validated by the caller: [`crate::emit::emit`] does; the
    /// rust-hdl tests build tiny keys that `validate` refuses).
    pub fn new(config: &AcceleratorConfig) -> Self {
        let (digits, lanes, cores) = (config.digits(), config.lanes(), config.cores);
        let (shape, exponent_bits) = (config.fold_shape(), config.exponent_bits());
        let engine_cores = |engine| if config.engine == engine { cores } else { 0 };
        axi_lite_slave!(Accelerator {
            clock: Default::default(),
            s_axis_tdata: many(lanes),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            s_axis_tlast: Default::default(),
            m_axis_tdata: many(lanes),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            m_axis_tlast: Default::default(),
            registers: Registers::new(config),
            stream_in: StreamIn::new(digits, lanes, cores, FRAME_TIMEOUT_CYCLES),
            cores: (0..engine_cores(Engine::Slots))
                .map(|_| DecryptCore::new(&shape, exponent_bits, config.golden_schedule()))
                .collect(),
            deep_cores: (0..engine_cores(Engine::Lanes))
                .map(|_| DeepCore::new(&shape, exponent_bits, config.window_bits))
                .collect(),
            delay_cores: (0..engine_cores(Engine::Delay))
                .map(|_| DelayCore::new(&config.delayed_shape(), exponent_bits, config.window_bits))
                .collect(),
            stream_out: StreamOut::new(digits, lanes, cores),
            core_ready: many(cores),
            cores_busy: Default::default(),
            load_target: Default::default(),
            target_known: Default::default(),
            target_index: Default::default(),
        })
    }
}

impl Logic for Accelerator {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, registers, stream_in, stream_out);

        // AXI4-Lite.
        self.registers.s_axil_awaddr.next = self.s_axil_awaddr.val();
        self.registers.s_axil_awvalid.next = self.s_axil_awvalid.val();
        self.s_axil_awready.next = self.registers.s_axil_awready.val();
        self.registers.s_axil_wdata.next = self.s_axil_wdata.val();
        self.registers.s_axil_wstrb.next = self.s_axil_wstrb.val();
        self.registers.s_axil_wvalid.next = self.s_axil_wvalid.val();
        self.s_axil_wready.next = self.registers.s_axil_wready.val();
        self.s_axil_bresp.next = self.registers.s_axil_bresp.val();
        self.s_axil_bvalid.next = self.registers.s_axil_bvalid.val();
        self.registers.s_axil_bready.next = self.s_axil_bready.val();
        self.registers.s_axil_araddr.next = self.s_axil_araddr.val();
        self.registers.s_axil_arvalid.next = self.s_axil_arvalid.val();
        self.s_axil_arready.next = self.registers.s_axil_arready.val();
        self.s_axil_rdata.next = self.registers.s_axil_rdata.val();
        self.s_axil_rresp.next = self.registers.s_axil_rresp.val();
        self.s_axil_rvalid.next = self.registers.s_axil_rvalid.val();
        self.registers.s_axil_rready.next = self.s_axil_rready.val();

        // Requests in.
        for i in 0..self.s_axis_tdata.len() {
            self.stream_in.s_axis_tdata[i].next = self.s_axis_tdata[i].val();
        }
        self.stream_in.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.s_axis_tready.next = self.stream_in.s_axis_tready.val();
        self.stream_in.s_axis_tlast.next = self.s_axis_tlast.val();
        self.stream_in.key_valid.next = self.registers.key_valid.val();
        self.stream_in.key_id.next = self.registers.key_id.val();
        self.stream_in.error_take.next = self.stream_out.error_take.val();
        self.stream_in.soft_reset.next = self.registers.soft_reset.val();
        self.stream_out.soft_reset.next = self.registers.soft_reset.val();
        self.stream_out.packet_hold.next = self.registers.packet_hold.val();

        // Results out.
        for i in 0..self.m_axis_tdata.len() {
            self.m_axis_tdata[i].next = self.stream_out.m_axis_tdata[i].val();
        }
        self.m_axis_tvalid.next = self.stream_out.m_axis_tvalid.val();
        self.stream_out.m_axis_tready.next = self.m_axis_tready.val();
        self.m_axis_tlast.next = self.stream_out.m_axis_tlast.val();
        self.stream_out.error_valid.next = self.stream_in.error_valid.val();
        self.stream_out.error_tag.next = self.stream_in.error_tag.val();
        self.stream_out.error_status.next = self.stream_in.error_status.val();

        // The key load target from its index (the enum's encoding order); other indices load
        // nothing.
        self.target_index.next = self.registers.key_load_target.val();
        self.target_known.next = true;
        self.load_target.next = LoadTarget::Modulus;
        if self.target_index.val() == 1 {
            self.load_target.next = LoadTarget::NPrime;
        }
        if self.target_index.val() == 2 {
            self.load_target.next = LoadTarget::ModulusDiv;
        }
        if self.target_index.val() == 3 {
            self.load_target.next = LoadTarget::NPrimeDiv;
        }
        if self.target_index.val() == 4 {
            self.load_target.next = LoadTarget::ModulusN;
        }
        if self.target_index.val() == 5 {
            self.load_target.next = LoadTarget::NPrimeN;
        }
        if self.target_index.val() == 6 {
            self.load_target.next = LoadTarget::R3;
        }
        if self.target_index.val() == 7 {
            self.load_target.next = LoadTarget::One;
        }
        if self.target_index.val() == 8 {
            self.load_target.next = LoadTarget::TMont;
        }
        if self.target_index.val() == 9 {
            self.load_target.next = LoadTarget::Base;
        }
        if self.target_index.val() == 10 {
            self.load_target.next = LoadTarget::Exponent;
        }
        if self.target_index.val() == 11 {
            self.load_target.next = LoadTarget::MHat;
        }
        if self.target_index.val() > 11 {
            self.target_known.next = false;
        }

        // The cores: limbs and starts from the dispatcher, key loads broadcast, results to the
        // collector; the same wiring for every engine's cores (all lists but one are empty).
        self.cores_busy.next = false;
        for k in 0..self.core_ready.len() {
            self.core_ready[k].clock.next = self.clock.val();
            self.stream_in.core_ready[k].next = self.core_ready[k].q.val();
        }
        for k in 0..self.cores.len() {
            self.cores[k].clock.next = self.clock.val();
            self.cores[k].key_load.next = self.registers.key_load.val() & self.target_known.val();
            self.cores[k].key_load_slot.next = self.registers.key_load_slot.val();
            self.cores[k].key_load_target.next = self.load_target.val();
            self.cores[k].key_load_data.next = self.registers.key_load_data.val();
            self.core_ready[k].d.next = self.cores[k].ready.val();
            self.cores[k].limb_in_valid.next = self.stream_in.core_limb_valid[k].val();
            self.cores[k].limb_in.next = self.stream_in.core_limb.val();
            self.cores[k].start.next = self.stream_in.core_start[k].val();
            self.cores[k].tag_in.next = self.stream_in.core_tag.val();
            self.stream_out.core_result_valid[k].next = self.cores[k].result_valid.val();
            self.stream_out.core_result_tag[k].next = self.cores[k].result_tag.val();
            self.stream_out.core_result_limb[k].next = self.cores[k].result_limb.val();
            self.cores[k].result_take.next = self.stream_out.core_result_take[k].val();
            self.stream_out.core_jobs[k].next = self.cores[k].jobs.val();
            if self.cores[k].busy.val() {
                self.cores_busy.next = true;
            }
        }
        for k in 0..self.deep_cores.len() {
            self.deep_cores[k].clock.next = self.clock.val();
            self.deep_cores[k].key_load.next = self.registers.key_load.val() & self.target_known.val();
            self.deep_cores[k].key_load_slot.next = self.registers.key_load_slot.val();
            self.deep_cores[k].key_load_target.next = self.load_target.val();
            self.deep_cores[k].key_load_data.next = self.registers.key_load_data.val();
            self.core_ready[k].d.next = self.deep_cores[k].ready.val();
            self.deep_cores[k].limb_in_valid.next = self.stream_in.core_limb_valid[k].val();
            self.deep_cores[k].limb_in.next = self.stream_in.core_limb.val();
            self.deep_cores[k].start.next = self.stream_in.core_start[k].val();
            self.deep_cores[k].tag_in.next = self.stream_in.core_tag.val();
            self.stream_out.core_result_valid[k].next = self.deep_cores[k].result_valid.val();
            self.stream_out.core_result_tag[k].next = self.deep_cores[k].result_tag.val();
            self.stream_out.core_result_limb[k].next = self.deep_cores[k].result_limb.val();
            self.deep_cores[k].result_take.next = self.stream_out.core_result_take[k].val();
            self.stream_out.core_jobs[k].next = self.deep_cores[k].jobs.val();
            if self.deep_cores[k].busy.val() {
                self.cores_busy.next = true;
            }
        }

        for k in 0..self.delay_cores.len() {
            self.delay_cores[k].clock.next = self.clock.val();
            self.delay_cores[k].key_load.next = self.registers.key_load.val() & self.target_known.val();
            self.delay_cores[k].key_load_slot.next = self.registers.key_load_slot.val();
            self.delay_cores[k].key_load_target.next = self.load_target.val();
            self.delay_cores[k].key_load_data.next = self.registers.key_load_data.val();
            self.core_ready[k].d.next = self.delay_cores[k].ready.val();
            self.delay_cores[k].limb_in_valid.next = self.stream_in.core_limb_valid[k].val();
            self.delay_cores[k].limb_in.next = self.stream_in.core_limb.val();
            self.delay_cores[k].start.next = self.stream_in.core_start[k].val();
            self.delay_cores[k].tag_in.next = self.stream_in.core_tag.val();
            self.stream_out.core_result_valid[k].next = self.delay_cores[k].result_valid.val();
            self.stream_out.core_result_tag[k].next = self.delay_cores[k].result_tag.val();
            self.stream_out.core_result_limb[k].next = self.delay_cores[k].result_limb.val();
            self.delay_cores[k].result_take.next = self.stream_out.core_result_take[k].val();
            self.stream_out.core_jobs[k].next = self.delay_cores[k].jobs.val();
            if self.delay_cores[k].busy.val() {
                self.cores_busy.next = true;
            }
        }

        // Status, counters and error flags.
        self.registers.busy.next = self.cores_busy.val() | self.stream_in.busy.val() | self.stream_out.busy.val();
        self.registers.job_in.next = self.stream_in.frame_done.val();
        self.registers.job_out.next = self.stream_out.frame_sent.val();
        self.registers.job_failed.next = self.stream_out.frame_failed.val();
        self.registers.saw_key_not_loaded.next = self.stream_in.frame_key_not_loaded.val();
        self.registers.saw_malformed.next = self.stream_in.frame_malformed.val();
    }
}

#[cfg(test)]
mod tests;
