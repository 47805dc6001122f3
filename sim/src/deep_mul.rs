//! The deep-loop multiplier ([`ecrt_hdl::multiplier::deep_mul::DeepMul`]) alone at full width in
//! Verilator: every lane multiplying, each start announced a cycle ahead, each result read in the
//! cycle its `done` shows.

use crate::fold_mul::Product;
use crate::lane_mul::{LaneJob, LanePorts};
use crate::{BuildOptions, Model, ModelSpec, Result};
use ecrt_golden::hw::{ClassicOp, FoldShape};
use ecrt_hdl::emit::emit_deep_mul;

/// A Verilator model of the deep-loop multiplier of one shape.
pub struct DeepMulSim {
    model: Model,
    ports: LanePorts,
    shape: FoldShape,
}

impl DeepMulSim {
    /// Emits the multiplier of `shape` and builds (or loads from the cache) its Verilator model.
    pub fn build(shape: &FoldShape, options: &BuildOptions) -> Result<Self> {
        let spec = ModelSpec::from_verilog(emit_deep_mul(shape), "top")?;
        let model = Model::build(&spec, options)?;
        let ports = LanePorts::new(&model, shape.operand_limbs, shape.modulus_limbs)?;
        Ok(DeepMulSim { model, ports, shape: *shape })
    }

    /// The multiplier's shape.
    pub fn shape(&self) -> &FoldShape {
        &self.shape
    }

    /// Runs one multiplication per given lane (`jobs[lane]`, at most k + 3), each started at the
    /// first load phase it can be announced for, and returns each lane's product (`None` for a lane given no job).
    pub fn multiply(&mut self, jobs: &[Option<LaneJob>]) -> Result<Vec<Option<Product>>> {
        let longest = self.shape.deep_cycles().max(self.shape.deep_classic_cycles(ClassicOp::Multiply));
        let lanes = self.shape.deep_lanes();
        self.ports.multiply(&mut self.model, lanes, 2 * (longest + lanes) as u64, jobs)
    }
}
