//! Decrypts a file of pheutil ciphertexts (JSON lines) on the CPU backend, or with `--sim` on the
//! accelerator's Verilator model: the same `Backend` API either way.
//!
//! cargo run --release --example decrypt -- [--sim] key.jwk ciphertexts.jsonl

use ecrt_driver::backend::{Backend, CpuBackend};
use ecrt_driver::jsonl::{decrypt_lines, OutputMode};
use ecrt_driver::sim::{config_for_key, SimBackend};
use ecrt_golden::phe_format::read_private_key;
use ecrt_hdl::config::AcceleratorConfig;
use ecrt_sim::BuildOptions;

fn main() -> anyhow::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let sim = args.first().is_some_and(|a| a == "--sim");
    if sim {
        args.remove(0);
    }
    let [key_file, input_file] = args.as_slice() else {
        anyhow::bail!("usage: decrypt [--sim] KEY.jwk CIPHERTEXTS.jsonl");
    };
    let key = read_private_key(&std::fs::read_to_string(key_file)?)?;
    let backend: Box<dyn Backend> = if sim {
        let config = config_for_key(&key, &AcceleratorConfig::default());
        Box::new(SimBackend::new(&key, &config, &BuildOptions::default(), true, false)?)
    } else {
        Box::new(CpuBackend::new(&key, std::thread::available_parallelism()?.get())?)
    };
    let input = std::fs::read_to_string(input_file)?;
    let lines: Vec<&str> = input.lines().collect();
    let outcome = decrypt_lines(backend.as_ref(), key.public(), &lines, OutputMode::Decoded, None)?;
    for (line, error) in outcome.errors() {
        eprintln!("line {line}: {error}");
    }
    print!("{}", outcome.render());
    Ok(())
}
