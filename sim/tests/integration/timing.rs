//! Yosys `sta` through LUT RAM and block RAM: the paths the timing script must not lose or misread.

use ecrt_golden::hw::FoldShape;
use ecrt_hdl::emit::{emit_deep_core, emit_deep_mul, emit_delay_core, emit_delay_mul, emit_lane_exp};
use ecrt_hdl::multiplier::delay_mul::DelayTiming;
use ecrt_sim::{logic_delay, EstimateOptions, TimingEstimate};

/// The most logic one register-to-register path may hold: at a quarter of a 7-series path's
/// delay, still 100 MHz; at the usual half, 200 MHz.
const STAGE_BUDGET_NS: f64 = 2.5;

fn delay(verilog: &str) -> TimingEstimate {
    let t = logic_delay(verilog, "top", &EstimateOptions { cache_dir: None, ..Default::default() }).unwrap();
    for s in &t.critical_path {
        eprintln!("  {:>6.3} ns  {:<8} {:<12} {}", s.arrival_ns, s.cell_type, s.pins, s.cell);
    }
    t
}

/// The step `i` of the path took `ns` (its arrival minus the previous one's).
fn step_ns(t: &TimingEstimate, i: usize) -> f64 {
    t.critical_path[i].arrival_ns - t.critical_path[i - 1].arrival_ns
}

/// A 64×3 LUT RAM (one RAM64M) read asynchronously at an address whose top bit is the carry out
/// of a 16-bit adder, the latest signal of the design: the path runs register → CARRY4s →
/// ADDRx[5] → DOx → LUT → register. Without the derived-module fix the RAM had no arcs; without
/// the added ADDRx[5] arc the path ended at the RAM.
#[test]
fn asynchronous_read_through_the_top_address_bit_is_timed() {
    let v = "\
module top(input clock, input we_in, input [5:0] wa_in, input [4:0] ra_in, input [15:0] a_in, input [15:0] b_in,
           input [2:0] d_in, input [2:0] x_in, output reg [2:0] q);
    reg [2:0] mem [0:63];
    reg [15:0] a, b; reg [5:0] wa; reg [4:0] ra; reg we; reg [2:0] d, x;
    wire [15:0] s = a + b;
    always @(posedge clock) begin
        a <= a_in; b <= b_in; wa <= wa_in; ra <= ra_in; we <= we_in; d <= d_in; x <= x_in;
        if (we) mem[wa] <= d;
        q <= mem[{s[15], ra}] ^ x;
    end
endmodule
";
    let t = delay(v);
    let ram = t.critical_path.iter().position(|s| s.cell_type == "RAM64M").expect("the path goes through the RAM");
    assert!(t.critical_path[ram].pins.starts_with("ADDR") && t.critical_path[ram].pins.contains("->DO"), "{t}");
    assert!((step_ns(&t, ram) - 0.127).abs() < 1e-9, "ADDRx[5] -> DOx is 127 ps: {t}");
    assert_eq!(t.critical_path[ram - 1].cell_type, "CARRY4");
    assert_eq!(t.critical_path.last().unwrap().cell_type, "FDRE");
    assert!(t.logic_delay_ns > t.critical_path[ram].arrival_ns);
}

/// The write enable comes from a 16-bit comparison of a sum: the path ends at the RAM's WE with its
/// setup time (654 ps).
#[test]
fn write_enable_setup_is_timed() {
    let v = "\
module top(input clock, input [5:0] wa_in, input [5:0] ra_in, input [15:0] a_in, input [15:0] b_in,
           input [15:0] c_in, input [2:0] d_in, output reg [2:0] q);
    reg [2:0] mem [0:63];
    reg [15:0] a, b, c; reg [5:0] wa, ra; reg [2:0] d;
    wire we = (a + b) == c;
    always @(posedge clock) begin
        a <= a_in; b <= b_in; c <= c_in; wa <= wa_in; ra <= ra_in; d <= d_in;
        if (we) mem[wa] <= d;
        q <= mem[ra];
    end
