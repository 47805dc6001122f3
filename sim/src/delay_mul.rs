//! The delayed-quotient multiplier ([`ecrt_hdl::multiplier::delay_mul::DelayMul`]) alone in
//! Verilator: both lanes multiplying, each load announced a cycle ahead, each result read in the
//! cycle its `done` shows.

use crate::fold_mul::Product;
use crate::{BuildOptions, Model, ModelSpec, PortId, Result, SimError};
use ecrt_golden::hw::DelayedShape;
use ecrt_hdl::emit::emit_delay_mul;
use ecrt_hdl::multiplier::delay_mul::DelayTiming;

struct Ports {
    start_next: PortId,
    next_free: PortId,
    lane: PortId,
    done: PortId,
    a_in: Vec<PortId>,
    b_in: Vec<PortId>,
    h_in: Vec<PortId>,
    result: Vec<PortId>,
}

/// One lane's multiplication: its operands (normalized limbs) and H of its modulus (exact limbs).
#[derive(Debug, Clone, Copy)]
pub struct DelayJob<'a> {
    /// The multiplier A.
    pub a: &'a [u64],
    /// The multiplicand B.
    pub b: &'a [u64],
    /// H = 2^(−17k(d+1)) mod N.
    pub h: &'a [u64],
}

/// A Verilator model of the delayed-quotient multiplier of one shape.
pub struct DelayMulSim {
    model: Model,
    ports: Ports,
    shape: DelayedShape,
}

impl DelayMulSim {
    /// Emits the multiplier of `shape` and builds (or loads from the cache) its Verilator model.
    pub fn build(shape: &DelayedShape, options: &BuildOptions) -> Result<Self> {
        let spec = ModelSpec::from_verilog(emit_delay_mul(shape), "top")?;
        let model = Model::build(&spec, options)?;
        let ids = |prefix: &str, count: usize| -> Result<Vec<PortId>> {
            (0..count).map(|j| model.port_id(&format!("{prefix}${j}"))).collect()
        };
        let ports = Ports {
            start_next: model.port_id("start_next")?,
            next_free: model.port_id("next_free")?,
            lane: model.port_id("lane")?,
            done: model.port_id("done")?,
            a_in: ids("a_in", shape.operand_limbs)?,
            b_in: ids("b_in", shape.operand_limbs)?,
            h_in: ids("h_in", shape.modulus_limbs)?,
            result: ids("result", shape.operand_limbs)?,
        };
        Ok(DelayMulSim { model, ports, shape: *shape })
    }

    /// Runs one multiplication per given lane (`jobs[lane]`, at most two), each loaded at the first
    /// turn it can be announced for, and returns each lane's product (`None` for a lane given no
    /// job).
    pub fn multiply(&mut self, jobs: &[Option<DelayJob>]) -> Result<Vec<Option<Product>>> {
        if jobs.len() > 2 {
            return Err(SimError::Spec(format!("{} jobs for 2 lanes", jobs.len())));
        }
        let max_cycles = 2 * DelayTiming::new(self.shape.limbs_per_step).cycles(&self.shape) as u64 + 4;
        let mut started: Vec<Option<u64>> = vec![None; jobs.len()];
        let mut products: Vec<Option<Product>> = vec![None; jobs.len()];
        // The lane whose load was announced in the previous cycle: it loads now.
        let mut loading: Option<usize> = None;
        for cycle in 0..max_cycles {
            let lane = usize::from(self.model.get_bool(self.ports.lane)?);
            if let (true, Some(at)) = (self.model.get_bool(self.ports.done)?, started.get(lane).copied().flatten()) {
                if products[lane].is_none() {
                    let limbs = self.ports.result.iter().map(|&p| self.model.get_u64(p)).collect::<Result<_>>()?;
                    products[lane] = Some(Product { limbs, cycles: cycle - at });
                }
            }
            if let Some(job) = loading.filter(|&l| l == lane).and_then(|l| jobs[l]) {
                for (ports, limbs) in [(&self.ports.a_in, job.a), (&self.ports.b_in, job.b), (&self.ports.h_in, job.h)]
                {
                    for (&port, &limb) in ports.iter().zip(limbs) {
                        self.model.set_u64(port, limb)?;
                    }
                }
                started[lane] = Some(cycle);
            }
            let next = 1 - lane;
            let announce = jobs.get(next).is_some_and(Option::is_some)
                && started[next].is_none()
                && self.model.get_bool(self.ports.next_free)?;
            self.model.set_bool(self.ports.start_next, announce)?;
            loading = announce.then_some(next);
            if jobs.iter().zip(&products).all(|(job, product)| job.is_none() || product.is_some()) {
                return Ok(products);
            }
            self.model.tick()?;
        }
        Err(SimError::Spec(format!("no result after {max_cycles} cycles")))
    }
}
