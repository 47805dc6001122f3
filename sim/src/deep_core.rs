//! A decryption core on the deep loop's lanes ([`ecrt_hdl::decryption::deep_core::DeepCore`]),
//! or on the delayed-quotient multiplier's ([`ecrt_hdl::decryption::deep_core::DelayCore`]),
//! alone at full width in Verilator: a key loaded, ciphertexts shifted in and started whenever the
//! core is ready, plaintexts taken as they come.

use crate::{BuildOptions, Model, ModelSpec, PortId, Result, SimError};
use ecrt_contract::host::KeyLoad;
use ecrt_golden::hw::{DelayedShape, FoldShape};
use ecrt_hdl::emit::{emit_deep_core, emit_delay_core};

struct Ports {
    key_load: PortId,
    key_load_slot: PortId,
    key_load_target: PortId,
    key_load_data: PortId,
    ready: PortId,
    limb_in_valid: PortId,
    limb_in: PortId,
    start: PortId,
    tag_in: PortId,
    result_valid: PortId,
    result_tag: PortId,
    result_limb: PortId,
    result_take: PortId,
}

/// One decryption's plaintext (exact limbs), its tag, and the cycles from its start to its first
/// limb.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decrypted {
    /// The job's tag.
    pub tag: u64,
    /// The plaintext's limbs, least significant first.
    pub limbs: Vec<u64>,
    /// Cycles from its start to its first limb.
    pub latency: u64,
}

/// A Verilator model of a lanes decryption core of one shape, exponent size and window.
pub struct DeepCoreSim {
    model: Model,
    ports: Ports,
    digits: usize,
}

impl DeepCoreSim {
    /// Emits the deep loop's core and builds (or loads from the cache) its Verilator model.
    pub fn build(shape: &FoldShape, exponent_bits: usize, window_bits: usize, options: &BuildOptions) -> Result<Self> {
        Self::from_verilog(emit_deep_core(shape, exponent_bits, window_bits), shape.classic_digits(), options)
    }

    /// Emits the delayed-quotient multiplier's core and builds (or loads) its Verilator model.
    pub fn build_delay(
        shape: &DelayedShape,
        exponent_bits: usize,
        window_bits: usize,
        options: &BuildOptions,
    ) -> Result<Self> {
        Self::from_verilog(emit_delay_core(shape, exponent_bits, window_bits), shape.classic_digits(), options)
    }

    fn from_verilog(verilog: String, digits: usize, options: &BuildOptions) -> Result<Self> {
        let spec = ModelSpec::from_verilog(verilog, "top")?;
        let model = Model::build(&spec, options)?;
        let id = |name: &str| model.port_id(name);
        let ports = Ports {
            key_load: id("key_load")?,
            key_load_slot: id("key_load_slot")?,
            key_load_target: id("key_load_target")?,
            key_load_data: id("key_load_data")?,
            ready: id("ready")?,
            limb_in_valid: id("limb_in_valid")?,
            limb_in: id("limb_in")?,
            start: id("start")?,
            tag_in: id("tag_in")?,
            result_valid: id("result_valid")?,
            result_tag: id("result_tag")?,
            result_limb: id("result_limb")?,
            result_take: id("result_take")?,
        };
        Ok(DeepCoreSim { model, ports, digits })
    }

    /// Loads a key, a load a cycle (`ecrt_contract::host::decryption_key_loads`).
    pub fn load_key(&mut self, loads: &[KeyLoad]) -> Result<()> {
        self.model.set_bool(self.ports.key_load, true)?;
        for &(slot, target, data) in loads {
            self.model.set_bool(self.ports.key_load_slot, slot)?;
            self.model.set_u64(self.ports.key_load_target, target as u64)?;
            self.model.set_u64(self.ports.key_load_data, data)?;
            self.model.tick()?;
        }
        self.model.set_bool(self.ports.key_load, false)
    }

    /// Decrypts `ciphertexts` (each its 2·S limbs), job i tagged i, for at most `max_cycles`:
    /// the plaintexts in the order they come.
    pub fn decrypt(&mut self, ciphertexts: &[Vec<u64>], max_cycles: u64) -> Result<Vec<Decrypted>> {
        let (mut job, mut limb) = (0usize, 0usize);
        let mut started: Vec<u64> = Vec::new();
        let mut out: Vec<Decrypted> = Vec::new();
        let mut current: Option<Decrypted> = None;
        for cycle in 0..max_cycles {
            self.model.set_bool(self.ports.limb_in_valid, false)?;
            self.model.set_bool(self.ports.start, false)?;
            if job < ciphertexts.len() && self.model.get_bool(self.ports.ready)? {
                if limb < ciphertexts[job].len() {
                    self.model.set_bool(self.ports.limb_in_valid, true)?;
                    self.model.set_u64(self.ports.limb_in, ciphertexts[job][limb])?;
                    limb += 1;
                } else {
                    self.model.set_bool(self.ports.start, true)?;
                    self.model.set_u64(self.ports.tag_in, job as u64)?;
                    started.push(cycle);
                    job += 1;
                    limb = 0;
                }
            }
            let valid = self.model.get_bool(self.ports.result_valid)?;
            self.model.set_bool(self.ports.result_take, valid)?;
            if valid {
                let tag = self.model.get_u64(self.ports.result_tag)?;
                let limb = self.model.get_u64(self.ports.result_limb)?;
                let d = current.get_or_insert_with(|| Decrypted {
                    tag,
                    limbs: Vec::new(),
                    latency: cycle - started.get(tag as usize).copied().unwrap_or(cycle),
                });
                d.limbs.push(limb);
                if d.limbs.len() == self.digits {
                    out.extend(current.take());
                }
            }
            if out.len() == ciphertexts.len() {
                return Ok(out);
            }
            self.model.tick()?;
        }
        Err(SimError::Spec(format!("{} of {} plaintexts after {max_cycles} cycles", out.len(), ciphertexts.len())))
    }
}
