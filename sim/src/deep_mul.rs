//! The deep-loop multiplier ([`ecrt_hdl::multiplier::deep_mul::DeepMul`]) alone at full width in
//! Verilator: every lane multiplying, each result read in the cycle its `done` shows.

use crate::fold_mul::Product;
use crate::{BuildOptions, Model, ModelSpec, PortId, Result, SimError};
use ecrt_golden::hw::FoldShape;
use ecrt_hdl::emit::emit_deep_mul;

struct Ports {
    start: PortId,
    lane: PortId,
    done: PortId,
    a_in: Vec<PortId>,
    b_in: Vec<PortId>,
    m_hat: Vec<PortId>,
    result: Vec<PortId>,
}

/// One lane's multiplication: its operands and its modulus's M̂ (exact limbs).
#[derive(Debug, Clone, Copy)]
pub struct LaneJob<'a> {
    /// The multiplier A, normalized limbs.
    pub a: &'a [u64],
    /// The multiplicand B, normalized limbs.
    pub b: &'a [u64],
    /// M̂ of the lane's modulus.
    pub m_hat: &'a [u64],
}

/// A Verilator model of the deep-loop multiplier of one shape.
pub struct DeepMulSim {
    model: Model,
    ports: Ports,
    shape: FoldShape,
}

impl DeepMulSim {
    /// Emits the multiplier of `shape` and builds (or loads from the cache) its Verilator model.
    pub fn build(shape: &FoldShape, options: &BuildOptions) -> Result<Self> {
        let spec = ModelSpec::from_verilog(emit_deep_mul(shape), "top")?;
        let model = Model::build(&spec, options)?;
        let ids = |prefix: &str, count: usize| -> Result<Vec<PortId>> {
            (0..count).map(|j| model.port_id(&format!("{prefix}${j}"))).collect()
        };
        let (operands, modulus) = (shape.operand_limbs, shape.modulus_limbs);
        let ports = Ports {
            start: model.port_id("start")?,
            lane: model.port_id("lane")?,
            done: model.port_id("done")?,
            a_in: ids("a_in", operands)?,
            b_in: ids("b_in", operands)?,
            m_hat: ids("m_hat_in", modulus)?,
            result: ids("result", operands)?,
        };
        Ok(DeepMulSim { model, ports, shape: *shape })
    }

    /// The multiplier's shape.
    pub fn shape(&self) -> &FoldShape {
        &self.shape
    }

    /// Runs one multiplication per given lane (`jobs[lane]`, at most k + 3), each started at its
    /// lane's first load phase, and returns each lane's product (`None` for a lane given no job).
    pub fn multiply(&mut self, jobs: &[Option<LaneJob>]) -> Result<Vec<Option<Product>>> {
        let lanes = self.shape.deep_lanes();
        if jobs.len() > lanes {
            return Err(SimError::Spec(format!("{} jobs for {lanes} lanes", jobs.len())));
        }
        let max_cycles = 2 * (self.shape.deep_cycles() + lanes) as u64;
        let mut started: Vec<Option<u64>> = vec![None; jobs.len()];
        let mut products: Vec<Option<Product>> = vec![None; jobs.len()];
        for cycle in 0..max_cycles {
            let lane = self.model.get_u64(self.ports.lane)? as usize;
            let job = jobs.get(lane).copied().flatten();
            if let (true, Some(at)) = (self.model.get_bool(self.ports.done)?, started.get(lane).copied().flatten()) {
                if products[lane].is_none() {
                    let limbs = self.ports.result.iter().map(|&p| self.model.get_u64(p)).collect::<Result<_>>()?;
                    products[lane] = Some(Product { limbs, cycles: cycle - at });
                }
            }
            let start = job.is_some() && started[lane].is_none();
            if let (true, Some(job)) = (start, job) {
                for (ports, limbs) in
                    [(&self.ports.a_in, job.a), (&self.ports.b_in, job.b), (&self.ports.m_hat, job.m_hat)]
                {
                    for (&port, &limb) in ports.iter().zip(limbs) {
                        self.model.set_u64(port, limb)?;
                    }
                }
                started[lane] = Some(cycle);
            }
            self.model.set_bool(self.ports.start, start)?;
            if jobs.iter().zip(&products).all(|(job, product)| job.is_none() || product.is_some()) {
                return Ok(products);
            }
            self.model.tick()?;
        }
        Err(SimError::Spec(format!("no result after {max_cycles} cycles")))
    }
}
