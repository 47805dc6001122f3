//! The fanout of a design composed from the netlists of the hierarchical estimate's units, with
//! no Yosys run of its own.
//!
//! Each unit (a distinct module with its flip-flop and memory wrappers inlined, its other children
//! black boxes: see [`crate::estimate::hierarchical`]) is synthesized once; its netlist says which
//! nets each of its cells reads (clock pins apart) and drives, which nets enter which input pins of
//! which black-box instances, and which are the unit's own ports. [`UnitNets`] keeps just that, in
//! the unit's cache entry. The loads of a net in the flat design are then composed over the
//! instance tree:
//! - **what survives**: a flat run's `opt_clean` removes logic whose outputs nothing reads, and a
//!   unit, synthesized out of context, keeps all of it for its ports. So first the cells that feed
//!   something are found, backwards from the top's outputs and from `keep` cells, across
//!   boundaries (an output of a module type is used when some instance's parent uses it, an input
//!   when something used inside reads it), to a fixed point. Without it the multiplier's phase
//!   register, which selects the T limbs it shows on outputs only its tests read, had 742 loads at
//!   512 bits instead of the flat run's 50.
//! - **down**, per module type, bottom-up: each input port bit of a unit reaches the surviving
//!   loads of its net inside the unit and, recursively, inside its black boxes (a module type's
//!   figure is the same in all its copies). A port that a unit passes straight to one of its
//!   outputs joins, in the parent, the net on that output: the two are one net in the flat design.
//! - **up**, per instance, top-down: a net that reaches an output port of its unit reaches the
//!   loads of the net it is in the parent (other children's inputs included), and further up
//!   when that net leaves the parent too. Each parent net counts once, however many of the
//!   unit's outputs it takes.
//!
//! A net's loads are both, summed, and it is classified as the flat run classifies it: by the
//! primitive that drives it (sequential cells ranked, logic apart), left out when it reaches a
//! clock pin at any level, constants never counted. Its name is the instance path and its best
//! name in its unit, or in a unit above it when that name is better by `better_name` (rust-hdl's
//! register outputs `….q` first, then the shortest), as the flat netlist's aliases would give;
//! its driver is the instance path and the cell's name in its unit.
//!
//! What it loses against a flat run of the whole design (`EstimateMethod::Flat`), as the
//! hierarchical resource estimate does: optimisation across boundaries. A constant an instance
//! receives is not propagated into it, so a select that is constant in one copy still has its
//! loads there; what survives is decided per module type, so logic one copy uses and another
//! ignores is kept in both; ABC maps each unit on its own, so a decoder it copies into every LUT
//! after it in one big run may stay one LUT here (its register's loads then being the LUT's),
//! or the other way round, and a register's pins among the multiplexers it selects come out a
//! little differently; and the units run plain `synth_xilinx`, where the flat fanout run stops the
//! fine stage's flip-flop optimisation after one round (see the parent module), so constant
//! flip-flops down a chain are removed here with their loads. Measured on the accelerator (docs/
//! architecture.md, "Fanout"): the same registers lead both lists, within a few loads, but the
//! phase register (40 composed, 50 flat at 512 bits); the logic-driven nets differ more, as ABC
//! maps the decoders behind them differently in each run. The `estimate_methods` tests hold the
//! composition to the flat run at 512 and 2048 bits; a test holds it to the flat count exactly on
//! a small hierarchy where nothing crosses a boundary.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use serde::de::{DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use super::{better_name, is_clock_pin, is_sequential, Bit, FanoutReport, NetFanout};
use crate::error::{Result, SimError};
use crate::hierarchy::Dedup;

/// A port's bits as the unit connects them: a net per bit, bit 0 first, `None` for a constant.
type Pins = Vec<Option<u32>>;

/// What a unit's netlist says of its nets: all the composition needs, kept in the unit's cache
/// entry instead of the netlist itself (a fraction of its size). Nets are numbered densely.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct UnitNets {
    /// How many nets.
    nets: u32,
    /// Per net: its best public name in the unit (by `better_name`), empty when it has none.
    names: Vec<String>,
    /// The unit's own cells (the black boxes apart).
    cells: Vec<UnitCell>,
    /// The unit's input ports by name.
    inputs: BTreeMap<String, Pins>,
    /// The unit's output ports by name.
    outputs: BTreeMap<String, Pins>,
    /// The black-box instances, by instance name: how the unit connects their ports.
    boxes: BTreeMap<String, BoxPins>,
}

