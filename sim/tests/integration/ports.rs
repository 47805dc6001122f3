//! Port parsing on the shapes of Verilog that rust-hdl's `generate_verilog` emits.

use ecrt_sim::{module_names, parse_ports, Port, PortDir, SimError};

#[test]
fn rust_hdl_top_with_children() {
    let v = r#"
module top(clock,cmd$data,cmd$valid,cmd$ready,result);

    // Module arguments
    input wire  clock;
    input wire  [16:0] cmd$data;
    input wire  cmd$valid;
    output reg  cmd$ready;
    output reg  [33:0] result;

    // Stub signals
    reg  [16:0] mul$a;
    wire  [33:0] mul$p;

    // Sub module instances
    top$mul mul(
        .clock(clock),
        .a(mul$a),
        .p(mul$p)
    );

    // Update code
    always @(*) begin
        mul$a = cmd$data;
        cmd$ready = 1'b1;
        result = mul$p;
    end

endmodule // top


module top$mul(clock,a,p);

    // Module arguments
    input wire  clock;
    input [16:0] a;
    output reg  [33:0] p;

    always @(posedge clock) begin
        p <= a * a;
    end

endmodule // top$mul
"#;
    assert_eq!(module_names(v).unwrap(), vec!["top", "top$mul"]);
    let p = parse_ports(v, "top").unwrap();
    assert_eq!(
        p,
        vec![
            Port::input("clock", 1),
            Port::input("cmd$data", 17),
            Port::input("cmd$valid", 1),
            Port::output("cmd$ready", 1),
            Port::output("result", 34),
        ]
    );
    assert_eq!(p[1].words(), 1);
    assert_eq!(p[4].words(), 2);
    let child = parse_ports(v, "top$mul").unwrap();
    assert_eq!(child, vec![Port::input("clock", 1), Port::input("a", 17), Port::output("p", 34)]);
    assert!(child.iter().all(|p| p.dir == PortDir::Input || p.name == "p"));
}

#[test]
fn wide_ports_and_missing_module() {
    let v = "module top(x,y);\n input wire [2047:0] x;\n output reg [4095:0] y;\nendmodule";
    let p = parse_ports(v, "top").unwrap();
    assert_eq!((p[0].width, p[0].words(), p[1].width, p[1].words()), (2048, 64, 4096, 128));
    assert!(matches!(parse_ports(v, "core"), Err(SimError::Parse(m)) if m.contains("`core` not found")));
}
