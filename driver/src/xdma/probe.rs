//! What the register block says about the bitstream, and loading a key through it.

use crate::xdma::nodes::Registers;
use anyhow::{bail, ensure, Context};
use ecrt_golden::hw::EcrtHwKey;
use ecrt_hdl::config::AcceleratorConfig;
use ecrt_hdl::host::decryption_key_loads;
use ecrt_hdl::interface::{self as itf, FrameLayout};
use num_bigint::BigUint;

/// The configuration registers of an ecrt accelerator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    pub version: u32,
    pub key_bits: usize,
    pub cores: usize,
    pub digits: usize,
    pub window_bits: usize,
    pub stream_bits: usize,
    pub limb_bits: usize,
}

impl std::fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ecrt interface {}.{}, {}-bit keys, {} core(s), {}-bit windows, {}-bit streams",
            self.version >> 16,
            self.version & 0xFFFF,
            self.key_bits,
            self.cores,
            self.window_bits,
            self.stream_bits
        )
    }
}

impl DeviceInfo {
    /// Reads ID, VERSION and the configuration; refuses what is not an ecrt accelerator of this
    /// driver's interface version, or whose registers contradict each other.
    pub fn probe(regs: &mut impl Registers) -> anyhow::Result<Self> {
        let mut read = |offset: u32| regs.read(offset).with_context(|| format!("cannot read register {offset:#05x}"));
        let id = read(itf::REG_ID)?;
        ensure!(
            id == itf::ID_VALUE,
            "not an ecrt accelerator: register ID reads {id:#010x}, not {:#010x} (wrong bitstream or wrong device?)",
            itf::ID_VALUE
        );
        let version = read(itf::REG_VERSION)?;
        ensure!(
            version >> 16 == u32::from(itf::VERSION_MAJOR),
            "the bitstream has interface version {}.{}; this driver speaks {}.x: rebuild the bitstream with this ecrt",
            version >> 16,
            version & 0xFFFF,
            itf::VERSION_MAJOR
        );
        let info = DeviceInfo {
            version,
            key_bits: read(itf::REG_KEY_BITS)? as usize,
            cores: read(itf::REG_CORES)? as usize,
            digits: read(itf::REG_DIGITS)? as usize,
            window_bits: read(itf::REG_WINDOW_BITS)? as usize,
            stream_bits: read(itf::REG_STREAM_BITS)? as usize,
            limb_bits: read(itf::REG_LIMB_BITS)? as usize,
        };
        let config = info.config();
        config.validate().with_context(|| format!("the bitstream reports an unusable configuration ({info})"))?;
        ensure!(
            config.digits() == info.digits,
            "register DIGITS reads {} but {}-bit keys need {}: the bitstream and this driver disagree",
            info.digits,
            info.key_bits,
            config.digits()
        );
        Ok(info)
    }

    /// The accelerator configuration the registers describe.
    pub fn config(&self) -> AcceleratorConfig {
        AcceleratorConfig {
            key_bits: self.key_bits,
            limb_bits: self.limb_bits,
            window_bits: self.window_bits,
            cores: self.cores,
            stream_bits: self.stream_bits,
            ..Default::default()
        }
    }

    /// The frame sizes.
    pub fn layout(&self) -> anyhow::Result<FrameLayout> {
        Ok(FrameLayout::new(self.digits, self.stream_bits)?)
    }
}

/// The key id a modulus is committed under: requests carry it, so a request meant for another
/// process's key gets KEY_NOT_LOADED instead of a wrong plaintext (1 to 255; 0 means none).
pub fn key_id(n: &BigUint) -> u8 {
    // FNV-1a over n's bytes: n is public, the id only needs to differ between keys.
    let hash = n.to_bytes_le().iter().fold(0x811c_9dc5u32, |h, &b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
    (hash % 255 + 1) as u8
}

/// Loads a key's constants into every core and commits it as `key_id`, then checks the commit.
pub fn load_key(regs: &mut impl Registers, key: &EcrtHwKey, window_bits: usize, key_id: u8) -> anyhow::Result<()> {
    let status = regs.read(itf::REG_STATUS)?;
    if status & itf::STATUS_BUSY != 0 {
        bail!("the accelerator is busy (another process is decrypting?); a key loads only while it is idle");
    }
    regs.write(itf::REG_ERRORS, itf::ERROR_KEY_LOAD_REFUSED)?;
    for (offset, value) in itf::key_load_writes(&decryption_key_loads(key, window_bits), key_id) {
        regs.write(offset, value)?;
    }
    let (status, errors, committed) =
        (regs.read(itf::REG_STATUS)?, regs.read(itf::REG_ERRORS)?, regs.read(itf::REG_KEY_ID)? & 0xFF);
    if errors & itf::ERROR_KEY_LOAD_REFUSED != 0 {
        bail!("the accelerator refused part of the key load (it became busy: another process is using it?)");
    }
    if status & itf::STATUS_KEY_VALID == 0 || committed != u32::from(key_id) {
        bail!("the key did not commit (STATUS {status:#x}, KEY_ID {committed})");
    }
    Ok(())
}
