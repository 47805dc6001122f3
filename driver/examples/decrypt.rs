//! Decrypts a file of pheutil ciphertexts (JSON lines) on the CPU backend.
//!
//! cargo run --release --example decrypt -- key.jwk ciphertexts.jsonl

use ecrt_driver::backend::CpuBackend;
use ecrt_driver::jsonl::{decrypt_lines, OutputMode};
use ecrt_golden::phe_format::read_private_key;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [key_file, input_file] = args.as_slice() else {
        anyhow::bail!("usage: decrypt KEY.jwk CIPHERTEXTS.jsonl");
    };
    let key = read_private_key(&std::fs::read_to_string(key_file)?)?;
    let backend = CpuBackend::new(&key, std::thread::available_parallelism()?.get())?;
    let input = std::fs::read_to_string(input_file)?;
    let lines: Vec<&str> = input.lines().collect();
    let outcome = decrypt_lines(&backend, key.public(), &lines, OutputMode::Decoded, None)?;
    for (line, error) in outcome.errors() {
        eprintln!("line {line}: {error}");
    }
    print!("{}", outcome.render());
    Ok(())
}
