//! Register fanout from Yosys: a real run on a tiny design, and (ignored) the 2048-bit
//! accelerator.

use std::time::Instant;

use ecrt_hdl::config::AcceleratorConfig;
use ecrt_sim::{fanout, EstimateOptions};

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
    let opts = EstimateOptions { cache_dir: Some(ecrt_sim::default_cache_dir()), ..Default::default() };
    let t = Instant::now();
    let r = fanout(TWO_REGISTERS, "top", &opts).unwrap();
    eprintln!("{r}in {:.1} s", t.elapsed().as_secs_f64());
    let rows: Vec<(&str, &str, u64)> =
        r.nets.iter().map(|n| (n.net.as_str(), n.driver_type.as_str(), n.loads)).collect();
    // y and z drive only the module's outputs: no cell pins.
    assert_eq!(rows, [("en", "FDRE", 100), ("n", "FDRE", 3)]);
    assert_eq!(r.max_fanout(), 100);
    assert_eq!(r.driven_nets, 105);
    assert!(r.tool.contains("Yosys"));
    let t = Instant::now();
    assert_eq!(fanout(TWO_REGISTERS, "top", &opts).unwrap(), r);
    assert!(t.elapsed().as_secs_f64() < 0.5, "cached");
    assert!(fanout(TWO_REGISTERS, "top; x", &opts).is_err());
}

/// The default configuration's one-core 2048-bit accelerator, flattened: prints the table (run
/// it under `/usr/bin/time -v` for the peak memory of the Yosys run). 9.5 minutes and 2.4 GB at
/// most in one process (Yosys, ABC or the parser) when written, on two cores.
#[test]
#[ignore = "slow: flat Yosys synthesis of the 2048-bit accelerator (about 10 minutes)"]
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