/// One of a unit's cells: what it reads and drives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct UnitCell {
    name: String,
    cell_type: String,
    /// Marked `keep`: Yosys keeps it even when nothing reads it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    keep: bool,
    /// The net on each input pin but the clocks (a net on two pins twice).
    inputs: Vec<u32>,
    /// The nets on its clock pins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    clocks: Vec<u32>,
    /// Each output pin (with its index when the pin is a bus: `P[3]`) and its net.
    outputs: Vec<(String, u32)>,
}

/// A black-box instance's ports, as its unit connects them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct BoxPins {
    inputs: BTreeMap<String, Pins>,
    outputs: BTreeMap<String, Pins>,
}

#[derive(Deserialize)]
struct JsonPort {
    direction: String,
    bits: Vec<Bit>,
}

#[derive(Deserialize)]
struct JsonCell {
    #[serde(rename = "type")]
    cell_type: String,
    #[serde(default)]
    attributes: BTreeMap<String, IgnoredAny>,
    #[serde(default)]
    port_directions: HashMap<String, String>,
    #[serde(default)]
    connections: BTreeMap<String, Vec<Bit>>,
}

#[derive(Deserialize)]
struct JsonModule {
    #[serde(default)]
    ports: BTreeMap<String, JsonPort>,
    #[serde(default)]
    cells: BTreeMap<String, JsonCell>,
    #[serde(default)]
    netnames: BTreeMap<String, super::NetName>,
}

/// Reads module `top` of a `write_json` netlist, the black boxes (instances of `blackboxes`) kept
/// apart from the unit's own cells.
pub(crate) fn parse_unit_netlist(
    reader: impl std::io::Read,
    top: &str,
    blackboxes: &BTreeSet<String>,
) -> Result<UnitNets> {
    let err = |m: String| SimError::Report { tool: "yosys write_json", message: m };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let module: Option<JsonModule> = OneModule::new(top).deserialize(&mut de).map_err(|e| err(e.to_string()))?;
    let module = module.ok_or_else(|| err(format!("no module `{top}` in the netlist")))?;
    let mut u = UnitNets::default();
    let mut ids: HashMap<u64, u32> = HashMap::new();
    let mut id = |u: &mut UnitNets, b: &Bit| -> Option<u32> {
        let b = b.0?;
        Some(*ids.entry(b).or_insert_with(|| {
            u.names.push(String::new());
            u.nets += 1;
            u.nets - 1
        }))
    };
    for (name, port) in &module.ports {
        let pins: Pins = port.bits.iter().map(|b| id(&mut u, b)).collect();
        // An inout port (none in the accelerator) is left out: what crosses it is not composed.
        match port.direction.as_str() {
            "input" => u.inputs.insert(name.clone(), pins),
            "output" => u.outputs.insert(name.clone(), pins),
            _ => None,
        };
    }
    for (name, cell) in &module.cells {
        let is_box = blackboxes.contains(cell.cell_type.trim_start_matches('\\'));
        let mut pins = BoxPins::default();
        let mut own = UnitCell {
            name: name.clone(),
            cell_type: cell.cell_type.clone(),
            keep: cell.attributes.contains_key("keep"),
            inputs: Vec::new(),
            clocks: Vec::new(),
            outputs: Vec::new(),
        };
        for (pin, bits) in &cell.connections {
            let dir = cell.port_directions.get(pin).map(String::as_str);
            let nets: Pins = bits.iter().map(|b| id(&mut u, b)).collect();
            match (dir, is_box) {
                (Some("input"), true) => {
                    pins.inputs.insert(pin.clone(), nets);
                }
                (Some("output"), true) => {
                    pins.outputs.insert(pin.clone(), nets);
                }
                (Some("input"), false) => {
                    let to = if is_clock_pin(pin) { &mut own.clocks } else { &mut own.inputs };
                    to.extend(nets.into_iter().flatten());
                }
                (Some("output"), false) => {
                    let bus = nets.len() > 1;
                    for (i, n) in nets.into_iter().enumerate() {
                        let Some(net) = n else { continue };
                        own.outputs.push((if bus { format!("{pin}[{i}]") } else { pin.clone() }, net));
                    }
                }
                _ => {}
            }
        }
        if is_box {
            u.boxes.insert(name.clone(), pins);
        } else {
            u.cells.push(own);
        }
    }
    for (name, net) in &module.netnames {
        if net.hide_name != 0 {
            continue;
        }
        let width = net.bits.len();
        for (i, b) in net.bits.iter().enumerate() {
            let Some(n) = id(&mut u, b) else { continue };
            let index = if net.upto != 0 { net.offset + (width - 1 - i) as i64 } else { net.offset + i as i64 };
            let full = if width > 1 || net.offset != 0 { format!("{name}[{index}]") } else { name.clone() };
            let old = &mut u.names[n as usize];
            if old.is_empty() || better_name(&full, old) {
                *old = full;
            }
        }
    }
    Ok(u)
}

