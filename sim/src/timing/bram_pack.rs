//! Block RAM output registers packed as Vivado's synthesis packs them.
//!
//! A 7-series block RAM has an optional register on its read data (`DOA_REG`/`DOB_REG`): its
//! clock-to-out is then 0.88 ns instead of 2.45 ns (the cell library's two arcs). Vivado's
//! synthesis moves a flip-flop that a block RAM's read data feeds into that register; Yosys 0.23
//! does not, so its netlist times the read at 2.45 ns into a separate flip-flop. [`pack`] does what
//! Vivado does, on the synthesized netlist (`write_json`), where it can without changing what the
//! design computes:
//! - every read-data bit of the RAM that reaches anything reaches exactly one `FDRE` or `FDSE`, at
//!   its `D`, and nothing else (no other cell, no module port);
//! - those flip-flops, the RAM's two clocks among them, share one clock net, none inverted, and
//!   share one clock-enable net and one reset net (the register's `REGCE` and `RSTREG`, one each
//!   per port);
//! - neither output register is in use yet, and no cascade or ECC output of a `RAMB36E1` is.
//!
//! A packed RAM becomes a `RAMB18E1_DO_REG` or `RAMB36E1_DO_REG` (`bram_arcs.v`: the library's
//! ports and setup times, clock-to-out 882 ps), its read data drives the flip-flops' loads, the
//! flip-flops are gone and their enable and reset drive both ports' `REGCE` and `RSTREG`. `sta`
//! ignores the conditions of the library's two clock-to-out arcs, so the parameter alone would
//! not do; the packed cells carry no parameters (the arcs need none). A RAM any of whose
//! read-data bits fails the rules keeps its type and its 2.45 ns.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

/// The read-data outputs of each port, the cell types packed and what they become.
const READ_DATA: [[&str; 2]; 2] = [["DOADO", "DOPADOP"], ["DOBDO", "DOPBDOP"]];
const PACKED: [(&str, &str); 2] = [("RAMB18E1", "RAMB18E1_DO_REG"), ("RAMB36E1", "RAMB36E1_DO_REG")];
/// Outputs of a `RAMB36E1` that must be unused: the register would delay them too.
const OTHER_OUTPUTS: [&str; 6] = ["CASCADEOUTA", "CASCADEOUTB", "ECCPARITY", "RDADDRECC", "SBITERR", "DBITERR"];

/// One input pin of a cell: the cell's name and the port.
type Pin = (String, String);

/// Packs the output registers of the block RAMs of module `top` in a Yosys JSON netlist; returns
/// how many RAMs it packed. A netlist it cannot read is an error; a RAM it cannot pack is not.
pub(crate) fn pack(netlist: &mut Value, top: &str) -> Result<usize, String> {
    let module = netlist
        .pointer_mut(&format!("/modules/{}", top.replace('~', "~0").replace('/', "~1")))
        .and_then(Value::as_object_mut)
        .ok_or_else(|| format!("the netlist has no module `{top}`"))?;
    let port_bits: HashSet<u64> = module
        .get("ports")
        .and_then(Value::as_object)
        .map(|ports| ports.values().flat_map(|p| bits(p.get("bits"))).collect())
        .unwrap_or_default();
    let cells = module.get_mut("cells").and_then(Value::as_object_mut).ok_or("the module has no cells")?;
    let loads = loads(cells);
    let plans: Vec<(String, Plan)> = cells
        .iter()
        .filter(|(_, c)| PACKED.iter().any(|(from, _)| cell_type(c) == *from))
        .filter_map(|(name, ram)| plan(ram, cells, &loads, &port_bits).map(|p| (name.clone(), p)))
        .collect();
    for (name, plan) in &plans {
        apply(cells, name, plan);
    }
    Ok(plans.len())
}

