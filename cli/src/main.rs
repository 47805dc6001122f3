//! `ecrt`: generate keys, encrypt, and offload Paillier decryption in python-paillier's formats.

mod commands;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = commands::Cli::parse();
    match commands::run(args) {
        Ok(status) => status,
        Err(error) => {
            eprintln!("ecrt: error: {}", commands::printable(&format!("{error:#}"), "\n"));
            ExitCode::from(commands::EXIT_FATAL)
        }
    }
}
