//! pheutil (python-paillier 1.5.0, from PyPI) and ecrt read each other's keys and ciphertexts.
//!
//! The test gets phe from `scripts/phe-venv` (a virtual environment under target/, created on first
//! use from PyPI); set ECRT_PHE_PYTHON to use another Python that has phe. Without phe the test
//! fails: it does not skip.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The bin directory of a Python environment with phe 1.5.0 and its `pheutil`.
fn phe_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let python = std::env::var("ECRT_PHE_PYTHON").unwrap_or_else(|_| {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/phe-venv");
            let out = Command::new(&script).output().expect("run scripts/phe-venv");
            assert!(out.status.success(), "scripts/phe-venv failed: {}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        });
        PathBuf::from(python).parent().unwrap().to_path_buf()
    })
}

fn run(program: &Path, args: &[&str]) -> Output {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(out.status.success(), "{} {args:?}: {}", program.display(), String::from_utf8_lossy(&out.stderr));
    out
}

fn ecrt(args: &[&str]) -> String {
    String::from_utf8(run(Path::new(env!("CARGO_BIN_EXE_ecrt")), args).stdout).unwrap()
}

fn pheutil(args: &[&str]) -> String {
    String::from_utf8(run(&phe_bin().join("pheutil"), args).stdout).unwrap()
}

const VALUES: [&str; 6] = ["0", "42", "-7", "3.5", "-1234.5678", "1e-07"];

#[test]
fn pheutil_decrypts_what_ecrt_made() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (key, public) = (path("ecrt.jwk"), path("ecrt.pub"));
    ecrt(&["keygen", "--bits", "1024", "--out", &key, "--public-out", &public]);
    // pheutil's own extract reads ecrt's private key, and gives the public key ecrt wrote.
    let extracted = path("extracted.pub");
    pheutil(&["extract", &key, &extracted]);
    let n_of = |file: &str| -> serde_json::Value {
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(file).unwrap()).unwrap()["n"].clone()
    };
    assert_eq!(n_of(&extracted), n_of(&public));
    for value in VALUES {
        let ciphertext = path("c.json");
        std::fs::write(&ciphertext, ecrt(&["encrypt", "--key", &public, "--", value])).unwrap();
        let decrypted = pheutil(&["decrypt", &key, &ciphertext]);
        // pheutil prints Python's str() of what phe's decrypt returns: integers stay integers.
        assert_eq!(decrypted.trim(), value);
    }
}

#[test]
fn ecrt_decrypts_what_pheutil_made() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (key, public) = (path("phe.jwk"), path("phe.pub"));
    pheutil(&["genpkey", "--keysize", "1024", &key]);
    pheutil(&["extract", &key, &public]);
    let mut lines = String::new();
    for value in VALUES {
        // pheutil encrypts every input as a float, at exponent −32.
        lines += &pheutil(&["encrypt", &public, "--", value]);
    }
    let input = path("cts.jsonl");
    std::fs::write(&input, &lines).unwrap();
    let decrypted = ecrt(&["decrypt", "--key", &key, "--in", &input]);
    // ecrt prints floats as Python does: 0.0, 42.0, -7.0, 3.5, -1234.5678, 1e-07.
    assert_eq!(decrypted, "0.0\n42.0\n-7.0\n3.5\n-1234.5678\n1e-07\n");
    // And ecrt encrypts under pheutil's public key for pheutil to decrypt.
    let c = path("c.json");
    std::fs::write(&c, ecrt(&["encrypt", "--key", &public, "--", "-2.25"])).unwrap();
    assert_eq!(pheutil(&["decrypt", &key, &c]).trim(), "-2.25");
}