/// What packing one RAM changes: each read-data bit's new net, the flip-flops removed, and the
/// enable and reset its registers take.
struct Plan {
    /// (port, bit index, the flip-flop's Q net).
    outputs: Vec<(&'static str, usize, Value)>,
    flip_flops: Vec<String>,
    enable: Value,
    reset: Value,
}

/// The packing of `ram`, if the rules of the module docs allow it (`port_bits`: the bits the
/// module's ports carry, which a packed read must not reach).
fn plan(
    ram: &Value,
    cells: &Map<String, Value>,
    loads: &HashMap<u64, Vec<Pin>>,
    port_bits: &HashSet<u64>,
) -> Option<Plan> {
    let used = |b: u64| loads.contains_key(&b) || port_bits.contains(&b);
    if [param(ram, "DOA_REG"), param(ram, "DOB_REG")].iter().any(|v| *v != Some(0))
        || ["IS_CLKARDCLK_INVERTED", "IS_CLKBWRCLK_INVERTED"].iter().any(|p| param(ram, p).unwrap_or(0) != 0)
        || OTHER_OUTPUTS.iter().any(|p| bits(connection(ram, p)).any(used))
    {
        return None;
    }
    let clock = single(connection(ram, "CLKARDCLK"))?;
    if single(connection(ram, "CLKBWRCLK"))? != clock {
        return None;
    }
    let (mut outputs, mut flip_flops, mut enable, mut reset) = (Vec::new(), Vec::new(), None, None);
    for port in READ_DATA.iter().flatten() {
        for (i, bit) in connection(ram, port).and_then(Value::as_array).into_iter().flatten().enumerate() {
            let Some(b) = bit.as_u64().filter(|&b| used(b)) else { continue };
            if port_bits.contains(&b) {
                return None;
            }
            let [(ff_name, pin)] = loads.get(&b)?.as_slice() else { return None };
            let ff = &cells[ff_name];
            let reset_pin = match cell_type(ff) {
                "FDRE" => "R",
                "FDSE" => "S",
                _ => return None,
            };
            let inverted = ["IS_C_INVERTED", "IS_D_INVERTED", "IS_R_INVERTED", "IS_S_INVERTED"];
            if pin != "D"
                || single(connection(ff, "C"))? != clock
                || inverted.iter().any(|p| param(ff, p).unwrap_or(0) != 0)
            {
                return None;
            }
            let (ce, r) = (connection(ff, "CE")?.clone(), connection(ff, reset_pin)?.clone());
            if *enable.get_or_insert_with(|| ce.clone()) != ce || *reset.get_or_insert_with(|| r.clone()) != r {
                return None;
            }
            outputs.push((*port, i, connection(ff, "Q")?.get(0)?.clone()));
            flip_flops.push(ff_name.clone());
        }
    }
    Some(Plan { outputs, flip_flops, enable: enable?, reset: reset? })
}

fn apply(cells: &mut Map<String, Value>, name: &str, plan: &Plan) {
    for ff in &plan.flip_flops {
        cells.remove(ff);
    }
    let ram = cells.get_mut(name).and_then(Value::as_object_mut).expect("planned from this cell");
    let packed = PACKED.iter().find(|(from, _)| ram["type"] == *from).expect("a block RAM").1;
    ram.insert("type".into(), packed.into());
    ram.insert("parameters".into(), Value::Object(Map::new()));
    let connections = ram.get_mut("connections").and_then(Value::as_object_mut).expect("planned from its connections");
    for (port, i, net) in &plan.outputs {
        connections[*port][*i] = net.clone();
    }
    for port in ["REGCEAREGCE", "REGCEB"] {
        connections.insert(port.into(), plan.enable.clone());
    }
    for port in ["RSTREGARSTREG", "RSTREGB"] {
        connections.insert(port.into(), plan.reset.clone());
    }
}

/// Every net bit that a cell input reads, with the cell pins it reaches.
fn loads(cells: &Map<String, Value>) -> HashMap<u64, Vec<Pin>> {
    let mut loads: HashMap<u64, Vec<Pin>> = HashMap::new();
    for (name, cell) in cells {
        let directions = cell.get("port_directions").and_then(Value::as_object);
        for (port, net) in cell.get("connections").and_then(Value::as_object).into_iter().flatten() {
            if directions.and_then(|d| d.get(port)).and_then(Value::as_str) != Some("input") {
                continue;
            }
            for b in bits(Some(net)) {
                loads.entry(b).or_default().push((name.clone(), port.clone()));
            }
        }
    }
    loads
}

fn cell_type(cell: &Value) -> &str {
    cell.get("type").and_then(Value::as_str).unwrap_or("")
}

fn connection<'a>(cell: &'a Value, port: &str) -> Option<&'a Value> {
    cell.get("connections")?.get(port)
}

/// The net bits of a connection (constants left out).
fn bits(net: Option<&Value>) -> impl Iterator<Item = u64> + '_ {
    net.and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_u64)
}

