//! Yosys resource estimates.

use std::time::Instant;

use ecrt_sim::{estimate, EstimateOptions};

/// A 17×17 multiply-add with a registered output, in rust-hdl's custom-Verilog style: Yosys maps it
/// to one DSP48E1 with the adder and the register inside (no fabric logic).
#[test]
fn registered_multiply_add_is_one_dsp() {
    let v = r#"
module top(clock,a,b,c,p);
    input wire clock;
    input wire [16:0] a;
    input wire [16:0] b;
    input wire [47:0] c;
    output reg [47:0] p;
    always @(posedge clock) begin
        p <= c + a * b;
    end
endmodule
"#;
    // A cache of its own, so that the second call can be seen to run nothing.
    let cache = tempfile::tempdir().unwrap();
    let opts = EstimateOptions { cache_dir: Some(cache.path().to_path_buf()), progress: false, ..Default::default() };
    let t = Instant::now();
    let e = estimate(v, "top", &opts).unwrap();
    eprintln!("estimate: {e} in {:.2} s\ncells: {:?}", t.elapsed().as_secs_f64(), e.cells);
    assert_eq!(e.dsp48e1, 1);
    assert_eq!(e.cells.get("DSP48E1"), Some(&1));
    assert_eq!((e.lut, e.ff, e.carry4), (0, 0, 0), "adder and register absorbed into the DSP");
    assert!(e.tool.contains("Yosys"));
    // Cached: identical, and nothing run or stored again.
    let stored = crate::common::cache_entries(cache.path());
    assert!(!stored.is_empty(), "the run stored its result");
    assert_eq!(estimate(v, "top", &opts).unwrap(), e);
    assert_eq!(crate::common::cache_entries(cache.path()), stored);
    // Summing per-block estimates.
    let four = e.scaled(4);
    assert_eq!(four.dsp48e1, 4);
    assert_eq!(e.add(&four).dsp48e1, 5);
    let json = serde_json::to_value(&e).unwrap();
    assert_eq!(json["dsp48e1"], 1);
}

#[test]
fn logic_design_counts_luts_and_ffs() {
    let v = "module top(clock,a,b,s);\n input wire clock;\n input wire [15:0] a;\n input wire [15:0] b;\n \
             output reg [16:0] s;\n always @(posedge clock) s <= a + b;\nendmodule\n";
    let e = estimate(v, "top", &EstimateOptions { cache_dir: None, progress: false, ..Default::default() }).unwrap();
    eprintln!("adder16: {e}");
    assert_eq!(e.ff, 17);
    assert!(e.lut >= 16 && e.carry4 >= 4, "{e}");
    assert_eq!(e.dsp48e1, 0);
    // Yosys' own failure becomes an error with its log.
    let bad = estimate(
        "module top(a); input a; wire x = ; endmodule",
        "top",
        &EstimateOptions { cache_dir: None, progress: false, ..Default::default() },
    );
    assert!(bad.is_err());
    eprintln!("{}", bad.unwrap_err());
}
