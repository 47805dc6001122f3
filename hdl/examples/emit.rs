//! Emits the exponentiation unit of one configuration: `cargo run --release --example emit -- KEY_BITS WINDOW_BITS DIR`.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let config = ecrt_hdl::config::AcceleratorConfig {
        key_bits: args[0].parse().unwrap(),
        window_bits: args[1].parse().unwrap(),
        ..Default::default()
    };
    let start = std::time::Instant::now();
    let emitted = ecrt_hdl::emit::emit(&config).unwrap();
    eprintln!("generated {} bytes in {:?}", emitted.verilog.len(), start.elapsed());
    ecrt_hdl::emit::write(&emitted, std::path::Path::new(&args[2])).unwrap();
}
