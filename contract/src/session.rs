//! The register sequences a host runs against a card: [`DeviceInfo::probe`] reads what the
//! bitstream is, [`load_key`] loads a key's constants and commits it. Written once here for every
//! host: the XDMA driver over the `_user` node, the Verilator harness over the AXI4-Lite ports,
//! the emulator's tests over either responder.

use crate::config::{AcceleratorConfig, ConfigError, Engine, ExponentSchedule};
use crate::host::HardwareKey;
use crate::interface::{self as itf, FrameError, FrameLayout};
use zeroize::Zeroize;

/// One AXI4-Lite register access at a byte offset.
pub trait RegisterBus {
    /// What a failed access reports.
    type Error: std::error::Error + Send + Sync + 'static;
    /// Reads the register at `offset`.
    fn read(&mut self, offset: u32) -> Result<u32, Self::Error>;
    /// Writes `value` to the register at `offset`.
    fn write(&mut self, offset: u32, value: u32) -> Result<(), Self::Error>;
}

/// Why a card cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("cannot access register {offset:#05x}: {source}")]
    Bus { offset: u32, source: Box<dyn std::error::Error + Send + Sync> },
    #[error(
        "not an ecrt accelerator: register ID reads {0:#010x}, not {id:#010x} (wrong bitstream or wrong device?)",
        id = itf::ID_VALUE
    )]
    NotEcrt(u32),
    #[error(
        "the bitstream has interface version {}.{}; this driver speaks {}.x: rebuild the bitstream with this ecrt",
        .0 >> 16, .0 & 0xFFFF, itf::VERSION_MAJOR
    )]
    Version(u32),
    #[error("the bitstream reports an unusable configuration ({info}): {source}")]
    Config { info: Box<DeviceInfo>, source: ConfigError },
    #[error(
        "register DIGITS reads {read} but {key_bits}-bit keys need {expected}: the bitstream and this driver disagree"
    )]
    Digits { read: usize, key_bits: usize, expected: usize },
    #[error(
        "register SCHEDULE reads {0}, which names no schedule this driver knows: rebuild the bitstream with this ecrt"
    )]
    Schedule(u32),
    #[error(
        "register ENGINE reads {0}, which names no engine this driver knows: rebuild the bitstream with this ecrt"
    )]
    Engine(u32),
    #[error(
        "register JOBS_PER_CORE reads {read} but its configuration holds {expected} a core: the bitstream and this driver disagree"
    )]
    JobsPerCore { read: usize, expected: usize },
    #[error("the accelerator is busy (another process is decrypting?); a key loads only while it is idle")]
    Busy,
    #[error("the accelerator refused part of the key load (it became busy: another process is using it?)")]
    LoadRefused,
    #[error("the key did not commit (STATUS {status:#x}, KEY_ID {key_id})")]
    NotCommitted { status: u32, key_id: u32 },
}

fn read<B: RegisterBus>(bus: &mut B, offset: u32) -> Result<u32, SessionError> {
    bus.read(offset).map_err(|e| SessionError::Bus { offset, source: Box::new(e) })
}

fn write<B: RegisterBus>(bus: &mut B, offset: u32, value: u32) -> Result<(), SessionError> {
    bus.write(offset, value).map_err(|e| SessionError::Bus { offset, source: Box::new(e) })
}

/// The configuration registers of an ecrt accelerator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    pub version: u32,
    pub key_bits: usize,
    pub cores: usize,
    pub digits: usize,
    pub window_bits: usize,
    pub schedule: ExponentSchedule,
    pub stream_bits: usize,
    pub limb_bits: usize,
    pub digits_per_step: usize,
    pub engine: Engine,
    /// Decryptions a core holds in flight: a host keeps cores × this many requests out.
    pub jobs_per_core: usize,
}

impl std::fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ecrt interface {}.{}, {}-bit keys, {} core(s) on {} ({} job(s) each), {} schedule, {} digits per step, {}-bit streams",
            self.version >> 16,
            self.version & 0xFFFF,
            self.key_bits,
            self.cores,
            self.engine,
            self.jobs_per_core,
            self.config().schedule_label(),
            self.digits_per_step,
            self.stream_bits
        )
    }
}