endmodule
";
    let t = delay(v);
    let last = t.critical_path.last().unwrap();
    assert_eq!((last.cell_type.as_str(), last.pins.as_str()), ("RAM64M", "WE"), "{t}");
    assert!((step_ns(&t, t.critical_path.len() - 1) - 0.654).abs() < 1e-9, "WE setup is 654 ps: {t}");
}

/// A 1024×18 block RAM read (one RAMB18E1: its read register is `rd`) into a register with an
/// enable, then a sum: Vivado packs that register into the RAM's DOB_REG, and so does the timing
/// flow, so the path starts at the RAM's 882 ps clock-to-out. With logic between the read and the
/// register (`mixed`) nothing packs and the read takes 2454 ps.
fn block_ram_read(mixed: bool) -> String {
    let read = if mixed { "rd ^ x" } else { "rd" };
    format!(
        "module top(input clock, input we_in, input [9:0] wa_in, input [9:0] ra_in, input [17:0] d_in,
           input [17:0] x_in, input en_in, output reg [17:0] q);
    reg [17:0] mem [0:1023];
    reg [9:0] wa, ra; reg we, en; reg [17:0] d, x, rd, out;
    always @(posedge clock) begin
        wa <= wa_in; ra <= ra_in; we <= we_in; d <= d_in; x <= x_in; en <= en_in;
        if (we) mem[wa] <= d;
        rd <= mem[ra];
        if (en) out <= {read};
        q <= out + x;
    end
endmodule
"
    )
}

#[test]
fn a_register_that_only_takes_a_block_ram_read_is_its_output_register() {
    let t = delay(&block_ram_read(false));
    assert_eq!(t.packed_block_rams, 1, "{t}");
    let start = &t.critical_path[0];
    assert_eq!((start.cell_type.as_str(), start.arrival_ns), ("RAMB18E1_DO_REG", 0.882), "{t}");
    assert_eq!(t.critical_path.last().unwrap().cell_type, "FDRE");
    assert!(t.critical_path.iter().any(|s| s.cell_type == "CARRY4"), "the sum follows the read: {t}");

    let t = delay(&block_ram_read(true));
    assert_eq!(t.packed_block_rams, 0, "{t}");
    let ram = t.critical_path.iter().find(|s| s.cell_type == "RAMB18E1").expect("the path starts at the read");
    assert_eq!(ram.arrival_ns, 2.454, "{t}");
}

/// A register-to-register sum of `terms` operands of `bits` bits, the first one through a 2:1
/// multiplexer when `muxed` (a slot select in front of the adder).
fn registered_sum(terms: usize, bits: usize, muxed: bool) -> String {
    let width = terms * bits;
    let operand = |t: usize| format!("r[{}:{}]", t * bits + bits - 1, t * bits);
    let mut sum: Vec<String> = (0..terms).map(operand).collect();
    if muxed {
        sum[0] = format!("(s ? {} : alt)", sum[0]);
    }
    format!(
        "module top(input clock, input [{w1}:0] i, input [{b1}:0] alt_in, input s_in, output reg [{o1}:0] o);
    reg [{w1}:0] r; reg [{b1}:0] alt; reg s;
    always @(posedge clock) begin r <= i; alt <= alt_in; s <= s_in; o <= {sum}; end
endmodule
",
        w1 = width - 1,
        b1 = bits - 1,
        o1 = bits + 1,
        sum = sum.join(" + ")
    )
}

