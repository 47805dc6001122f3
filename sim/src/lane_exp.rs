//! The primes' decryption paths in the deep-loop multiplier's lanes
//! ([`ecrt_hdl::exponentiation::lane_exp::LaneExp`]) alone at full width in Verilator: a key
//! loaded as the decryption core takes it, every lane running one prime's path of a ciphertext.

use crate::{BuildOptions, Model, ModelSpec, PortId, Result, SimError};
use ecrt_contract::host::KeyLoad;
use ecrt_golden::hw::FoldShape;
use ecrt_hdl::emit::emit_lane_exp;

struct Ports {
    key_load: PortId,
    key_load_slot: PortId,
    key_load_target: PortId,
    key_load_data: PortId,
    can_start: PortId,
    start: PortId,
    start_prime: PortId,
    cipher_low: Vec<PortId>,
    cipher_high: Vec<PortId>,
    lane: PortId,
    done: PortId,
    result: Vec<PortId>,
}

/// One lane's path: the prime (false = p) and the ciphertext's limbs below L and from L on.
#[derive(Debug, Clone, Copy)]
pub struct LanePath<'a> {
    /// q's path rather than p's.
    pub prime_q: bool,
    /// The ciphertext's limbs below L.
    pub low: &'a [u64],
    /// Its limbs from L on (L of them).
    pub high: &'a [u64],
}

/// One lane's result: its prime's eCRT term (normalized limbs) and the cycles from its load phase
/// to its `done`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneResult {
    /// The term's limbs.
    pub limbs: Vec<u64>,
    /// Cycles from the load of its ciphertext to its term.
    pub cycles: u64,
}

/// A Verilator model of the lanes' decryption paths of one shape, exponent size and window.
pub struct LaneExpSim {
    model: Model,
    ports: Ports,
    shape: FoldShape,
}

impl LaneExpSim {
    /// Emits the unit and builds (or loads from the cache) its Verilator model.
    pub fn build(shape: &FoldShape, exponent_bits: usize, window_bits: usize, options: &BuildOptions) -> Result<Self> {
        let spec = ModelSpec::from_verilog(emit_lane_exp(shape, exponent_bits, window_bits), "top")?;
        let model = Model::build(&spec, options)?;
        let ids = |prefix: &str, count: usize| -> Result<Vec<PortId>> {
            (0..count).map(|j| model.port_id(&format!("{prefix}${j}"))).collect()
        };
        let operands = shape.operand_limbs;
        let ports = Ports {
            key_load: model.port_id("key_load")?,
            key_load_slot: model.port_id("key_load_slot")?,
            key_load_target: model.port_id("key_load_target")?,
            key_load_data: model.port_id("key_load_data")?,
            can_start: model.port_id("can_start")?,
            start: model.port_id("start")?,
            start_prime: model.port_id("start_prime")?,
            cipher_low: ids("cipher_low", operands)?,
            cipher_high: ids("cipher_high", operands)?,
            lane: model.port_id("lane")?,
            done: model.port_id("done")?,
            result: ids("result", operands)?,
        };
        Ok(LaneExpSim { model, ports, shape: *shape })
    }

    /// Loads a key, a load a cycle (`ecrt_hdl::host::decryption_key_loads`).
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

    /// Runs `paths[lane]` in each given lane (at most k + 3), each started as soon as its lane
    /// can, for at most `max_cycles`; each lane's term.
    pub fn run(&mut self, paths: &[Option<LanePath>], max_cycles: u64) -> Result<Vec<Option<LaneResult>>> {
        let lanes = self.shape.deep_lanes();
        if paths.len() > lanes {
            return Err(SimError::Spec(format!("{} paths for {lanes} lanes", paths.len())));
        }
        let mut loaded: Vec<Option<u64>> = vec![None; paths.len()];
        let mut results: Vec<Option<LaneResult>> = vec![None; paths.len()];
        // Starts in flight: (lane, the cycle its ciphertext is due).
        let mut starts: Vec<(usize, u64)> = Vec::new();
        for cycle in 0..max_cycles {
            let lane = self.model.get_u64(self.ports.lane)? as usize;
            if self.model.get_bool(self.ports.done)? {
                if let Some(Some(at)) = loaded.get(lane) {
                    let limbs = self.ports.result.iter().map(|&p| self.model.get_u64(p)).collect::<Result<_>>()?;
                    results[lane] = Some(LaneResult { limbs, cycles: cycle - at });
                }
            }
            if let Some(i) = starts.iter().position(|&(_, due)| due == cycle) {
                let (l, _) = starts.remove(i);
                let path = paths[l].expect("started lanes have paths");
                for (ports, limbs) in [(&self.ports.cipher_low, path.low), (&self.ports.cipher_high, path.high)] {
                    for (&port, &limb) in ports.iter().zip(limbs) {
                        self.model.set_u64(port, limb)?;
                    }
                }
                loaded[l] = Some(cycle);
            }
            let deciding = (lane + 3) % lanes;
            let start = self.model.get_bool(self.ports.can_start)?
                && paths.get(deciding).is_some_and(Option::is_some)
                && loaded[deciding].is_none()
                && !starts.iter().any(|&(l, _)| l == deciding);
            if let (true, Some(path)) = (start, paths.get(deciding).copied().flatten()) {
                self.model.set_bool(self.ports.start_prime, path.prime_q)?;
                starts.push((deciding, cycle + 3));
            }
            self.model.set_bool(self.ports.start, start)?;
            if paths.iter().zip(&results).all(|(path, result)| path.is_none() || result.is_some()) {
                return Ok(results);
            }
            self.model.tick()?;
        }
        Err(SimError::Spec(format!("no result after {max_cycles} cycles")))
    }
}