/// `{ "modules": { name: module, … } }`: only `top` is read, as `T`.
struct OneModule<'a, T> {
    top: &'a str,
    _t: std::marker::PhantomData<T>,
}

impl<'a, T> OneModule<'a, T> {
    fn new(top: &'a str) -> Self {
        OneModule { top, _t: std::marker::PhantomData }
    }
}

impl<'de, T: DeserializeOwned> DeserializeSeed<'de> for OneModule<'_, T> {
    type Value = Option<T>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, T: DeserializeOwned> Visitor<'de> for OneModule<'_, T> {
    type Value = Option<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Yosys JSON netlist")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "modules" {
                found = map.next_value_seed(Modules::<T> { top: self.top, _t: std::marker::PhantomData })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

struct Modules<'a, T> {
    top: &'a str,
    _t: std::marker::PhantomData<T>,
}

impl<'de, T: DeserializeOwned> DeserializeSeed<'de> for Modules<'_, T> {
    type Value = Option<T>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, T: DeserializeOwned> Visitor<'de> for Modules<'_, T> {
    type Value = Option<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map of modules")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == self.top {
                found = Some(map.next_value::<T>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// Where an input port bit of a module type leads, inside it and below.
#[derive(Debug, Clone, Default)]
struct Reach {
    loads: u64,
    clock: bool,
    /// The module's own output port bits on the same net (a port passed straight through).
    outputs: Vec<(String, usize)>,
}

/// A port bit: the port's name and the bit's index.
type PortBit = (String, usize);

/// A module type's unit and what the composition derives from it.
struct Summary<'a> {
    nets: &'a UnitNets,
    /// Black-box instance name → the module type (index into the summaries).
    children: HashMap<String, usize>,
    /// Which cells survive once the logic behind outputs no instance uses is gone.
    live: Vec<bool>,
    /// Net → class: nets a black box joins (input passed to an output) are one class.
    class: Vec<u32>,
    /// Per class: loads in the unit and below it.
    total: Vec<u64>,
    /// Per class: whether it reaches a clock pin in the unit or below.
    clock: Vec<bool>,
    /// Per class: the member net with the best name, if any has one.
    name: Vec<Option<u32>>,
    /// Per class that reaches the unit's outputs: those output bits.
    outputs: HashMap<u32, Vec<PortBit>>,
    /// Per input port bit: where it leads.
    reach: BTreeMap<String, Vec<Option<Reach>>>,
}

fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let p = parent[x as usize];
        parent[x as usize] = parent[p as usize];
        x = p;
    }
    x
}

/// One copy of a unit in the instance tree.
struct Instance {
    module: usize,
    /// Dotted instance path from the top ("" for the top).
    path: String,
    /// The parent instance and this instance's name in it.
    parent: Option<(usize, String)>,
    /// Per class of the module that reaches its outputs: loads above the instance, and whether
    /// they include a clock pin.
    up: HashMap<u32, (u64, bool)>,
}