/// What one pipeline stage of at most 2.5 ns of logic holds in these cell delays, the budget the
/// multiplier's loop is designed to: a two-term add of a column sum's width (42 bits), or the
/// three-term redistribution of 17-bit pieces, but neither four column terms nor a multiplexer in
/// front of the 42-bit add.
#[test]
#[ignore = "slow (four Yosys runs of plain adders: the budget's calibration, not the design's): scripts/test --full runs it"]
fn what_a_stage_of_two_and_a_half_nanoseconds_holds() {
    let ns = |terms, bits, muxed| delay(&registered_sum(terms, bits, muxed)).logic_delay_ns;
    let (two, redistribution) = (ns(2, 42, false), ns(3, 17, false));
    let (four, muxed) = (ns(4, 42, false), ns(2, 42, true));
    assert!(two <= STAGE_BUDGET_NS && redistribution <= STAGE_BUDGET_NS, "{two} ns, {redistribution} ns");
    assert!(four > STAGE_BUDGET_NS && muxed > STAGE_BUDGET_NS, "{four} ns, {muxed} ns");
}

/// The deep-loop multiplier keeps every path within that budget: its DSP48E1s registered at every
/// stage, its columns summed down their cascades, its redistribution one LUT level and one carry
/// chain. k = 1 has no cascade; `scripts/test --full` times the default k = 3 alone and in the
/// lanes core below (`ecrt bench-multiplier` measures more).
#[test]
fn the_deep_loop_multiplier_stays_within_the_stage_budget() {
    let t = delay(&emit_deep_mul(&FoldShape::new(128, 1).unwrap()));
    assert!(t.logic_delay_ns <= STAGE_BUDGET_NS, "{t}");
}

/// The deep loop at k = 3 alone (the lanes core below holds it).
#[test]
#[ignore = "slow (minutes of Yosys): scripts/test --full runs it"]
fn the_default_deep_loop_multiplier_stays_within_the_stage_budget() {
    let t = delay(&emit_deep_mul(&FoldShape::new(128, 3).unwrap()));
    assert!(t.logic_delay_ns <= STAGE_BUDGET_NS, "{t}");
}

/// The delayed-quotient multiplier: its two-cycle loop (an addition of T's limbs from k, 1 or 0
/// up, then each sum's carry a limb up), its digits resolved k a turn from flags formed at the
/// load, its operands' banks read through toggled selects, its DSPs registered at every stage.
#[test]
#[ignore = "slow (minutes of Yosys): scripts/test --full runs it"]
fn the_delayed_quotient_multiplier_stays_within_the_stage_budget() {
    let t = delay(&emit_delay_mul(&DelayTiming::shape(128, 3).unwrap()));
    assert!(t.logic_delay_ns <= STAGE_BUDGET_NS, "{t}");
}

/// The delay engine's core: the lanes engine's core, its unit and its paths' sequencer on the
/// delayed-quotient multiplier (k = 3, 5-bit windows).
#[test]
#[ignore = "slow (minutes of Yosys): scripts/test --full runs it"]
fn the_delay_core_stays_within_the_stage_budget() {
    let t = delay(&emit_delay_core(&DelayTiming::shape(128, 3).unwrap(), 40, 5));
    assert!(t.logic_delay_ns <= STAGE_BUDGET_NS, "{t}");
}

/// The decryption paths in the deep loop's lanes add their sequencer, the memories' addresses,
/// reads and writes, and the operands' multiplexers in front of the multiplier's load, each within
/// that budget (k = 3, 5-bit windows).
#[test]
#[ignore = "slow (minutes of Yosys): scripts/test --full runs it"]
fn the_lane_paths_stay_within_the_stage_budget() {
    let t = delay(&emit_lane_exp(&FoldShape::new(128, 3).unwrap(), 40, 5));
    assert!(t.logic_delay_ns <= STAGE_BUDGET_NS, "{t}");
}

/// The lanes engine's core: the engine, the ciphertext's intake, the terms' memory, the queue of
/// busy pairs and the correction (its sum and difference a cycle apart). `ecrt estimate` and
/// `ecrt bench` time the whole accelerator.
#[test]
#[ignore = "slow (minutes of Yosys): scripts/test --full runs it"]
fn the_lanes_core_stays_within_the_stage_budget() {
    let t = delay(&emit_deep_core(&FoldShape::new(128, 3).unwrap(), 40, 5));
    assert!(t.logic_delay_ns <= STAGE_BUDGET_NS, "{t}");
}
