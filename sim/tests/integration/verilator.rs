//! End-to-end tests of the Verilator harness on small hand-written designs in rust-hdl's style
//! (non-ANSI port lists, `output reg`, `always @(*)` / `always @(posedge clock)`).

use std::time::Instant;

use ecrt_sim::{Model, ModelSpec, Port, SimError};
use num_bigint::{BigUint, RandBigInt};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::common::{opts, stamp};

const ADDER: &str = r#"
module top(clock,a,b,s);
    // Module arguments
    input wire clock;
    input wire [129:0] a;
    input wire [129:0] b;
    output reg [130:0] s;
    // Update code
    always @(posedge clock) begin
        s <= a + b;
    end
endmodule // top
"#;

const COUNTER: &str = r#"
module top(clock,reset,enable,count,wrapped);
    input wire clock;
    input wire reset;
    input wire enable;
    output reg [7:0] count;
    output reg wrapped;
    reg [7:0] count_next;
    always @(*) begin
        count_next = count + 8'd1;
        wrapped = (count == 8'hff);
    end
    always @(posedge clock) begin
        if (reset) begin
            count <= 8'h0;
        end else if (enable) begin
            count <= count_next;
        end
    end
endmodule
"#;

#[test]
fn adder_130_bits_matches_bigint() {
    let spec = ModelSpec::from_verilog(ADDER, "top").unwrap();
    assert_eq!(
        spec.ports,
        vec![Port::input("clock", 1), Port::input("a", 130), Port::input("b", 130), Port::output("s", 131)]
    );
    let t = Instant::now();
    let mut m = Model::build(&spec, &opts()).unwrap();
    eprintln!("adder: build/load {:.2} s (cached: {})", t.elapsed().as_secs_f64(), m.build_info().cached);
    let (a, b, s) = (m.port_id("a").unwrap(), m.port_id("b").unwrap(), m.port_id("s").unwrap());
    let mut rng = StdRng::seed_from_u64(130);
    let max = (BigUint::from(1u8) << 130u32) - 1u8;
    let mut expected: Option<BigUint> = None;
    for i in 0..3000 {
        // Corner values now and then: all ones, zero, single high bit.
        let (x, y) = match i % 50 {
            0 => (max.clone(), max.clone()),
            1 => (BigUint::default(), max.clone()),
            2 => (BigUint::from(1u8) << 129u32, BigUint::from(1u8) << 129u32),
            _ => {
                let bits = rng.gen_range(1..=130);
                (rng.gen_biguint(130), rng.gen_biguint(bits))
            }
        };
        m.set_biguint(a, &x).unwrap();
        m.set_biguint(b, &y).unwrap();
        // Registered: the output still holds the previous cycle's sum until the edge.
        if let Some(e) = &expected {
            assert_eq!(&m.get_biguint(s).unwrap(), e);
        }
        m.tick().unwrap();
        let sum = &x + &y;
        assert_eq!(m.get_biguint(s).unwrap(), sum, "cycle {i}");
        expected = Some(sum);
    }
    assert_eq!(m.cycles(), 3000);
    // Word-level access too.
    m.set(a, &[0xffff_ffff, 0xffff_ffff, 0xffff_ffff, 0xffff_ffff, 0x3]).unwrap();
    m.set(b, &[1]).unwrap();
    m.tick().unwrap();
    assert_eq!(m.get(s).unwrap(), vec![0, 0, 0, 0, 0x4]);

    // Speed of a Rust-driven loop: new inputs and a read every cycle, no string lookups.
    let cycles = 200_000u64;
    let mut out = [0u32; 5];
    let t = Instant::now();
    for i in 0..cycles {
        m.set_u64(a, i).unwrap();
        m.tick().unwrap();
        m.get_into(s, &mut out).unwrap();
    }
    let dt = t.elapsed().as_secs_f64();
    assert_eq!(out, [(cycles - 1) as u32 + 1, 0, 0, 0, 0]);
    eprintln!("adder: Rust loop (set, tick, get) {:.2} M cycles/s", cycles as f64 / dt / 1e6);

    // Speed, with the inputs held.
    let stats = m.run(2_000_000).unwrap();
    eprintln!(
        "adder: {} cycles in {:.3} s = {:.2} M cycles/s",
        stats.cycles,
        stats.elapsed.as_secs_f64(),
        stats.cycles_per_second() / 1e6
    );
    assert_eq!(m.cycles(), 3001 + 200_000 + 2_000_000);
    assert_eq!(m.time(), 2 * m.cycles());
}

#[test]
fn model_is_send() {
    fn assert_send<T: Send>() {}
    assert_send::<Model>();
    // Built on one thread, driven on another.
    let mut m = Model::build(&ModelSpec::from_verilog(COUNTER, "top").unwrap(), &opts()).unwrap();
    m.set_bool("enable", true).unwrap();
    let m = std::thread::spawn(move || {
        m.run(10).unwrap();
        m
    })
    .join()
    .unwrap();
    assert_eq!(m.get_u64("count").unwrap(), 10);
}

#[test]
fn counter_with_reset_counts_cycles_exactly() {
    let spec = ModelSpec::from_verilog(COUNTER, "top").unwrap();
    assert_eq!(spec.clock.as_deref(), Some("clock"));
    let mut m = Model::build(&spec, &opts()).unwrap();
    assert_eq!(m.cycles(), 0);
    m.set_bool("reset", true).unwrap();
    m.tick().unwrap();
    assert_eq!(m.get_u64("count").unwrap(), 0);
    m.set_bool("reset", false).unwrap();
    m.set_bool("enable", true).unwrap();
    for i in 1..=300u64 {
        m.tick().unwrap();
        assert_eq!(m.get_u64("count").unwrap(), i % 256, "after {i} enabled cycles");
        assert_eq!(m.get_bool("wrapped").unwrap(), i % 256 == 255);
    }
    // Held: no change while disabled.
    m.set_bool("enable", false).unwrap();
    m.run(17).unwrap();
    assert_eq!(m.get_u64("count").unwrap(), 300 % 256);
    m.set_bool("enable", true).unwrap();
    m.run(1000).unwrap();
    assert_eq!(m.get_u64("count").unwrap(), (300 + 1000) % 256);
    m.set_bool("reset", true).unwrap();
    m.tick().unwrap();
    assert_eq!(m.get_u64("count").unwrap(), 0);
    assert_eq!(m.cycles(), 1 + 300 + 17 + 1000 + 1);
    assert!(!m.finished());
}

#[test]
fn errors_are_reported_not_panics() {
    let spec = ModelSpec::from_verilog(COUNTER, "top").unwrap();
    let mut m = Model::build(&spec, &opts()).unwrap();
    assert!(
        matches!(m.set_u64("nope", 1), Err(SimError::UnknownPort { name, available }) if name == "nope" && available.contains("enable"))
    );
    assert!(matches!(m.set_u64("count", 1), Err(SimError::NotAnInput { .. })));
    assert!(matches!(m.set_u64("enable", 2), Err(SimError::ValueTooWide { width: 1, bits: 2, .. })));
    assert!(matches!(m.set("enable", &[0, 1]), Err(SimError::ValueTooWide { bits: 33, .. })));
    assert!(matches!(m.set_biguint("count", &BigUint::from(1u8)), Err(SimError::NotAnInput { .. })));
    assert!(m.set("enable", &[1, 0, 0]).is_ok(), "zero high words are fine");
    assert!(matches!(m.open_vcd("/tmp/x.vcd"), Err(SimError::TraceDisabled)));
    // A handle from another design is refused.
    let adder = Model::build(&ModelSpec::from_verilog(ADDER, "top").unwrap(), &opts()).unwrap();
    let foreign = adder.port_id("a").unwrap();
    assert!(matches!(m.get(foreign), Err(SimError::ForeignPort { .. })));
    let mut manual = Model::build(&spec.clone().with_clock(None), &opts()).unwrap();
    assert!(matches!(manual.tick(), Err(SimError::NoClock)));
    // Clocking by hand works the same.
    manual.set_bool("enable", true).unwrap();
    for _ in 0..5 {
        manual.set_bool("clock", true).unwrap();
        manual.eval();
        manual.set_bool("clock", false).unwrap();
        manual.eval();
    }
    assert_eq!(manual.get_u64("count").unwrap(), 5);
}

/// Every storage class of Verilator (CData, SData, IData, QData, VlWide) and mangled names, built
/// from two threads at once (the second waits for, then loads, the first one's build).
#[test]
fn port_widths_names_and_concurrent_builds() {
    let v = r#"
module top(a8,a16,a32,a33,a64,a65,x$y,q__r,y8,y16,y32,y33,y64,y65,z$w,template);
    input wire [7:0] a8;
    input wire [15:0] a16;
    input wire [31:0] a32;
    input wire [32:0] a33;
    input wire [63:0] a64;
    input wire [64:0] a65;
    input wire [2:0] x$y;
    input wire q__r;
    output reg [7:0] y8;
    output reg [15:0] y16;
    output reg [31:0] y32;
    output reg [32:0] y33;
    output reg [63:0] y64;
    output reg [64:0] y65;
    output reg [2:0] z$w;
    output reg template;
    always @(*) begin
        y8 = ~a8;
        y16 = ~a16;
        y32 = ~a32;
        y33 = ~a33;
        y64 = ~a64;
        y65 = ~a65;
        z$w = x$y + 3'd1;
        template = ~q__r;
    end
endmodule
"#;
    let spec = ModelSpec::from_verilog(v, "top").unwrap();
    assert_eq!(spec.clock, None);
    let models: Vec<Model> = std::thread::scope(|s| {
        let h: Vec<_> = (0..2).map(|_| s.spawn(|| Model::build(&spec, &opts()).unwrap())).collect();
        h.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for mut m in models {
        for (w, i, o) in
            [(8, "a8", "y8"), (16, "a16", "y16"), (32, "a32", "y32"), (33, "a33", "y33"), (64, "a64", "y64")]
        {
            let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
            for x in [0u64, 1, 0x5a5a_5a5a_5a5a_5a5a & mask, mask] {
                m.set_u64(i, x).unwrap();
                m.eval();
                assert_eq!(m.get_u64(o).unwrap(), !x & mask, "{w} bits, {x:#x}");
            }
            m.set_u64(i, mask).unwrap();
            if w < 64 {
                assert!(matches!(m.set_u64(i, 1 << w), Err(SimError::ValueTooWide { .. })));
            }
        }
        let x = (BigUint::from(1u8) << 64u32) + 12345u32;
        m.set_biguint("a65", &x).unwrap();
        m.eval();
        let mask = (BigUint::from(1u8) << 65u32) - 1u8;
        assert_eq!(m.get_biguint("y65").unwrap(), &mask ^ &x);
        assert_eq!(m.get("y65").unwrap().len(), 3);
        assert!(matches!(m.get_u64("y65"), Err(SimError::PortTooWide { width: 65, .. })));
        m.set_u64("x$y", 7).unwrap();
        m.set_bool("q__r", true).unwrap();
        m.eval();
        assert_eq!(m.get_u64("z$w").unwrap(), 0);
        assert!(!m.get_bool("template").unwrap());
    }
}

#[test]
fn vcd_has_ports_and_half_cycle_timestamps() {
    let spec = ModelSpec::from_verilog(COUNTER, "top").unwrap().with_trace(true);
    let mut m = Model::build(&spec, &opts()).unwrap();
    assert!(m.trace_enabled());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("counter.vcd");
    m.open_vcd(&path).unwrap();
    m.set_bool("enable", true).unwrap();
    for _ in 0..10 {
        m.tick().unwrap();
    }
    m.close_vcd();
    let vcd = std::fs::read_to_string(&path).unwrap();
    for name in ["clock", "reset", "enable", "count", "wrapped"] {
        assert!(
            vcd.lines().any(|l| l.trim_start().starts_with("$var") && l.split_whitespace().any(|w| w == name)),
            "{name} missing"
        );
    }
    let stamps: Vec<u64> = vcd.lines().filter_map(|l| l.strip_prefix('#')).map(|t| t.parse().unwrap()).collect();
    assert_eq!(stamps, (0..=20).collect::<Vec<u64>>());
    // A second VCD on the same model continues the time line.
    let path2 = dir.path().join("again.vcd");
    m.open_vcd(&path2).unwrap();
    m.run(3).unwrap();
    m.close_vcd();
    let vcd2 = std::fs::read_to_string(&path2).unwrap();
    let stamps2: Vec<u64> = vcd2.lines().filter_map(|l| l.strip_prefix('#')).map(|t| t.parse().unwrap()).collect();
    assert_eq!(stamps2, (20..=26).collect::<Vec<u64>>());
    assert_eq!(m.get_u64("count").unwrap(), 13);
}

#[test]
fn second_build_is_a_cache_hit() {
    // A design of its own, so that the first build here is a real one unless an earlier run cached it.
    let v = COUNTER.replace("8'd1", "8'd3");
    let spec = ModelSpec::from_verilog(v, "top").unwrap();
    let first = Model::build(&spec, &opts()).unwrap();
    // A build publishes its library in a new directory: a cache hit leaves the file as it was.
    let built = stamp(&first.build_info().library);
    let mut second = Model::build(&spec, &opts()).unwrap();
    assert!(second.build_info().cached);
    assert_eq!(second.build_info().library, first.build_info().library);
    assert_eq!(stamp(&second.build_info().library), built, "the second build rebuilt the library");
    // Two instances of one library are independent.
    second.set_bool("enable", true).unwrap();
    second.run(2).unwrap();
    assert_eq!(second.get_u64("count").unwrap(), 6);
    assert_eq!(first.get_u64("count").unwrap(), 0);
}

#[test]
fn failed_build_returns_the_log_tail() {
    let v = "module top(clock,a,b);\n input wire clock;\n input wire [7:0] a;\n output reg [7:0] b;\n \
             always @(posedge clock) begin\n b <= a +;\n end\nendmodule\n";
    let spec = ModelSpec::from_verilog(v, "top").unwrap();
    let err = Model::build(&spec, &opts()).unwrap_err();
    let msg = err.to_string();
    eprintln!("{msg}");
    match &err {
        SimError::Build { stage, log, tail } => {
            assert_eq!(stage, "verilator");
            assert!(tail.contains("syntax error"), "{tail}");
            assert!(log.is_file(), "log kept at {}", log.display());
        }
        other => panic!("unexpected error {other:?}"),
    }
    assert!(msg.contains("syntax error"));
    // A port the design does not have is a spec error, not a C++ compiler error.
    let mut spec = ModelSpec::from_verilog(COUNTER, "top").unwrap();
    spec.ports.push(Port::output("missing", 4));
    assert!(matches!(Model::build(&spec, &opts()), Err(SimError::Spec(m)) if m.contains("missing")));
    // A mismatched width too.
    let mut spec = ModelSpec::from_verilog(COUNTER, "top").unwrap();
    spec.ports[3].width = 9;
    assert!(matches!(Model::build(&spec, &opts()), Err(SimError::Spec(m)) if m.contains("count")));
}
