//! Decrypts a file of pheutil ciphertexts (JSON lines) with the `Decryptor` API: on the CPU, on
//! the accelerator's Verilator model (`--sim`), or on an XDMA device (`--device /dev/xdma0`, or
//! `DIR/xdma0` under `ecrt emulate --mount DIR`). Prints one decoded value per line, in order.
//!
//! cargo run --release --example decrypt -- [--sim | --device PREFIX] key.jwk ciphertexts.jsonl

use ecrt_contract::config::AcceleratorConfig;
use ecrt_driver::api::{BackendSpec, Decryptor, Options};
use ecrt_golden::encoding::{decode, Encoded};
use ecrt_golden::phe_format::{parse_ciphertext, read_private_key};
use ecrt_sim::BuildOptions;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (backend, files) = match args.first().map(String::as_str) {
        Some("--sim") => ("sim", &args[1..]),
        Some("--device") if args.len() > 1 => ("xdma", &args[2..]),
        _ => ("cpu", &args[..]),
    };
    let [key_file, input_file] = files else {
        anyhow::bail!("usage: decrypt [--sim | --device PREFIX] KEY.jwk CIPHERTEXTS.jsonl");
    };
    let key = read_private_key(&std::fs::read_to_string(key_file)?)?;
    let spec = match backend {
        "sim" => BackendSpec::Sim {
            config: ecrt_driver::backends::sim::config_for_key(&key, &AcceleratorConfig::default()),
            build: BuildOptions::default(),
            progress: true,
        },
        "xdma" => BackendSpec::Xdma { device: args[1].clone().into() },
        _ => BackendSpec::Cpu { threads: std::thread::available_parallelism()?.get() },
    };
    let mut decryptor = Decryptor::open(&spec, &key, Options::default())?;

    // Submit every ciphertext; `submit` blocks while the queue is full, so take finished results
    // as we go. Each ticket's exponent is kept to decode its plaintext.
    let mut exponents = Vec::new();
    let print = |done: ecrt_driver::api::Completion, exponents: &[i64]| match done.result {
        Ok(m) => {
            let value = decode(key.public().n(), &Encoded { encoding: m, exponent: exponents[done.ticket as usize] });
            println!("{}", value.map_or_else(|e| format!("null  # {e}"), |v| v.to_json_string()));
        }
        Err(e) => println!("null  # line {}: {e}", done.ticket + 1),
    };
    for line in std::fs::read_to_string(input_file)?.lines() {
        let (c, exponent) = match parse_ciphertext(line) {
            Ok(c) => (c.ciphertext, c.exponent),
            Err(_) => (Default::default(), 0), // zero is refused by the decryptor, in its place
        };
        exponents.push(exponent);
        decryptor.submit(c);
        while let Some(done) = decryptor.try_next() {
            print(done, &exponents);
        }
    }
    for done in decryptor.close() {
        print(done, &exponents);
    }
    Ok(())
}
