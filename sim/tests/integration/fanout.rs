//! Register fanout from Yosys: real runs on tiny designs, flat and composed from the units of a
//! small hierarchy, and (ignored) the 2048-bit accelerator and delayed-quotient multiplier.

use std::time::Instant;

use ecrt_hdl::config::AcceleratorConfig;
use ecrt_sim::{estimate_with_fanout, fanout, EstimateMethod, EstimateOptions};

/// `en` reaches 100 flip-flops through one LUT2 each (`y[i] <= a[i] ^ en`), `n` three.
const TWO_REGISTERS: &str = "\
module top(clock, en_in, n_in, a, y, z);
    input wire clock;
    input wire en_in;
    input wire n_in;
    input wire [99:0] a;
    output reg [99:0] y;
    output reg [2:0] z;
    reg en;
    reg n;
    always @(posedge clock) begin
        en <= en_in;
        n <= n_in;
        y <= a ^ {100{en}};
        z <= a[2:0] ^ {3{n}};
    end
endmodule
";

#[test]
fn counts_the_loads_of_two_registers() {
    // A cache of its own, so that the second call can be seen to run nothing.
    let cache = tempfile::tempdir().unwrap();
    let opts = EstimateOptions { cache_dir: Some(cache.path().to_path_buf()), ..Default::default() };
    let t = Instant::now();
    let r = fanout(TWO_REGISTERS, "top", &opts).unwrap();
    eprintln!("{r}in {:.1} s", t.elapsed().as_secs_f64());
    let rows: Vec<(&str, &str, u64)> =
        r.nets.iter().map(|n| (n.net.as_str(), n.driver_type.as_str(), n.loads)).collect();
    // y and z drive only the module's outputs: no cell pins.
    assert_eq!(rows, [("en", "FDRE", 100), ("n", "FDRE", 3)]);
    assert_eq!(r.max_fanout(), 100);
    // en and n: y and z, on the outputs alone, have no loads.
    assert_eq!(r.driven_nets, 2);
    assert!(r.tool.contains("Yosys"));
    let stored = crate::common::cache_entries(cache.path());
    assert!(!stored.is_empty(), "the run stored its result");
    assert_eq!(fanout(TWO_REGISTERS, "top", &opts).unwrap(), r);
    assert_eq!(crate::common::cache_entries(cache.path()), stored, "the second call came from the cache");
    assert!(fanout(TWO_REGISTERS, "top; x", &opts).is_err());
}

/// The default configuration's one-core 2048-bit accelerator, composed from its units as `ecrt
/// estimate` does: prints the table (the flat run is compared with it in `estimate_methods`).
#[test]
#[ignore = "slow: Yosys synthesis of the 2048-bit accelerator's units (minutes)"]
fn default_configuration_fanout_at_2048_bits() {
    let config = AcceleratorConfig { key_bits: 2048, cores: 1, ..Default::default() };
    let emitted = ecrt_hdl::emit::emit(&config).unwrap();
    let t = Instant::now();
    let r = fanout(&emitted.verilog, &emitted.manifest.top, &EstimateOptions { progress: true, ..Default::default() })
        .unwrap();
    eprintln!("{r}in {:.1} s", t.elapsed().as_secs_f64());
    for n in &r.nets {
        eprintln!("| {} | {} | {} | {} |", n.loads, n.driver_type, n.net, n.driver);
    }
    assert!(r.max_fanout() > 0);
}

/// The delayed-quotient multiplier at full width: every register- or DSP-driven net within the
/// bound (its selects copied in sets, each set loaded from a source of its own).
#[test]
#[ignore = "slow: Yosys synthesis of a 2048-bit multiplier's units (minutes)"]
fn delayed_quotient_multiplier_fanout_at_2048_bits() {
    let shape = ecrt_hdl::multiplier::delay_mul::DelayTiming::shape(2048, 3).unwrap();
    let verilog = ecrt_hdl::emit::emit_delay_mul(&shape);
    let r = fanout(&verilog, "top", &EstimateOptions { progress: true, ..Default::default() }).unwrap();
    eprintln!("{r}");
    assert!(r.max_fanout() <= ecrt_hdl::part::MAX_REGISTER_FANOUT as u64, "{r}");
}

