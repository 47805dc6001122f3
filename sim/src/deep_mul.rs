//! The deep-loop multiplier ([`ecrt_hdl::multiplier::deep_mul::DeepMul`]) alone at full width in
//! Verilator: every lane multiplying, each start announced a cycle ahead, each result read in the
//! cycle its `done` shows.

use crate::fold_mul::Product;
use crate::{BuildOptions, Model, ModelSpec, PortId, Result, SimError};
use ecrt_golden::hw::{ClassicOp, FoldShape};
use ecrt_hdl::emit::emit_deep_mul;

struct Ports {
    start_next: PortId,
    next_free: PortId,
    lane: PortId,
    done: PortId,
    classic: PortId,
    redc: PortId,
    decrement: PortId,
    n_prime: PortId,
    a_in: Vec<PortId>,
    b_in: Vec<PortId>,
    m_hat: Vec<PortId>,
    result: Vec<PortId>,
}

/// One lane's multiplication: its operands and its modulus's M̂ or N (exact limbs).
#[derive(Debug, Clone, Copy)]
pub struct LaneJob<'a> {
    /// The multiplier A, normalized limbs.
    pub a: &'a [u64],
    /// The multiplicand B, normalized limbs.
    pub b: &'a [u64],
    /// M̂ of the lane's modulus; N's limbs for a classic pass.
    pub m_hat: &'a [u64],
    /// The folding mode (`None`), or a classic pass and −N^(−1) mod 2^17.
    pub classic: Option<(ClassicOp, u64)>,
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
            start_next: model.port_id("start_next")?,
            next_free: model.port_id("next_free")?,
            classic: model.port_id("classic_in")?,
            redc: model.port_id("redc_in")?,
            decrement: model.port_id("decrement_in")?,
            n_prime: model.port_id("n_prime_in")?,
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

    /// Runs one multiplication per given lane (`jobs[lane]`, at most k + 3), each started at the
    /// first load phase it can be announced for, and returns each lane's product (`None` for a lane given no job).
    pub fn multiply(&mut self, jobs: &[Option<LaneJob>]) -> Result<Vec<Option<Product>>> {
        let lanes = self.shape.deep_lanes();
        if jobs.len() > lanes {
            return Err(SimError::Spec(format!("{} jobs for {lanes} lanes", jobs.len())));
        }
        let longest = self.shape.deep_cycles().max(self.shape.deep_classic_cycles(ClassicOp::Multiply));
        let max_cycles = 2 * (longest + lanes) as u64;
        let mut started: Vec<Option<u64>> = vec![None; jobs.len()];
        let mut products: Vec<Option<Product>> = vec![None; jobs.len()];
        // The lane whose start was announced in the previous cycle: it loads now.
        let mut loading: Option<usize> = None;
        for cycle in 0..max_cycles {
            let lane = self.model.get_u64(self.ports.lane)? as usize;
            if let (true, Some(at)) = (self.model.get_bool(self.ports.done)?, started.get(lane).copied().flatten()) {
                if products[lane].is_none() {
                    let limbs = self.ports.result.iter().map(|&p| self.model.get_u64(p)).collect::<Result<_>>()?;
                    products[lane] = Some(Product { limbs, cycles: cycle - at });
                }
            }
            if let Some(job) = loading.filter(|&l| l == lane).and_then(|l| jobs[l]) {
                for (ports, limbs) in
                    [(&self.ports.a_in, job.a), (&self.ports.b_in, job.b), (&self.ports.m_hat, job.m_hat)]
                {
                    for (&port, &limb) in ports.iter().zip(limbs) {
                        self.model.set_u64(port, limb)?;
                    }
                }
                let (op, n_prime) = job.classic.unwrap_or((ClassicOp::Multiply, 0));
                self.model.set_bool(self.ports.classic, job.classic.is_some())?;
                self.model.set_bool(self.ports.redc, op == ClassicOp::WideRedc)?;
                self.model.set_bool(self.ports.decrement, op == ClassicOp::Decremented)?;
                self.model.set_u64(self.ports.n_prime, n_prime)?;
                started[lane] = Some(cycle);
            }
            let next = (lane + 1) % lanes;
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