/// A driven net of one instance, before it is named.
#[derive(Clone, Copy)]
struct Candidate {
    loads: u64,
    instance: u32,
    cell: u32,
    output: u32,
}

/// What drives each net of a unit, for the liveness pass.
enum Source {
    Cell(u32),
    Input(PortBit),
    Box(String, PortBit),
}

/// Which cells of each unit survive when logic that feeds nothing is removed, as a flat run's
/// `opt_clean` would: outputs of a unit are used when some instance's parent uses them (so a
/// test-only output no parent reads goes, with the logic behind it), an input when something
/// live inside reads it. A fixed point over the hierarchy: parents before children in each
/// round, until nothing changes. Per module type, not per instance: logic one copy uses and
/// another ignores is kept in both.
fn liveness(top: usize, units: &[(&UnitNets, HashMap<String, usize>)]) -> Vec<Vec<bool>> {
    let sources: Vec<Vec<Vec<Source>>> = units
        .iter()
        .map(|(u, _)| {
            let mut src: Vec<Vec<Source>> = (0..u.nets).map(|_| Vec::new()).collect();
            for (c, cell) in u.cells.iter().enumerate() {
                for (_, n) in &cell.outputs {
                    src[*n as usize].push(Source::Cell(c as u32));
                }
            }
            for (port, bits) in &u.inputs {
                for (i, n) in bits.iter().enumerate() {
                    if let Some(n) = n {
                        src[*n as usize].push(Source::Input((port.clone(), i)));
                    }
                }
            }
            for (b, pins) in &u.boxes {
                for (port, bits) in &pins.outputs {
                    for (i, n) in bits.iter().enumerate() {
                        if let Some(n) = n {
                            src[*n as usize].push(Source::Box(b.clone(), (port.clone(), i)));
                        }
                    }
                }
            }
            src
        })
        .collect();
    let mut live_out: Vec<BTreeSet<PortBit>> = vec![BTreeSet::new(); units.len()];
    live_out[top] = units[top].0.outputs.iter().flat_map(|(p, bits)| (0..bits.len()).map(|i| (p.clone(), i))).collect();
    let mut live_in: Vec<BTreeSet<PortBit>> = vec![BTreeSet::new(); units.len()];
    let mut live: Vec<Vec<bool>> = units.iter().map(|(u, _)| vec![false; u.cells.len()]).collect();
    loop {
        let mut changed = false;
        // `units` is in parents-first order.
        for t in 0..units.len() {
            let (u, children) = &units[t];
            let mut used = vec![false; u.nets as usize];
            let mut work: Vec<u32> = Vec::new();
            let mark = |n: u32, used: &mut Vec<bool>, work: &mut Vec<u32>| {
                if !used[n as usize] {
                    used[n as usize] = true;
                    work.push(n);
                }
            };
            for (port, i) in &live_out[t] {
                if let Some(Some(n)) = u.outputs.get(port).and_then(|b| b.get(*i)) {
                    mark(*n, &mut used, &mut work);
                }
            }
            for (b, pins) in &u.boxes {
                let child = &live_in[children[b]];
                for (port, bits) in &pins.inputs {
                    for (i, n) in bits.iter().enumerate() {
                        if let Some(n) = n.filter(|_| child.contains(&(port.clone(), i))) {
                            mark(n, &mut used, &mut work);
                        }
                    }
                }
            }
            let cells_live = &mut live[t];
            let grow = |c: usize, used: &mut Vec<bool>, work: &mut Vec<u32>, cells_live: &mut Vec<bool>| {
                if !cells_live[c] {
                    cells_live[c] = true;
                    for &n in u.cells[c].inputs.iter().chain(&u.cells[c].clocks) {
                        mark(n, used, work);
                    }
                }
            };
            for (c, cell) in u.cells.iter().enumerate() {
                if cell.keep {
                    grow(c, &mut used, &mut work, cells_live);
                }
            }
            while let Some(n) = work.pop() {
                for s in &sources[t][n as usize] {
                    match s {
                        Source::Cell(c) => grow(*c as usize, &mut used, &mut work, cells_live),
                        Source::Input(bit) => changed |= live_in[t].insert(bit.clone()),
                        Source::Box(b, bit) => changed |= live_out[children[b]].insert(bit.clone()),
                    }
                }
            }
        }
        if !changed {
            return live;
        }
    }
}

