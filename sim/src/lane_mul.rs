//! A multiplier of lanes alone in Verilator (the deep-loop and the delayed-quotient multipliers,
//! whose ports are alike): each lane's job loaded at its turn, announced a cycle ahead, each
//! result read in the cycle its `done` shows.

use crate::fold_mul::Product;
use crate::{Model, PortId, Result, SimError};
use ecrt_golden::hw::ClassicOp;

/// One lane's multiplication: its operands and its modulus's M̂ or N (exact limbs).
#[derive(Debug, Clone, Copy)]
pub struct LaneJob<'a> {
    /// The multiplier A, normalized limbs.
    pub a: &'a [u64],
    /// The multiplicand B, normalized limbs.
    pub b: &'a [u64],
    /// M̂ of the lane's modulus (the delayed fold's H); N's limbs for a classic pass.
    pub m_hat: &'a [u64],
    /// The folding mode (`None`), or a classic pass and −N^(−1) mod 2^17.
    pub classic: Option<(ClassicOp, u64)>,
}

/// The ports of a multiplier of lanes.
pub(crate) struct LanePorts {
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

impl LanePorts {
    /// The ports of `model`, whose operands have `operand_limbs` limbs and moduli `modulus_limbs`.
    pub(crate) fn new(model: &Model, operand_limbs: usize, modulus_limbs: usize) -> Result<Self> {
        let ids = |prefix: &str, count: usize| -> Result<Vec<PortId>> {
            (0..count).map(|j| model.port_id(&format!("{prefix}${j}"))).collect()
        };
        Ok(LanePorts {
            start_next: model.port_id("start_next")?,
            next_free: model.port_id("next_free")?,
            classic: model.port_id("classic_in")?,
            redc: model.port_id("redc_in")?,
            decrement: model.port_id("decrement_in")?,
            n_prime: model.port_id("n_prime_in")?,
            lane: model.port_id("lane")?,
            done: model.port_id("done")?,
            a_in: ids("a_in", operand_limbs)?,
            b_in: ids("b_in", operand_limbs)?,
            m_hat: ids("m_hat_in", modulus_limbs)?,
            result: ids("result", operand_limbs)?,
        })
    }

    /// Runs one job per given lane of `lanes` (`jobs[lane]`), each started at the first turn it
    /// can be announced for, and returns each lane's product (`None` for a lane given no job).
    pub(crate) fn multiply(
        &self,
        model: &mut Model,
        lanes: usize,
        max_cycles: u64,
        jobs: &[Option<LaneJob>],
    ) -> Result<Vec<Option<Product>>> {
        if jobs.len() > lanes {
            return Err(SimError::Spec(format!("{} jobs for {lanes} lanes", jobs.len())));
        }
        let mut started: Vec<Option<u64>> = vec![None; jobs.len()];
        let mut products: Vec<Option<Product>> = vec![None; jobs.len()];
        // The lane whose start was announced in the previous cycle: it loads now.
        let mut loading: Option<usize> = None;
        for cycle in 0..max_cycles {
            let lane = model.get_u64(self.lane)? as usize;
            if let (true, Some(at)) = (model.get_bool(self.done)?, started.get(lane).copied().flatten()) {
                if products[lane].is_none() {
                    let limbs = self.result.iter().map(|&p| model.get_u64(p)).collect::<Result<_>>()?;
                    products[lane] = Some(Product { limbs, cycles: cycle - at });
                }
            }
            if let Some(job) = loading.filter(|&l| l == lane).and_then(|l| jobs[l]) {
                for (ports, limbs) in [(&self.a_in, job.a), (&self.b_in, job.b), (&self.m_hat, job.m_hat)] {
                    for (&port, &limb) in ports.iter().zip(limbs) {
                        model.set_u64(port, limb)?;
                    }
                }
                let (op, n_prime) = job.classic.unwrap_or((ClassicOp::Multiply, 0));
                model.set_bool(self.classic, job.classic.is_some())?;
                model.set_bool(self.redc, op == ClassicOp::WideRedc)?;
                model.set_bool(self.decrement, op == ClassicOp::Decremented)?;
                model.set_u64(self.n_prime, n_prime)?;
                started[lane] = Some(cycle);
            }
            let next = (lane + 1) % lanes;
            let announce = jobs.get(next).is_some_and(Option::is_some)
                && started[next].is_none()
                && model.get_bool(self.next_free)?;
            model.set_bool(self.start_next, announce)?;
            loading = announce.then_some(next);
            if jobs.iter().zip(&products).all(|(job, product)| job.is_none() || product.is_some()) {
                return Ok(products);
            }
            model.tick()?;
        }
        Err(SimError::Spec(format!("no result after {max_cycles} cycles")))
    }
}
