//! The exponentiation unit ([`ecrt_hdl::exponentiation::modexp::ModExp`]) at full width in
//! Verilator: emit the configuration, build it (cached), load keys and bases the way a host does,
//! run, and time it.

use crate::{BuildOptions, Model, ModelSpec, PortId, Result, SimError};
use ecrt_contract::config::AcceleratorConfig;
use ecrt_contract::host::{Load, SlotKey};
use ecrt_contract::limbs::from_limbs;
use ecrt_hdl::emit::{emit_modexp, Manifest};
use num_bigint::BigUint;

struct Ports {
    load: PortId,
    load_slot: PortId,
    load_target: PortId,
    load_data: PortId,
    start: [PortId; 2],
    done: PortId,
    done_slot: PortId,
    mul_done: PortId,
    phase: PortId,
    result: Vec<PortId>,
}

/// One slot's finished exponentiation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    /// base^e mod N.
    pub result: BigUint,
    /// Cycles from the start pulse's clock edge to the cycle in which the result appeared.
    pub cycles: u64,
    /// Montgomery multiplications performed for this slot.
    pub multiplications: usize,
    /// Each multiplication's result, in order, when recorded.
    pub products: Vec<BigUint>,
}

/// A Verilator model of the exponentiation unit.
pub struct ModExpSim {
    model: Model,
    ports: Ports,
    manifest: Manifest,
}

impl ModExpSim {
    /// Emits `config`'s RTL and builds (or loads from the cache) its Verilator model.
    pub fn build(config: &AcceleratorConfig, options: &BuildOptions, trace: bool) -> Result<Self> {
        let emitted = emit_modexp(config).map_err(|e| SimError::Spec(e.to_string()))?;
        let spec = ModelSpec::from_verilog(emitted.verilog, &emitted.manifest.top)?.with_trace(trace);
        let model = Model::build(&spec, options)?;
        let id = |name: &str| model.port_id(name);
        let ports = Ports {
            load: id("load")?,
            load_slot: id("load_slot")?,
            load_target: id("load_target")?,
            load_data: id("load_data")?,
            start: [id("start0")?, id("start1")?],
            done: id("done")?,
            done_slot: id("done_slot")?,
            mul_done: id("mul_done")?,
            phase: id("phase")?,
            result: (0..emitted.manifest.digits).map(|j| id(&format!("result${j}"))).collect::<Result<_>>()?,
        };
        Ok(ModExpSim { model, ports, manifest: emitted.manifest })
    }

    /// The emitted design's manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The Verilator model (for VCD tracing and build information).
    pub fn model_mut(&mut self) -> &mut Model {
        &mut self.model
    }

    /// Shifts a load sequence into `slot`, one load per cycle.
    pub fn load(&mut self, slot: usize, loads: &[Load]) -> Result<()> {
        let p = &self.ports;
        self.model.set_bool(p.load, true)?;
        self.model.set_bool(p.load_slot, slot == 1)?;
        for &(target, data) in loads {
            self.model.set_u64(p.load_target, target as u64)?;
            self.model.set_u64(p.load_data, data)?;
            self.model.tick()?;
        }
        self.model.set_bool(p.load, false)?;
        Ok(())
    }

    /// Loads a key (modulus, exponent) and a base into `slot`.
    pub fn load_key_and_base(&mut self, slot: usize, key: &SlotKey, base: &BigUint) -> Result<()> {
        self.load(slot, &key.key_loads())?;
        self.load(slot, &key.base_loads(base))
    }

    fn result(&self) -> Result<BigUint> {
        let limbs = self.ports.result.iter().map(|&p| self.model.get_u64(p)).collect::<Result<Vec<_>>>()?;
        Ok(from_limbs(limbs))
    }

    /// Starts the slots marked in `slots` at once and runs until all of them finish (or
    /// `max_cycles` pass, an error). `record` keeps every multiplication's result.
    pub fn run(&mut self, slots: [bool; 2], record: bool, max_cycles: u64) -> Result<[Option<Finished>; 2]> {
        let p = &self.ports;
        for (s, &on) in slots.iter().enumerate() {
            self.model.set_bool(p.start[s], on)?;
        }
        self.model.tick()?;
        for s in 0..2 {
            self.model.set_bool(self.ports.start[s], false)?;
        }
        let mut finished: [Option<Finished>; 2] = [None, None];
        let mut counts = [0usize; 2];
        let mut products: [Vec<BigUint>; 2] = [Vec::new(), Vec::new()];
        let mut cycles = 0;
        while slots.iter().zip(&finished).any(|(on, f)| *on && f.is_none()) {
            if cycles == max_cycles {
                return Err(SimError::Spec(format!("no result after {max_cycles} cycles")));
            }
            if self.model.get_bool(self.ports.mul_done)? {
                let slot = usize::from(self.model.get_bool(self.ports.phase)?);
                counts[slot] += 1;
                if record {
                    products[slot].push(self.result()?);
                }
            }
            if self.model.get_bool(self.ports.done)? {
                let slot = usize::from(self.model.get_bool(self.ports.done_slot)?);
                finished[slot] = Some(Finished {
                    result: self.result()?,
                    cycles,
                    multiplications: counts[slot],
                    products: std::mem::take(&mut products[slot]),
                });
            }
            self.model.tick()?;
            cycles += 1;
        }
        Ok(finished)
    }
}