/// A small hierarchy in rust-hdl's style (every register a leaf wrapper module; `lane` three
/// times, each with a `sub` child), in which every way a net crosses a boundary occurs:
/// - `en` (a register of the top) reaches 8 LUTs in each lane (`y <= a ^ en`): loads below;
/// - each lane's `ctl` register leaves through its output: lane 0's reaches lanes 1 and 2 (8
///   multiplexer LUTs each), lane 1's `c` and two LUTs of the top: loads above and beside;
/// - `sub` passes `s` (which is `en`) straight to `s_out`: the lanes' `s_out` reach three LUTs of
///   the top, the same net as `en` in the flat netlist. (`sub`'s own use of `s` goes: its
///   register feeds nothing.)
const HIERARCHY: &str = "\
module top(clock, en_in, c_in, a, b, y, z, t);
    input wire clock;
    input wire en_in;
    input wire c_in;
    input wire [7:0] a;
    input wire [7:0] b;
    output wire [7:0] y;
    output wire [7:0] z;
    output reg [3:0] t;
    wire en$q;
    wire [7:0] y0;
    wire [7:0] y1;
    wire ctl0;
    wire ctl1;
    wire ctl2;
    wire s0;
    wire s1;
    wire s2;
    wire [7:0] z0;
    wire [7:0] z1;
    top$en en(.d(en_in), .q(en$q), .clock(clock));
    lane l0(.clock(clock), .en(en$q), .c(c_in), .sel(ctl2), .a(a), .b(b), .y(y0), .z(z0), .ctl(ctl0), .s_out(s0));
    lane l1(.clock(clock), .en(en$q), .c(ctl0), .sel(ctl0), .a(y0), .b(z0), .y(y1), .z(z1), .ctl(ctl1), .s_out(s1));
    lane l2(.clock(clock), .en(en$q), .c(ctl1), .sel(ctl0), .a(y1), .b(z1), .y(y), .z(z), .ctl(ctl2), .s_out(s2));
    always @(posedge clock) t <= {s0 ^ ctl0, s1 & a[1], s2 | a[2], ctl0 ^ b[3]};
endmodule
module top$en(d, q, clock);
    input wire d;
    output reg q;
    input wire clock;
    always @(posedge clock) q <= d;
endmodule
module lane(clock, en, c, sel, a, b, y, z, ctl, s_out);
    input wire clock;
    input wire en;
    input wire c;
    input wire sel;
    input wire [7:0] a;
    input wire [7:0] b;
    output wire [7:0] y;
    output wire [7:0] z;
    output wire ctl;
    output wire s_out;
    wire [7:0] y$d;
    wire [7:0] z$d;
    assign y$d = a ^ {8{en}};
    assign z$d = sel ? a : b;
    lane$r8 yr(.d(y$d), .q(y), .clock(clock));
    lane$r8 zr(.d(z$d), .q(z), .clock(clock));
    lane$r1 cr(.d(c), .q(ctl), .clock(clock));
    sub s(.clock(clock), .s(en), .x(a[3:0]), .s_out(s_out));
endmodule
module lane$r8(d, q, clock);
    input wire [7:0] d;
    output reg [7:0] q;
    input wire clock;
    always @(posedge clock) q <= d;
endmodule
module lane$r1(d, q, clock);
    input wire d;
    output reg q;
    input wire clock;
    always @(posedge clock) q <= d;
endmodule
module sub(clock, s, x, s_out);
    input wire clock;
    input wire s;
    input wire [3:0] x;
    output wire s_out;
    wire [3:0] w$q;
    assign s_out = s;
    lane$r4 w(.d(w$q ^ x ^ {4{s}}), .q(w$q), .clock(clock));
endmodule
module lane$r4(d, q, clock);
    input wire [3:0] d;
    output reg [3:0] q;
    input wire clock;
    always @(posedge clock) q <= d;
endmodule
";

/// The fanout composed from the hierarchical estimate's units against a flat run of the same
/// design: the same nets, in the same order, with the same loads. On this design no optimisation
/// crosses a boundary, so nothing allows a difference; on the accelerator the composition differs
/// by what the module docs of `ecrt_sim::fanout::compose` list (the `estimate_methods` tests).
#[test]
fn composed_fanout_matches_the_flat_run() {
    let cache = Some(ecrt_sim::default_cache_dir());
    let flat = fanout(
        HIERARCHY,
        "top",
        &EstimateOptions { cache_dir: cache.clone(), method: EstimateMethod::Flat, ..Default::default() },
    )
    .unwrap();
    let t = Instant::now();
    let (resources, composed) =
        estimate_with_fanout(HIERARCHY, "top", &EstimateOptions { cache_dir: cache, ..Default::default() }).unwrap();
    eprintln!("flat:\n{flat}composed in {:.1} s:\n{composed}", t.elapsed().as_secs_f64());
    let rows = |r: &ecrt_sim::FanoutReport| -> Vec<(String, String, u64)> {
        r.nets.iter().map(|n| (n.net.clone(), n.driver_type.clone(), n.loads)).collect()
    };
    // en: 3 × 8 LUTs in the lanes and 3 in the top through the lanes' s_out; l0's ctl: 2 × 8
    // multiplexers, lane 1's c and 2 LUTs of the top.
    let expected = |net: &str, loads| (net.to_owned(), "FDRE".to_owned(), loads);
    assert_eq!(rows(&composed)[..2], [expected("en.q", 27), expected("l0.cr.q", 19)]);
    assert_eq!(rows(&composed), rows(&flat));
    assert_eq!(composed.logic_nets.len(), flat.logic_nets.len());
    assert_eq!(composed.driven_nets, flat.driven_nets);
    // Every flip-flop's net but the 20 that reach only the top's outputs (y, z, t): no loads.
    assert_eq!(composed.driven_nets, resources.ff - 20);
    assert!(composed.tool.contains("composed"), "{}", composed.tool);
    // A driver is named by its instance path, then the cell's name in its unit.
    assert!(composed.nets[1].driver.starts_with("l0.$"), "{}", composed.nets[1].driver);
}
