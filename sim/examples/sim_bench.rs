//! Builds a Verilog file into a Verilator model and reports build time and simulation speed.
//!
//! `cargo run -p ecrt-sim --example sim_bench -- design.v [top] [cycles] [--trace]`
//!
//! The model is clocked with its inputs at zero; the number is the harness' raw speed for that
//! design (add `--release` for the Rust side; the model itself is always compiled with -O2).

use std::time::Instant;

use ecrt_sim::{BuildOptions, Model, ModelSpec};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let trace = args.iter().any(|a| a == "--trace");
    let pos: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let Some(path) = pos.first() else {
        eprintln!("usage: sim_bench DESIGN.v [TOP] [CYCLES] [--trace]");
        std::process::exit(2);
    };
    let top = pos.get(1).map_or("top", |s| s.as_str());
    let cycles: u64 = pos.get(2).map_or(Ok(1_000_000), |s| s.parse())?;
    let verilog = std::fs::read_to_string(path)?;
    let spec = ModelSpec::from_verilog(verilog, top)?.with_trace(trace);
    let opts = BuildOptions { progress: true, ..BuildOptions::default() };
    let t = Instant::now();
    let mut model = Model::build(&spec, &opts)?;
    let info = model.build_info();
    println!(
        "model `{top}`: {} ports, {} in {:.2} s ({})",
        model.ports().len(),
        if info.cached { "loaded from cache" } else { "built" },
        t.elapsed().as_secs_f64(),
        info.library.display()
    );
    let stats = model.run(cycles)?;
    println!(
        "{} cycles in {:.3} s: {:.3} M cycles/s",
        stats.cycles,
        stats.elapsed.as_secs_f64(),
        stats.cycles_per_second() / 1e6
    );
    Ok(())
}
