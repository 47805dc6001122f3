//! The exponentiation in the deep-loop multiplier's lanes
//! ([`ecrt_hdl::exponentiation::lane_exp::LaneExp`]) alone at full width in Verilator: two keys
//! loaded, every lane exponentiating its own base.

use crate::{BuildOptions, Model, ModelSpec, PortId, Result, SimError};
use ecrt_golden::hw::FoldShape;
use ecrt_hdl::emit::emit_lane_exp;

struct Ports {
    key_write: PortId,
    key_select: PortId,
    key_m_hat: Vec<PortId>,
    key_one: Vec<PortId>,
    window_write: PortId,
    window_index: PortId,
    window_value: PortId,
    can_start: PortId,
    start: PortId,
    start_key: PortId,
    base_in: Vec<PortId>,
    lane: PortId,
    done: PortId,
    result: Vec<PortId>,
}

/// A key as the lanes take it: M̂ (exact limbs), the Montgomery 1 and the exponent's windows,
/// most significant first.
#[derive(Debug, Clone, Copy)]
pub struct LaneKey<'a> {
    /// M̂ = 2^(−17k) mod N.
    pub m_hat: &'a [u64],
    /// R mod N, normalized limbs.
    pub one: &'a [u64],
    /// The exponent's windows, most significant first.
    pub windows: &'a [u64],
}

/// One lane's exponentiation: its result (Montgomery form, normalized limbs) and the cycles from
/// its load phase to its `done`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneResult {
    /// The result's limbs.
    pub limbs: Vec<u64>,
    /// Cycles from the load of its base to its result.
    pub cycles: u64,
}

/// A Verilator model of the lanes' exponentiation of one shape, exponent size and window.
pub struct LaneExpSim {
    model: Model,
    ports: Ports,
    shape: FoldShape,
    cycles_per_exponentiation: u64,
}

impl LaneExpSim {
    /// Emits the unit and builds (or loads from the cache) its Verilator model; `multiplications`
    /// is the schedule's count (`ecrt_golden::hw::schedule_cost`), for the cycle bound.
    pub fn build(
        shape: &FoldShape,
        exponent_bits: usize,
        window_bits: usize,
        multiplications: usize,
        options: &BuildOptions,
    ) -> Result<Self> {
        let spec = ModelSpec::from_verilog(emit_lane_exp(shape, exponent_bits, window_bits), "top")?;
        let model = Model::build(&spec, options)?;
        let ids = |prefix: &str, count: usize| -> Result<Vec<PortId>> {
            (0..count).map(|j| model.port_id(&format!("{prefix}${j}"))).collect()
        };
        let (operands, modulus) = (shape.operand_limbs, shape.modulus_limbs);
        let ports = Ports {
            key_write: model.port_id("key_write")?,
            key_select: model.port_id("key_select")?,
            key_m_hat: ids("key_m_hat", modulus)?,
            key_one: ids("key_one", operands)?,
            window_write: model.port_id("window_write")?,
            window_index: model.port_id("window_index")?,
            window_value: model.port_id("window_value")?,
            can_start: model.port_id("can_start")?,
            start: model.port_id("start")?,
            start_key: model.port_id("start_key")?,
            base_in: ids("base_in", operands)?,
            lane: model.port_id("lane")?,
            done: model.port_id("done")?,
            result: ids("result", operands)?,
        };
        let cycles_per_exponentiation = (multiplications * shape.deep_cycles()) as u64;
        Ok(LaneExpSim { model, ports, shape: *shape, cycles_per_exponentiation })
    }

    /// Loads key `select` (0 or 1): its M̂ and 1 in a cycle, then its windows one a cycle.
    pub fn load_key(&mut self, select: usize, key: &LaneKey) -> Result<()> {
        self.model.set_bool(self.ports.key_select, select == 1)?;
        self.model.set_bool(self.ports.key_write, true)?;
        for (ports, limbs) in [(&self.ports.key_m_hat, key.m_hat), (&self.ports.key_one, key.one)] {
            for (&port, &limb) in ports.iter().zip(limbs) {
                self.model.set_u64(port, limb)?;
            }
        }
        self.model.tick()?;
        self.model.set_bool(self.ports.key_write, false)?;
        self.model.set_bool(self.ports.window_write, true)?;
        for (index, &value) in key.windows.iter().enumerate() {
            self.model.set_u64(self.ports.window_index, index as u64)?;
            self.model.set_u64(self.ports.window_value, value)?;
            self.model.tick()?;
        }
        self.model.set_bool(self.ports.window_write, false)
    }

    /// Exponentiates `jobs[lane]` = (key, base x̃ in normalized limbs) in each given lane (at most
    /// k + 3), each started as soon as its lane can; each lane's result.
    pub fn exponentiate(&mut self, jobs: &[Option<(usize, &[u64])>]) -> Result<Vec<Option<LaneResult>>> {
        let lanes = self.shape.deep_lanes();
        if jobs.len() > lanes {
            return Err(SimError::Spec(format!("{} jobs for {lanes} lanes", jobs.len())));
        }
        let max_cycles = self.cycles_per_exponentiation + 4 * lanes as u64;
        let mut loaded: Vec<Option<u64>> = vec![None; jobs.len()];
        let mut results: Vec<Option<LaneResult>> = vec![None; jobs.len()];
        // Starts in flight: (lane, the cycle its base is due).
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
                let (_, base) = jobs[l].expect("started lanes have jobs");
                for (&port, &limb) in self.ports.base_in.iter().zip(base) {
                    self.model.set_u64(port, limb)?;
                }
                loaded[l] = Some(cycle);
            }
            let deciding = (lane + 3) % lanes;
            let start = self.model.get_bool(self.ports.can_start)?
                && jobs.get(deciding).is_some_and(Option::is_some)
                && loaded[deciding].is_none()
                && !starts.iter().any(|&(l, _)| l == deciding);
            if start {
                let (key, _) = jobs[deciding].expect("checked");
                self.model.set_bool(self.ports.start_key, key == 1)?;
                starts.push((deciding, cycle + 3));
            }
            self.model.set_bool(self.ports.start, start)?;
            if jobs.iter().zip(&results).all(|(job, result)| job.is_none() || result.is_some()) {
                return Ok(results);
            }
            self.model.tick()?;
        }
        Err(SimError::Spec(format!("no result after {max_cycles} cycles")))
    }
}
