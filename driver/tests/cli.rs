//! The `ecrt` command end to end: every phe vector through `ecrt decrypt`, bad lines and bad keys.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn fixture(bits: u32) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../fixtures/vectors/phe-{bits}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn ecrt(args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ecrt"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command that fails early may close its stdin unread.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

fn stdout_values(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn every_phe_vector_decrypts_through_the_command() {
    let dir = tempfile::tempdir().unwrap();
    for bits in [1024u32, 2048, 3072] {
        let file = fixture(bits);
        let key = write(dir.path(), &format!("key-{bits}.jwk"), &file["private_key"].to_string());
        let cases = file["cases"].as_array().unwrap();
        let input: String = cases.iter().map(|c| c["ciphertext"].to_string() + "\n").collect();
        let cts = write(dir.path(), &format!("cts-{bits}.jsonl"), &input);

        let out = ecrt(&["decrypt", "--key", &key, "--in", &cts, "--threads", "2"], "");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let values = stdout_values(&out);
        assert_eq!(values.len(), cases.len());
        for (i, (got, case)) in values.iter().zip(cases).enumerate() {
            // Same JSON number text: ints digit for digit, floats in Python's repr.
            assert_eq!(got.to_string(), case["value"].to_string(), "{bits}-bit case {i}");
        }

        let out = ecrt(&["decrypt", "--key", &key, "--raw"], &input);
        assert!(out.status.success());
        let raw = stdout_values(&out);
        for (got, case) in raw.iter().zip(cases) {
            assert_eq!(got, &case["raw_plaintext"]);
        }
    }
}

#[test]
fn bad_lines_are_reported_by_number_and_the_rest_decrypted() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture(1024);
    let key = write(dir.path(), "key.jwk", &file["private_key"].to_string());
    let case = &file["cases"][3];
    let good = case["ciphertext"].to_string();
    let n = ecrt_golden::phe_format::read_public_key(&file["private_key"].to_string()).unwrap().n().clone();
    let lines = [
        good.clone(),                                                      // 1 good
        "not json".to_string(),                                            // 2
        format!("{{\"v\": \"{}\", \"e\": 0}}", &n * &n),                   // 3 c = n²
        "{\"v\": \"0\", \"e\": 0}".to_string(),                            // 4 c = 0
        n.to_string(),                                                     // 5 gcd(c, n) = n
        format!("{{\"v\": {}, \"e\": \"-32\"}}", case["ciphertext"]["v"]), // 6 exponent is a string
        String::new(),                                                     // 7 empty
        good,                                                              // 8 good
    ];
    let out = ecrt(&["decrypt", "--key", &key], &(lines.join("\n") + "\n"));
    assert_eq!(out.status.code(), Some(1));
    let values = stdout_values(&out);
    assert_eq!(values.len(), 8);
    for i in [0, 7] {
        assert_eq!(values[i].to_string(), case["value"].to_string());
    }
    assert!(values[1..7].iter().all(Value::is_null));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for (line, words) in [
        (2, "not JSON"),
        (3, "not below n²"),
        (4, "is 0"),
        (5, "shares a factor"),
        (6, "`e` must be an integer"),
        (7, "empty line"),
    ] {
        assert!(stderr.contains(&format!("line {line}: ")) && stderr.contains(words), "line {line}: {stderr}");
    }
    assert!(!stderr.contains("line 1:") && !stderr.contains("line 8:"), "{stderr}");
}