impl DeviceInfo {
    /// Reads ID, VERSION and the configuration; refuses what is not an ecrt accelerator of this
    /// contract's interface version, or whose registers contradict each other.
    pub fn probe<B: RegisterBus>(bus: &mut B) -> Result<Self, SessionError> {
        let id = read(bus, itf::REG_ID)?;
        if id != itf::ID_VALUE {
            return Err(SessionError::NotEcrt(id));
        }
        let version = read(bus, itf::REG_VERSION)?;
        if version >> 16 != u32::from(itf::VERSION_MAJOR) {
            return Err(SessionError::Version(version));
        }
        let info = DeviceInfo {
            version,
            key_bits: read(bus, itf::REG_KEY_BITS)? as usize,
            cores: read(bus, itf::REG_CORES)? as usize,
            digits: read(bus, itf::REG_DIGITS)? as usize,
            window_bits: read(bus, itf::REG_WINDOW_BITS)? as usize,
            schedule: {
                let value = read(bus, itf::REG_SCHEDULE)?;
                ExponentSchedule::from_register(value).ok_or(SessionError::Schedule(value))?
            },
            stream_bits: read(bus, itf::REG_STREAM_BITS)? as usize,
            limb_bits: read(bus, itf::REG_LIMB_BITS)? as usize,
            digits_per_step: read(bus, itf::REG_DIGITS_PER_STEP)? as usize,
            // Cards before 5.2 read 0 for both: two slots, a job a core.
            engine: {
                let value = read(bus, itf::REG_ENGINE)?;
                Engine::from_register(value).ok_or(SessionError::Engine(value))?
            },
            jobs_per_core: (read(bus, itf::REG_JOBS_PER_CORE)? as usize).max(1),
        };
        let config = info.config();
        if let Err(source) = config.validate() {
            return Err(SessionError::Config { info: Box::new(info), source });
        }
        if config.digits() != info.digits {
            return Err(SessionError::Digits { read: info.digits, key_bits: info.key_bits, expected: config.digits() });
        }
        if config.jobs_per_core() != info.jobs_per_core {
            return Err(SessionError::JobsPerCore { read: info.jobs_per_core, expected: config.jobs_per_core() });
        }
        Ok(info)
    }

    /// The accelerator configuration the registers describe.
    pub fn config(&self) -> AcceleratorConfig {
        AcceleratorConfig {
            key_bits: self.key_bits,
            limb_bits: self.limb_bits,
            window_bits: self.window_bits,
            schedule: self.schedule,
            cores: self.cores,
            stream_bits: self.stream_bits,
            digits_per_step: self.digits_per_step,
            engine: self.engine,
            ..Default::default()
        }
    }

    /// The frame sizes.
    pub fn layout(&self) -> Result<FrameLayout, FrameError> {
        FrameLayout::new(self.digits, self.stream_bits)
    }
}

/// Loads a key's constants into every core and commits it as `key_id`, then checks the commit:
/// refused while the card is busy, and failed if any write of the load was refused.
pub fn load_key<B: RegisterBus>(
    bus: &mut B,
    key: &HardwareKey,
    window_bits: usize,
    key_id: u8,
) -> Result<(), SessionError> {
    if read(bus, itf::REG_STATUS)? & itf::STATUS_BUSY != 0 {
        return Err(SessionError::Busy);
    }
    write(bus, itf::REG_ERRORS, itf::ERROR_KEY_LOAD_REFUSED)?;
    let mut loads = key.loads(window_bits);
    let mut writes = itf::key_load_writes(&loads, key_id);
    let written = writes.iter().try_for_each(|&(offset, value)| write(bus, offset, value));
    // The loads are the key's limbs: wiped, written or not.
    loads.iter_mut().for_each(|(_, _, data)| data.zeroize());
    writes.iter_mut().for_each(|(_, value)| value.zeroize());
    written?;
    let status = read(bus, itf::REG_STATUS)?;
    let errors = read(bus, itf::REG_ERRORS)?;
    let committed = read(bus, itf::REG_KEY_ID)? & 0xFF;
    if errors & itf::ERROR_KEY_LOAD_REFUSED != 0 {
        return Err(SessionError::LoadRefused);
    }
    if status & itf::STATUS_KEY_VALID == 0 || committed != u32::from(key_id) {
        return Err(SessionError::NotCommitted { status, key_id: committed });
    }
    Ok(())
}

/// Sets PACKET_HOLD for `layout` ([`FrameLayout::packet_hold_cycles`]), so that results of
/// requests written together come back in one packet. A 5.0 bitstream ignores the write: its
/// bursts end as soon as no result waits.
pub fn set_packet_hold<B: RegisterBus>(bus: &mut B, layout: &FrameLayout) -> Result<(), SessionError> {
    write(bus, itf::REG_PACKET_HOLD, layout.packet_hold_cycles())
}

#[cfg(test)]
mod tests;