/// The one bit of a one-bit connection to a net (not a constant).
fn single(net: Option<&Value>) -> Option<u64> {
    match net?.as_array()?.as_slice() {
        [bit] => bit.as_u64(),
        _ => None,
    }
}

/// A parameter's value: Yosys writes them as binary strings (or, for some, numbers); `x` bits
/// read as 0.
fn param(cell: &Value, name: &str) -> Option<u64> {
    match cell.get("parameters")?.get(name)? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => u64::from_str_radix(&s.replace(['x', 'z'], "0"), 2).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A RAMB18E1 whose port B reads two bits into two flip-flops (enable 10, reset "0"), its port
    /// A's read data unused; `extra` loads one of the read bits elsewhere when set.
    fn netlist(ff_type: &str, second_ce: Value, extra: bool) -> Value {
        let ff = |d: u64, q: u64, ce: Value| {
            json!({ "type": ff_type, "parameters": { "INIT": "0" },
                    "port_directions": { "C": "input", "CE": "input", "D": "input", "R": "input", "S": "input", "Q": "output" },
                    "connections": { "C": [2], "CE": ce, "D": [d], "R": ["0"], "S": ["0"], "Q": [q] } })
        };
        let mut cells = json!({
            "ram": { "type": "RAMB18E1",
                     "parameters": { "DOA_REG": "00000000000000000000000000000000", "DOB_REG": "0" },
                     "port_directions": { "CLKARDCLK": "input", "CLKBWRCLK": "input", "DOADO": "output", "DOBDO": "output",
                                          "REGCEB": "input", "RSTREGB": "input" },
                     "connections": { "CLKARDCLK": [2], "CLKBWRCLK": [2], "DOADO": [30, 31], "DOBDO": [20, 21],
                                      "REGCEB": ["0"], "RSTREGB": ["0"] } },
            "ff0": ff(20, 40, json!([10])),
            "ff1": ff(21, 41, second_ce),
            "lut": { "type": "LUT2", "port_directions": { "I0": "input", "I1": "input", "O": "output" },
                     "connections": { "I0": [40], "I1": [if extra { 21 } else { 41 }], "O": [50] } }
        });
        cells["lut"]["parameters"] = json!({});
        json!({ "modules": { "top": { "ports": { "clock": { "direction": "input", "bits": [2] } }, "cells": cells } } })
    }

    #[test]
    fn packs_a_register_that_only_reads_the_ram() {
        let mut n = netlist("FDRE", json!([10]), false);
        assert_eq!(pack(&mut n, "top"), Ok(1));
        let cells = &n["modules"]["top"]["cells"];
        assert!(cells.get("ff0").is_none() && cells.get("ff1").is_none());
        let ram = &cells["ram"];
        assert_eq!(ram["type"], "RAMB18E1_DO_REG");
        assert_eq!(ram["connections"]["DOBDO"], json!([40, 41]));
        assert_eq!(ram["connections"]["DOADO"], json!([30, 31]), "unused read data stays");
        assert_eq!(ram["connections"]["REGCEB"], json!([10]));
        assert_eq!(ram["connections"]["RSTREGARSTREG"], json!(["0"]));
        assert_eq!(ram["parameters"], json!({}));
    }

    #[test]
    fn leaves_a_ram_whose_register_cannot_move_into_it() {
        for mut n in [
            netlist("FDRE", json!([11]), false), // two enables
            netlist("FDRE", json!([10]), true),  // a read bit also reaches a LUT
            netlist("FDCE", json!([10]), false), // an asynchronous clear
        ] {
            let before = n.clone();
            assert_eq!(pack(&mut n, "top"), Ok(0));
            assert_eq!(n, before);
        }
        let mut n = netlist("FDRE", json!([10]), false);
        n["modules"]["top"]["cells"]["ff1"]["connections"]["C"] = json!([3]);
        assert_eq!(pack(&mut n, "top"), Ok(0), "another clock");
        for (bit, why) in [(21, "a read bit also leaves the module"), (30, "the unused port's read bit leaves it")] {
            let mut n = netlist("FDRE", json!([10]), false);
            n["modules"]["top"]["ports"]["out"] = json!({ "direction": "output", "bits": [bit] });
            assert_eq!(pack(&mut n, "top"), Ok(0), "{why}");
        }
        assert!(pack(&mut n, "other").is_err());
    }
}