/// The fanout of `dedup`'s design from its units' nets (`units`: each unit's module, by canonical
/// name, and its nets), the `n` highest nets of each kind.
pub(crate) fn compose(dedup: &Dedup, units: &[(&str, &UnitNets)], n: usize, tool: &str) -> Result<FanoutReport> {
    let err = |m: String| SimError::Report { tool: "fanout composition", message: m };
    let nets_of: HashMap<&str, &UnitNets> = units.iter().copied().collect();
    let order: Vec<&str> =
        dedup.parents_first().into_iter().filter_map(|m| nets_of.get_key_value(m.as_str()).map(|(k, _)| *k)).collect();
    let index: HashMap<&str, usize> = order.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let top = *index.get(dedup.top.as_str()).ok_or_else(|| err("the top module has no unit".into()))?;
    let mut typed = Vec::with_capacity(order.len());
    for &module in &order {
        let nets = nets_of[module];
        let canon = dedup.modules.get(module).ok_or_else(|| err(format!("no module `{module}` in the design")))?;
        let mut children = HashMap::new();
        for name in nets.boxes.keys() {
            let k = canon
                .instance_names
                .iter()
                .position(|x| x == name)
                .ok_or_else(|| err(format!("black box `{name}` of `{module}` is not one of its instances")))?;
            let child = canon.children[k].as_str();
            let &c = index.get(child).ok_or_else(|| err(format!("instance `{name}` of `{module}` has no unit")))?;
            children.insert(name.clone(), c);
        }
        typed.push((nets, children));
    }
    let mut live = liveness(top, &typed);
    let mut summaries: Vec<Option<Summary>> = (0..order.len()).map(|_| None).collect();
    // Bottom-up: every module after its children.
    for (i, (nets, children)) in typed.into_iter().enumerate().rev() {
        let module = order[i];
        let child_reach = |name: &str, port: &str, bit: usize| -> Result<Option<&Reach>> {
            let s = summaries[children[name]].as_ref().expect("children summarized first");
            let bits = s.reach.get(port).ok_or_else(|| {
                err(format!("instance `{name}` of `{module}` has an input `{port}` its module does not have"))
            })?;
            Ok(bits.get(bit).and_then(Option::as_ref))
        };
        let cells_live = std::mem::take(&mut live[i]);
        // Join the nets a black box passes from an input to an output.
        let count = nets.nets as usize;
        let mut parent: Vec<u32> = (0..count as u32).collect();
        for (name, pins) in &nets.boxes {
            for (port, bits) in &pins.inputs {
                for (bit, net) in bits.iter().enumerate() {
                    let (Some(net), Some(reach)) = (net, child_reach(name, port, bit)?) else { continue };
                    for (o, j) in &reach.outputs {
                        if let Some(Some(other)) = pins.outputs.get(o).and_then(|b| b.get(*j)) {
                            let (a, b) = (find(&mut parent, *net), find(&mut parent, *other));
                            parent[a as usize] = b;
                        }
                    }
                }
            }
        }
        let mut class = vec![0u32; count];
        let mut ids: HashMap<u32, u32> = HashMap::new();
        for net in 0..count as u32 {
            let root = find(&mut parent, net);
            let next = ids.len() as u32;
            class[net as usize] = *ids.entry(root).or_insert(next);
        }
        let classes = ids.len();
        let mut total = vec![0u64; classes];
        let mut clock = vec![false; classes];
        let mut name: Vec<Option<u32>> = vec![None; classes];
        for (cell, _) in nets.cells.iter().zip(&cells_live).filter(|(_, l)| **l) {
            for &n in &cell.inputs {
                total[class[n as usize] as usize] += 1;
            }
            for &n in &cell.clocks {
                clock[class[n as usize] as usize] = true;
            }
        }
        for (net, (own, &c)) in nets.names.iter().zip(&class).enumerate() {
            let c = c as usize;
            if !own.is_empty() && name[c].is_none_or(|old| better_name(own, &nets.names[old as usize])) {
                name[c] = Some(net as u32);
            }
        }
        for (name, pins) in &nets.boxes {
            for (port, bits) in &pins.inputs {
                for (bit, net) in bits.iter().enumerate() {
                    let (Some(net), Some(reach)) = (net, child_reach(name, port, bit)?) else { continue };
                    let c = class[*net as usize] as usize;
                    total[c] += reach.loads;
                    clock[c] |= reach.clock;
                }
            }
        }
        let mut outputs: HashMap<u32, Vec<PortBit>> = HashMap::new();
        for (port, bits) in &nets.outputs {
            for (bit, net) in bits.iter().enumerate() {
                if let Some(net) = net {
                    outputs.entry(class[*net as usize]).or_default().push((port.clone(), bit));
                }
            }
        }
        let reach = nets
            .inputs
            .iter()
            .map(|(port, bits)| {
                let bits = bits
                    .iter()
                    .map(|net| {
                        net.map(|net| {
                            let c = class[net as usize];
                            Reach {
                                loads: total[c as usize],
                                clock: clock[c as usize],
                                outputs: outputs.get(&c).cloned().unwrap_or_default(),
                            }
                        })
                    })
                    .collect();
                (port.clone(), bits)
            })
            .collect();
        summaries[i] = Some(Summary { nets, children, live: cells_live, class, total, clock, name, outputs, reach });
    }
    let summaries: Vec<Summary> = summaries.into_iter().map(|s| s.expect("every module summarized")).collect();

    // Top-down: every instance after its parent.
    let mut instances = vec![Instance { module: top, path: String::new(), parent: None, up: HashMap::new() }];
    let mut next = 0;
    while next < instances.len() {
        let (module, path) = (instances[next].module, instances[next].path.clone());
        let s = &summaries[module];
        let mut children: Vec<(&String, &usize)> = s.children.iter().collect();
        children.sort();
        for (name, &child) in children {
            let pins = &s.nets.boxes[name];
            let mut up = HashMap::new();
            for (&k, outs) in &summaries[child].outputs {
                let mut seen = BTreeSet::new();
                let (mut loads, mut clock) = (0u64, false);
                for (o, j) in outs {
                    let Some(Some(net)) = pins.outputs.get(o).and_then(|b| b.get(*j)) else { continue };
                    let c = s.class[*net as usize];
                    if seen.insert(c) {
                        let (u, uc) = instances[next].up.get(&c).copied().unwrap_or((0, false));
                        loads += s.total[c as usize] + u;
                        clock |= s.clock[c as usize] || uc;
                    }
                }
                up.insert(k, (loads, clock));
            }
            let path = if path.is_empty() { name.clone() } else { format!("{path}.{name}") };
            instances.push(Instance { module: child, path, parent: Some((next, name.clone())), up });
        }
        next += 1;
    }

    let mut sequential = Vec::new();
    let mut logic = Vec::new();
    let mut driven_nets = 0u64;
    for (i, inst) in instances.iter().enumerate() {
        let s = &summaries[inst.module];
        for (c, cell) in s.nets.cells.iter().enumerate().filter(|(c, _)| s.live[*c]) {
            let seq = is_sequential(&cell.cell_type);
            for (o, (_, net)) in cell.outputs.iter().enumerate() {
                let k = s.class[*net as usize];
                let (u, uc) = inst.up.get(&k).copied().unwrap_or((0, false));
                if s.clock[k as usize] || uc {
                    continue;
                }
                let loads = s.total[k as usize] + u;
                if loads > 0 {
                    driven_nets += u64::from(seq);
                    let cand = Candidate { loads, instance: i as u32, cell: c as u32, output: o as u32 };
                    if seq { &mut sequential } else { &mut logic }.push(cand);
                }
            }
        }
    }
    let nets = ranked(&instances, &summaries, sequential, n);
    let logic_nets = ranked(&instances, &summaries, logic, n);
    Ok(FanoutReport { nets, driven_nets, tool: tool.to_owned(), logic_nets })
}