#[test]
fn bad_keys_fail_clearly_without_printing_the_primes() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture(1024);
    let jwk = &file["private_key"];
    let secrets: Vec<String> = ["p", "q"].iter().map(|f| jwk[*f].as_str().unwrap().to_string()).collect();
    let key = ecrt_golden::phe_format::read_private_key(&jwk.to_string()).unwrap();
    let decimal_secrets = [key.p().to_string(), key.q().to_string()];
    let mut same = jwk.clone();
    same["q"] = same["p"].clone();
    let mut wrong_n = jwk.clone();
    wrong_n["pub"]["n"] = jwk["p"].clone();
    // An odd composite of p's length in place of p, with n to match.
    let mut composite = jwk.clone();
    let mut rng = rand::thread_rng();
    let odd_composite =
        (1u32..).map(|k| key.p() + 2 * k).find(|x| !ecrt_golden::prime::is_probable_prime(x, 8, &mut rng)).unwrap();
    let b64 = |x: &num_bigint::BigUint| {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(x.to_bytes_be())
    };
    composite["p"] = Value::String(b64(&odd_composite));
    composite["pub"]["n"] = Value::String(b64(&(&odd_composite * key.q())));
    let broken = jwk.to_string()[..100].to_string();
    for (name, text, expected) in [
        ("same", same.to_string(), "p·q does not equal"),
        ("wrong-n", wrong_n.to_string(), "p·q does not equal"),
        ("composite", composite.to_string(), "is not prime"),
        ("broken", broken, "not valid JSON"),
    ] {
        let path = write(dir.path(), name, &text);
        let out = ecrt(&["decrypt", "--key", &path], "1\n");
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{name}: {stderr}");
        for secret in secrets.iter().chain(&decimal_secrets) {
            assert!(!stderr.contains(&secret[..12]), "{name} leaks a prime: {stderr}");
        }
    }
}

#[test]
fn keygen_encrypt_decrypt_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key.jwk");
    let key = key.to_str().unwrap();
    let out = ecrt(&["keygen", "--bits", "512", "--out", key], "");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(key).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let out = ecrt(
        &[
            "encrypt",
            "--key",
            key,
            "--",
            "42",
            "-7",
            "3.5",
            "-0.125",
            "1e-07",
            "12345678901234567890123",
            "oops",
            "inf",
            "1e150",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("value 7: `oops` is not a finite number") && stderr.contains("value 8:"), "{stderr}");
    // 1e150 is an integer-like float (exponent ≥ 0) that exceeds max_int once lowered to −32.
    assert!(stderr.contains("value 9: `1e150` does not fit under this key at exponent -32"), "{stderr}");
    let cts = String::from_utf8(out.stdout).unwrap();
    let good: String = cts.lines().filter(|l| *l != "null").map(|l| l.to_string() + "\n").collect();
    let out = ecrt(&["decrypt", "--key", key], &good);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "42\n-7\n3.5\n-0.125\n1e-07\n12345678901234567890123\n");
    let out = ecrt(&["keygen", "--bits", "100", "--out", key], "");
    assert_eq!(out.status.code(), Some(2));
}

/// `--backend sim` gives the CPU backend's output byte for byte on the 1024-bit phe vectors, with a
/// bad line among them, and the bench's JSON has every field the issue asks for.
#[test]
fn sim_backend_matches_the_cpu_backend() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture(1024);
    let key = write(dir.path(), "key.jwk", &file["private_key"].to_string());
    let mut input: String =
        file["cases"].as_array().unwrap().iter().map(|c| c["ciphertext"].to_string() + "\n").collect();
    input.push_str("{\"v\": \"0\", \"e\": 0}\n");
    let cpu = ecrt(&["decrypt", "--key", &key], &input);
    let sim = ecrt(&["decrypt", "--key", &key, "--backend", "sim", "--cores", "2", "--stream-bits", "64"], &input);
    assert_eq!(cpu.status.code(), Some(1), "the bad last line fails on the CPU");
    assert_eq!(sim.status.code(), Some(1), "and on the simulator: {}", String::from_utf8_lossy(&sim.stderr));
    assert_eq!(String::from_utf8_lossy(&sim.stdout), String::from_utf8_lossy(&cpu.stdout));

    let out = ecrt(&["bench", "--backend", "sim", "--key-bits", "1024", "--count", "3", "--json", "--no-estimate"], "");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    for field in [
        "latency_cycles",
        "latency_cycles_min",
        "latency_cycles_max",
        "cycles_per_decryption",
        "cores",
        "dsp48e1",
        "lut",
        "ff",
        "bram36",
        "dsp_cycles_per_decryption",
        "cores_per_xc7vx690t",
        "projected_decryptions_per_s_100mhz",
        "simulated_cycles_per_s",
        "verified",
    ] {
        assert!(report.get(field).is_some(), "bench JSON lacks {field}");
    }
    assert_eq!(report["verified"], 3);
    assert!(report["latency_cycles"].as_u64().unwrap() > 0);
}
