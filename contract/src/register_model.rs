//! The register block's behaviour in software: what each AXI4-Lite read returns and what each
//! write does, cycle-free. The emulator's instant responder is built on it, and tests hold the
//! RTL's register block to it, sequence by sequence.

use crate::config::AcceleratorConfig;
use crate::interface::{self as itf, ADDRESS_BITS};

const ADDRESS_MASK: u32 = (1 << ADDRESS_BITS) - 1;

/// One accepted KEY_DATA write: shift `data` into register `target` of the p (`q_path` false) or
/// q path of every core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyShift {
    pub q_path: bool,
    pub target: u8,
    pub data: u32,
}

/// What a register write sets off besides changing registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteEffect {
    /// An accepted KEY_DATA write.
    KeyShift(KeyShift),
    /// CONTROL.SOFT_RESET: the stream state is dropped (see [`itf::CONTROL_SOFT_RESET`]).
    SoftReset,
}

/// The register block of one accelerator configuration.
#[derive(Debug, Clone)]
pub struct RegisterModel {
    config: AcceleratorConfig,
    key_valid: bool,
    loading: bool,
    /// A write of the current load was refused: its commit will be too.
    spoiled: bool,
    key_id: u8,
    key_select: u32,
    errors: u32,
    jobs_in: u32,
    jobs_out: u32,
    jobs_failed: u32,
    packet_hold: u32,
}

impl RegisterModel {
    /// The registers of `config`, as after configuration: no key, no errors, counters at 0.
    pub fn new(config: &AcceleratorConfig) -> Self {
        RegisterModel {
            config: config.clone(),
            key_valid: false,
            loading: false,
            spoiled: false,
            key_id: 0,
            key_select: 0,
            errors: 0,
            jobs_in: 0,
            jobs_out: 0,
            jobs_failed: 0,
            packet_hold: 0,
        }
    }

    /// A key is committed.
    pub fn key_valid(&self) -> bool {
        self.key_valid
    }

    /// The committed key's id.
    pub fn key_id(&self) -> u8 {
        self.key_id
    }

    /// PACKET_HOLD: cycles a burst's last result beat waits for another result.
    pub fn packet_hold(&self) -> u32 {
        self.packet_hold
    }

    /// What a read at `offset` returns while the card is `busy` (or not). Offsets outside the map,
    /// misaligned ones too, read 0; the slave decodes [`ADDRESS_BITS`] address bits.
    pub fn read(&self, offset: u32, busy: bool) -> u32 {
        let c = &self.config;
        let bit = |on: bool, bit: u32| if on { bit } else { 0 };
        match offset & ADDRESS_MASK {
            itf::REG_ID => itf::ID_VALUE,
            itf::REG_VERSION => itf::VERSION_VALUE,
            itf::REG_KEY_BITS => c.key_bits as u32,
            itf::REG_CORES => c.cores as u32,
            itf::REG_DIGITS => c.digits() as u32,
            itf::REG_WINDOW_BITS => c.window_bits as u32,
            itf::REG_STREAM_BITS => c.stream_bits as u32,
            itf::REG_LIMB_BITS => c.limb_bits as u32,
            itf::REG_DIGITS_PER_STEP => c.digits_per_step as u32,
            itf::REG_SCHEDULE => c.schedule.register_value(),
            itf::REG_ENGINE => c.engine.register_value(),
            itf::REG_JOBS_PER_CORE => c.jobs_per_core() as u32,
            itf::REG_STATUS => {
                bit(self.key_valid, itf::STATUS_KEY_VALID)
                    | bit(busy, itf::STATUS_BUSY)
                    | bit(self.loading, itf::STATUS_KEY_LOADING)
            }
            itf::REG_ERRORS => self.errors,
            itf::REG_JOBS_IN => self.jobs_in,
            itf::REG_JOBS_OUT => self.jobs_out,
            itf::REG_JOBS_FAILED => self.jobs_failed,
            itf::REG_KEY_ID => u32::from(self.key_id),
            itf::REG_KEY_SELECT => self.key_select,
            itf::REG_PACKET_HOLD => self.packet_hold,
            _ => 0,
        }
    }

    /// A write of `value` at `offset` while the card is `busy` (or not); an accepted KEY_DATA
    /// write returns the shift it makes, a CONTROL write with SOFT_RESET the reset. A key write
    /// while busy, a KEY_DATA write with no load open, or a commit with no load open or after a
    /// refused write of the load is refused: it has no effect but ERRORS.KEY_LOAD_REFUSED.
    pub fn write(&mut self, offset: u32, value: u32, busy: bool) -> Option<WriteEffect> {
        let offset = offset & ADDRESS_MASK;
        let begin = offset == itf::REG_KEY_CONTROL && value & itf::KEY_CONTROL_BEGIN != 0;
        let commit = offset == itf::REG_KEY_CONTROL && !begin && value & itf::KEY_CONTROL_COMMIT != 0;
        let data = offset == itf::REG_KEY_DATA;
        let refused = (busy && (begin || commit || data))
            || (data && !self.loading)
            || (commit && (!self.loading || self.spoiled));
        let mut shift = None;
        if refused {
            self.spoiled = self.loading;
        } else if begin {
            (self.key_valid, self.loading, self.spoiled) = (false, true, false);
        } else if commit {
            self.key_id = (value >> itf::KEY_CONTROL_ID_SHIFT) as u8;
            (self.key_valid, self.loading) = (true, false);
        } else if data {
            shift = Some(WriteEffect::KeyShift(KeyShift {
                q_path: self.key_select & itf::KEY_SELECT_Q_PATH != 0,
                target: (self.key_select & itf::KEY_SELECT_TARGET_MASK) as u8,
                data: value & itf::KEY_DATA_MASK,
            }));
        }
        match offset {
            itf::REG_KEY_SELECT => self.key_select = value & (itf::KEY_SELECT_TARGET_MASK | itf::KEY_SELECT_Q_PATH),
            itf::REG_ERRORS => self.errors &= !value,
            itf::REG_PACKET_HOLD => self.packet_hold = value & itf::PACKET_HOLD_MASK,
            itf::REG_CONTROL if value & itf::CONTROL_SOFT_RESET != 0 => shift = Some(WriteEffect::SoftReset),
            _ => {}
        }
        if refused {
            self.errors |= itf::ERROR_KEY_LOAD_REFUSED;
        }
        shift
    }

    /// A request frame was taken.
    pub fn job_in(&mut self) {
        self.jobs_in = self.jobs_in.wrapping_add(1);
    }

    /// A result frame left; `status` is its status, whose error bits become sticky ERRORS.
    pub fn job_out(&mut self, status: u8) {
        self.jobs_out = self.jobs_out.wrapping_add(1);
        if status != itf::RESULT_OK {
            self.jobs_failed = self.jobs_failed.wrapping_add(1);
        }
    }

    /// A request was refused with `status` (sets the sticky flags it names).
    pub fn refused(&mut self, status: u8) {
        if status & itf::RESULT_KEY_NOT_LOADED != 0 {
            self.errors |= itf::ERROR_KEY_NOT_LOADED;
        }
        if status & itf::RESULT_MALFORMED != 0 {
            self.errors |= itf::ERROR_MALFORMED;
        }
    }
}
