//! `ecrt`: generate keys, encrypt, and offload Paillier decryption in python-paillier's formats.

mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(status) => status,
        Err(error) => {
            eprintln!("ecrt: error: {}", cli::printable(&format!("{error:#}"), "\n"));
            ExitCode::from(cli::EXIT_FATAL)
        }
    }
}