fn prefixed(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// The best name of class `k` of instance `i`: its own, or one of the nets it is in above.
fn alias(instances: &[Instance], summaries: &[Summary], i: usize, k: u32) -> Option<String> {
    let inst = &instances[i];
    let s = &summaries[inst.module];
    let mut best = s.name[k as usize].map(|net| prefixed(&inst.path, &s.nets.names[net as usize]));
    if let (Some((p, box_name)), Some(outs)) = (&inst.parent, s.outputs.get(&k)) {
        let ps = &summaries[instances[*p].module];
        let pins = &ps.nets.boxes[box_name];
        let mut seen = BTreeSet::new();
        for (o, j) in outs {
            let Some(Some(net)) = pins.outputs.get(o).and_then(|b| b.get(*j)) else { continue };
            let c = ps.class[*net as usize];
            if !seen.insert(c) {
                continue;
            }
            if let Some(up) = alias(instances, summaries, *p, c) {
                if best.as_ref().is_none_or(|b| better_name(&up, b)) {
                    best = Some(up);
                }
            }
        }
    }
    best
}

/// The `n` candidates with the most loads, named, ties by name.
fn ranked(instances: &[Instance], summaries: &[Summary], mut all: Vec<Candidate>, n: usize) -> Vec<NetFanout> {
    if n == 0 || all.is_empty() {
        return Vec::new();
    }
    all.sort_unstable_by_key(|c| std::cmp::Reverse(c.loads));
    // Name only what can make the list: every candidate with the n-th highest loads or more.
    let floor = all[(n - 1).min(all.len() - 1)].loads;
    let mut nets: Vec<NetFanout> = all
        .iter()
        .take_while(|c| c.loads >= floor)
        .map(|c| {
            let inst = &instances[c.instance as usize];
            let s = &summaries[inst.module];
            let cell = &s.nets.cells[c.cell as usize];
            let (pin, net) = &cell.outputs[c.output as usize];
            let k = s.class[*net as usize];
            let net = alias(instances, summaries, c.instance as usize, k)
                .unwrap_or_else(|| prefixed(&inst.path, &format!("{}.{pin}", cell.name)));
            NetFanout {
                net,
                driver: prefixed(&inst.path, &cell.name),
                driver_type: cell.cell_type.clone(),
                loads: c.loads,
            }
        })
        .collect();
    nets.sort_by(|a, b| b.loads.cmp(&a.loads).then_with(|| a.net.cmp(&b.net)));
    nets.truncate(n);
    nets
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hierarchy::{Cut, Design, UNIT_TOP};

    /// `top` registers `a` and hands it to `c`, which passes it straight to `o` (the top's `y`)
    /// and loads it three times: twice on one LUT, once on `g`'s D (`g` drives `p`, the top's
    /// `z`). In `c`, `f` clocks `g` (a derived clock: left out). `c`'s output `t` is a LUT of `i`
    /// that the top leaves unconnected: it goes, as in a flat run, and its load with it.
    const VERILOG: &str = "
module top(clock, a, y, z); input wire clock; input wire a; output wire y; output wire z; wire r$q;
  top$r r(.d(a), .q(r$q), .clock(clock)); child c(.clock(clock), .i(r$q), .o(y), .p(z), .t()); endmodule
module top$r(d, q, clock); input wire d; output reg q; input wire clock; always @(posedge clock) q <= d; endmodule
module child(clock, i, o, p, t); input wire clock; input wire i; output wire o; output wire p; output wire t;
  wire f$q; assign o = i; top$r f(.d(i), .q(f$q), .clock(clock)); endmodule
";

    fn netlist(module: &str) -> String {
        format!(r#"{{ "creator": "Yosys 0.23", "modules": {{ "LUT2": {{ "cells": {{}} }}, "ecrt_unit": {module} }} }}"#)
    }

    const TOP: &str = r#"{
      "ports": { "clock": { "direction": "input", "bits": [2] }, "a": { "direction": "input", "bits": [3] },
                 "y": { "direction": "output", "bits": [4] }, "z": { "direction": "output", "bits": [6] } },
      "cells": {
        "$auto$ff.cc:266:slice$7": { "hide_name": 1, "type": "FDRE",
          "port_directions": { "C": "input", "D": "input", "Q": "output" },
          "connections": { "C": [2], "D": [3], "Q": [5] } },
        "c": { "hide_name": 0, "type": "BB",
          "port_directions": { "clock": "input", "i": "input", "o": "output", "p": "output", "t": "output" },
          "connections": { "clock": [2], "i": [5], "o": [4], "p": [6], "t": [9] } } },
      "netnames": { "r$q": { "hide_name": 0, "bits": [5] }, "r.q": { "hide_name": 0, "bits": [5] },
                    "y": { "hide_name": 0, "bits": [4] } } }"#;

    const CHILD: &str = r#"{
      "ports": { "clock": { "direction": "input", "bits": [2] }, "i": { "direction": "input", "bits": [3] },
                 "o": { "direction": "output", "bits": [3] }, "p": { "direction": "output", "bits": [6] },
                 "t": { "direction": "output", "bits": [8] } },
      "cells": {
        "l": { "hide_name": 0, "type": "LUT2", "port_directions": { "I0": "input", "I1": "input", "O": "output" },
          "connections": { "I0": [3], "I1": [3], "O": [4] } },
        "f": { "hide_name": 0, "type": "FDRE", "port_directions": { "C": "input", "D": "input", "Q": "output" },
          "connections": { "C": [2], "D": [4], "Q": [5] } },
        "g": { "hide_name": 0, "type": "FDRE", "port_directions": { "C": "input", "D": "input", "Q": "output" },
          "connections": { "C": [5], "D": [3], "Q": [6, "0"] } },
        "u": { "hide_name": 0, "type": "LUT1", "port_directions": { "I0": "input", "O": "output" },
          "connections": { "I0": [3], "O": [8] } } },
      "netnames": { "i": { "hide_name": 0, "bits": [3] }, "o": { "hide_name": 0, "bits": [3] },
                    "$hidden": { "hide_name": 1, "bits": [4] } } }"#;

    #[test]
    fn composes_loads_down_through_a_passed_port() {
        let dedup = Design::parse(VERILOG).unwrap().dedup("top").unwrap();
        let units = dedup.units(Cut::EveryParent);
        assert_eq!(units.len(), 2);
        let boxes: BTreeSet<String> = ["BB".to_owned()].into();
        let top = parse_unit_netlist(netlist(TOP).as_bytes(), UNIT_TOP, &boxes).unwrap();
        let child = parse_unit_netlist(netlist(CHILD).as_bytes(), UNIT_TOP, &boxes).unwrap();
        assert_eq!(top.boxes.len(), 1);
        assert_eq!(child.cells.iter().map(|c| c.clocks.len()).sum::<usize>(), 2, "clock and f's Q");
        let nets = [(units[0].module.as_str(), &top), (units[1].module.as_str(), &child)];
        let r = compose(&dedup, &nets, 20, "t").unwrap();
        let rows: Vec<(&str, &str, &str, u64)> =
            r.nets.iter().map(|n| (n.net.as_str(), n.driver.as_str(), n.driver_type.as_str(), n.loads)).collect();
        // r.q: the LUT's two pins and g's D, inside c (not u's, unused). f.Q clocks g: left out.
        // g's Q reaches only the top's output: no loads.
        assert_eq!(rows, [("r.q", "$auto$ff.cc:266:slice$7", "FDRE", 3)]);
        assert_eq!(r.driven_nets, 1);
        // The LUT's net has no public name: its cell and pin, under the instance's path.
        let logic: Vec<(&str, u64)> = r.logic_nets.iter().map(|n| (n.net.as_str(), n.loads)).collect();
        assert_eq!(logic, [("c.l.O", 1)]);
        // A unit missing, or a black box the design does not have: errors, not panics.
        assert!(compose(&dedup, &nets[..1], 20, "t").is_err());
        let stray = parse_unit_netlist(netlist(&TOP.replace("\"c\":", "\"d\":")).as_bytes(), UNIT_TOP, &boxes).unwrap();
        assert!(compose(&dedup, &[(nets[0].0, &stray), nets[1]], 20, "t").is_err());
        assert!(parse_unit_netlist(netlist(TOP).as_bytes(), "other", &boxes).is_err());
        assert!(parse_unit_netlist(&b"[1, 2]"[..], UNIT_TOP, &boxes).is_err());
    }
}
