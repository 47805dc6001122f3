//! The delayed-quotient multiplier ([`ecrt_hdl::multiplier::delay_mul::DelayMul`]) alone in
//! Verilator: both lanes multiplying or running classic passes ([`LanePorts::multiply`]).

use crate::fold_mul::Product;
use crate::lane_mul::{LaneJob, LanePorts};
use crate::{BuildOptions, Model, ModelSpec, Result};
use ecrt_golden::hw::{ClassicOp, DelayedShape};
use ecrt_hdl::emit::emit_delay_mul;
use ecrt_hdl::multiplier::delay_mul::DelayTiming;

/// A Verilator model of the delayed-quotient multiplier of one shape.
pub struct DelayMulSim {
    model: Model,
    ports: LanePorts,
    shape: DelayedShape,
}

impl DelayMulSim {
    /// Emits the multiplier of `shape` and builds (or loads from the cache) its Verilator model.
    pub fn build(shape: &DelayedShape, options: &BuildOptions) -> Result<Self> {
        let spec = ModelSpec::from_verilog(emit_delay_mul(shape), "top")?;
        let model = Model::build(&spec, options)?;
        let ports = LanePorts::new(&model, shape.operand_limbs, shape.modulus_limbs)?;
        Ok(DelayMulSim { model, ports, shape: *shape })
    }

    /// Runs one job per given lane (`jobs[lane]`, at most two; `m_hat` is H, or N for a classic
    /// pass), each loaded at the first turn it can be announced for, and returns each lane's
    /// product (`None` for a lane given no job).
    pub fn multiply(&mut self, jobs: &[Option<LaneJob>]) -> Result<Vec<Option<Product>>> {
        let timing = DelayTiming::new(self.shape.limbs_per_step);
        let longest = timing.cycles(&self.shape).max(timing.classic_cycles(&self.shape, ClassicOp::Multiply));
        self.ports.multiply(&mut self.model, 2, 2 * longest as u64 + 4, jobs)
    }
}
