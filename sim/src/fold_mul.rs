//! The folding multiplier ([`ecrt_hdl::multiplier::fold_mul::FoldMul`]) alone at full width in
//! Verilator: both slots multiplying, each result read in the cycle its `done` shows.

use crate::{BuildOptions, Model, ModelSpec, PortId, Result, SimError};
use ecrt_golden::hw::FoldShape;
use ecrt_hdl::emit::emit_fold_mul;

struct Ports {
    start: PortId,
    phase: PortId,
    done: PortId,
    a_in: [Vec<PortId>; 2],
    b_in: [Vec<PortId>; 2],
    m_hat: [Vec<PortId>; 2],
    result: Vec<PortId>,
}

/// One slot's multiplication: its result's limbs and the cycles from the clock edge that took
/// `start` to the cycle in which `done` showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Product {
    /// The normalized limbs of the result.
    pub limbs: Vec<u64>,
    /// Cycles from start to done.
    pub cycles: u64,
}

/// A Verilator model of the folding multiplier of one shape.
pub struct FoldMulSim {
    model: Model,
    ports: Ports,
    shape: FoldShape,
}

impl FoldMulSim {
    /// Emits the multiplier of `shape` and builds (or loads from the cache) its Verilator model.
    pub fn build(shape: &FoldShape, options: &BuildOptions) -> Result<Self> {
        let spec = ModelSpec::from_verilog(emit_fold_mul(shape), "top")?;
        let model = Model::build(&spec, options)?;
        let ids = |prefix: &str, count: usize| -> Result<Vec<PortId>> {
            (0..count).map(|j| model.port_id(&format!("{prefix}${j}"))).collect()
        };
        let (operands, modulus) = (shape.operand_limbs, shape.modulus_limbs);
        let ports = Ports {
            start: model.port_id("start")?,
            phase: model.port_id("phase")?,
            done: model.port_id("done")?,
            a_in: [ids("a_in0", operands)?, ids("a_in1", operands)?],
            b_in: [ids("b_in0", operands)?, ids("b_in1", operands)?],
            m_hat: [ids("m_hat0", modulus)?, ids("m_hat1", modulus)?],
            result: ids("result", operands)?,
        };
        Ok(FoldMulSim { model, ports, shape: *shape })
    }

    /// The multiplier's shape.
    pub fn shape(&self) -> &FoldShape {
        &self.shape
    }

    /// Sets slot `slot`'s M̂ (exact limbs, as many as the shape's modulus has).
    pub fn set_m_hat(&mut self, slot: usize, limbs: &[u64]) -> Result<()> {
        for (&port, &limb) in self.ports.m_hat[slot].iter().zip(limbs) {
            self.model.set_u64(port, limb)?;
        }
        Ok(())
    }

    /// Runs one multiplication per given slot, both started as soon as their phase comes, and
    /// returns each slot's product (`None` for a slot given no operands).
    pub fn multiply(&mut self, operands: [Option<(&[u64], &[u64])>; 2]) -> Result<[Option<Product>; 2]> {
        let max_cycles = 4 * self.shape.fold_cycles() as u64 + 8;
        let mut started: [Option<u64>; 2] = [None, None];
        let mut products: [Option<Product>; 2] = [None, None];
        for cycle in 0..max_cycles {
            let phase = usize::from(self.model.get_bool(self.ports.phase)?);
            if let (true, Some(at)) = (self.model.get_bool(self.ports.done)?, started[phase]) {
                if products[phase].is_none() {
                    let limbs = self.ports.result.iter().map(|&p| self.model.get_u64(p)).collect::<Result<_>>()?;
                    products[phase] = Some(Product { limbs, cycles: cycle - at });
                }
            }
            let start = started[phase].is_none() && operands[phase].is_some();
            if let (true, Some((a, b))) = (start, operands[phase]) {
                for (&port, &limb) in self.ports.a_in[phase].iter().zip(a) {
                    self.model.set_u64(port, limb)?;
                }
                for (&port, &limb) in self.ports.b_in[phase].iter().zip(b) {
                    self.model.set_u64(port, limb)?;
                }
                started[phase] = Some(cycle);
            }
            self.model.set_bool(self.ports.start, start)?;
            if (0..2).all(|s| operands[s].is_none() || products[s].is_some()) {
                return Ok(products);
            }
            self.model.tick()?;
        }
        Err(SimError::Spec(format!("no result after {max_cycles} cycles")))
    }
}
