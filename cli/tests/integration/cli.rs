//! The `ecrt` command end to end: every phe vector through `ecrt decrypt`, bad lines and bad keys.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn fixture(bits: u32) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../fixtures/vectors/phe-{bits}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `ecrt ARGS` with `stdin`, within a generous limit.
fn ecrt(args: &[&str], stdin: &str) -> Output {
    ecrt_within(args, stdin.as_bytes(), std::time::Duration::from_secs(600))
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
/// bad line among them, and the bench's JSON has every measure's field
/// (docs/background.md#measures-and-targets).
#[test]
fn sim_backend_matches_the_cpu_backend() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture(1024);
    let key = write(dir.path(), "key.jwk", &file["private_key"].to_string());
    // Ints and floats (cases 9 and 10); every vector goes through the same model in ecrt-sim's
    // accelerator tests.
    let cases = file["cases"].as_array().unwrap();
    let mut input: String = [0, 1, 9, 10].iter().map(|&i| cases[i]["ciphertext"].to_string() + "\n").collect();
    input.push_str("{\"v\": \"0\", \"e\": 0}\n");
    let cpu = ecrt(&["decrypt", "--key", &key], &input);
    // The default configuration (the lanes engine, one core): the model of the accelerator's
    // lanes tests, and the bench's below.
    let sim = ecrt(&["decrypt", "--key", &key, "--backend", "sim"], &input);
    assert_eq!(cpu.status.code(), Some(1), "the bad last line fails on the CPU");
    assert_eq!(sim.status.code(), Some(1), "and on the simulator: {}", String::from_utf8_lossy(&sim.stderr));
    assert_eq!(String::from_utf8_lossy(&sim.stdout), String::from_utf8_lossy(&cpu.stdout));

    let bench = ["bench", "--backend", "sim", "--key-bits", "1024", "--count", "3", "--json", "--no-estimate"];
    let out = ecrt(&bench, "");
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

/// `ecrt ARGS` with `stdin` as raw bytes, failing the test if it runs longer than `limit`.
fn ecrt_within(args: &[&str], stdin: &[u8], limit: std::time::Duration) -> Output {
    use std::io::{Read, Write};
    let mut child = Command::new(env!("CARGO_BIN_EXE_ecrt"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (mut input, mut stdout, mut stderr) =
        (child.stdin.take().unwrap(), child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let stdin = stdin.to_vec();
    // A command that fails early may close its stdin unread.
    let writer = std::thread::spawn(move || drop(input.write_all(&stdin)));
    let out_reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        stdout.read_to_end(&mut bytes).map(|_| bytes).unwrap_or_default()
    });
    let err_reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        stderr.read_to_end(&mut bytes).map(|_| bytes).unwrap_or_default()
    });
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`ecrt {}` ran longer than {limit:?}", args.join(" "));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    writer.join().unwrap();
    Output { status, stdout: out_reader.join().unwrap(), stderr: err_reader.join().unwrap() }
}

const SECONDS_10: std::time::Duration = std::time::Duration::from_secs(10);

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn b64(x: &num_bigint::BigUint) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(x.to_bytes_be())
}

/// A private key is written 0600 into a new file renamed into place, replaces nothing without
/// `--force`, and --out and --public-out cannot name one file.
#[test]
fn keygen_writes_keys_0600_and_replaces_nothing_without_force() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("x.jwk");
    std::fs::write(&key, "an older key").unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let key_arg = key.to_str().unwrap();
    let out = ecrt(&["keygen", "--bits", "512", "--out", key_arg], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("exists; pass --force to replace it"));
    assert_eq!(std::fs::read_to_string(&key).unwrap(), "an older key");

    let out = ecrt(&["keygen", "--bits", "512", "--out", key_arg, "--force"], "");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(mode(&key), 0o600, "the replaced key keeps none of the old file's mode");
    ecrt_golden::phe_format::read_private_key(&std::fs::read_to_string(&key).unwrap()).unwrap();

    // One file named twice, even spelled differently: refused before anything is written.
    let same = dir.path().join("same.jwk");
    let same_again = dir.path().join(".").join("same.jwk");
    for extra in [&[][..], &["--force"][..]] {
        let mut args = vec!["keygen", "--bits", "512", "--out", same.to_str().unwrap()];
        args.extend(["--public-out", same_again.to_str().unwrap()]);
        args.extend(extra);
        let out = ecrt(&args, "");
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--out and --public-out name the same file"), "{stderr}");
        assert!(!same.exists());
    }

    // An existing public key file is not replaced either, and then no private key is made.
    let public = dir.path().join("x.pub");
    std::fs::write(&public, "kept").unwrap();
    let fresh = dir.path().join("fresh.jwk");
    let out = ecrt(&["keygen", "--out", fresh.to_str().unwrap(), "--public-out", public.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(!fresh.exists());
    assert_eq!(std::fs::read_to_string(&public).unwrap(), "kept");
    let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["x.jwk", "x.pub"], "no temporary file is left behind");
}

/// `ecrt demo --out DIR` does not replace a key in DIR without `--force` (nor start its work).
#[test]
fn demo_replaces_no_key_without_force() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key.jwk");
    std::fs::write(&key, "someone's key").unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = ecrt_within(&["demo", "--out", dir.path().to_str().unwrap()], b"", SECONDS_10);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("key.jwk exists; pass --force"));
    assert_eq!(std::fs::read_to_string(&key).unwrap(), "someone's key");
}

/// A line that is not UTF-8 is that line's error, for `decrypt` (stdin and --in) and `encrypt --in`.
#[test]
fn invalid_utf8_fails_its_line_alone() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture(1024);
    let key = write(dir.path(), "key.jwk", &file["private_key"].to_string());
    let case = &file["cases"][3];
    let good = case["ciphertext"].to_string();
    let input = [good.as_bytes(), b"\n\xff\n", good.as_bytes(), b"\n"].concat();
    let path = dir.path().join("cts.jsonl");
    std::fs::write(&path, &input).unwrap();
    let from_file = ["decrypt", "--key", &key, "--in", path.to_str().unwrap()];
    for (args, stdin) in [(&["decrypt", "--key", &key][..], &input[..]), (&from_file[..], &b""[..])] {
        let out = ecrt_within(args, stdin, SECONDS_10 * 6);
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
        let value = case["value"].to_string();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("{value}\nnull\n{value}\n"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("line 2: the line is not UTF-8 text (invalid byte at column 1)"), "{stderr}");
    }

    let numbers = dir.path().join("numbers.txt");
    std::fs::write(&numbers, b"42\n\xc3\x28\n7\n").unwrap();
    let out = ecrt_within(&["encrypt", "--key", &key, "--in", numbers.to_str().unwrap()], b"", SECONDS_10 * 6);
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(String::from).collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with("{\"v\": ") && lines[1] == "null" && lines[2].starts_with("{\"v\": "), "{lines:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("value 2: the line is not UTF-8"));
}

/// `--timeout` is 0 or at most a day: anything else is refused with the range, never a panic.
#[test]
fn timeouts_out_of_range_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture(1024);
    let key = write(dir.path(), "key.jwk", &file["private_key"].to_string());
    let device = dir.path().join("none").join("xdma0");
    for timeout in ["1e20", "1e19", "86400.5", "-1", "nan", "inf", "soon"] {
        for backend in [&["--backend", "cpu"][..], &["--backend", "xdma", "--device", device.to_str().unwrap()]] {
            let flag = format!("--timeout={timeout}");
            let out = ecrt_within(&[&["decrypt", "--key", &key, &flag][..], backend].concat(), b"1\n", SECONDS_10);
            assert_eq!(out.status.code(), Some(2), "{timeout}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains("--timeout") && stderr.contains("86400"), "{timeout}: {stderr}");
            assert!(!stderr.contains("panicked"), "{stderr}");
        }
    }
    let good = file["cases"][0]["ciphertext"].to_string() + "\n";
    let out = ecrt_within(&["decrypt", "--key", &key, "--timeout", "86400"], good.as_bytes(), SECONDS_10 * 6);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Key files are small regular files, opened without blocking; key sizes are checked (with the
/// supported range in the message) before any primality test or exponentiation.
#[test]
fn key_files_and_key_sizes_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.jwk");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let big = dir.path().join("big.jwk");
    std::fs::write(&big, vec![b' '; 2 << 20]).unwrap();
    for (path, expected) in [
        ("/dev/zero", "/dev/zero is a character device, not a key file"),
        (fifo.to_str().unwrap(), "is a FIFO, not a key file"),
        (big.to_str().unwrap(), "is larger than 1024 KiB"),
    ] {
        for command in ["decrypt", "encrypt"] {
            let mut args = vec![command, "--key", path];
            if command == "encrypt" {
                args.extend(["--", "1"]);
            }
            let out = ecrt_within(&args, b"", SECONDS_10);
            assert_eq!(out.status.code(), Some(2));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains(expected), "{command} {path}: {stderr}");
        }
    }

    // p and q of 166,100 bits each (primes or not: the size is refused first), and n = p·q.
    let mut rng = rand::thread_rng();
    let prime_sized = |rng: &mut rand::rngs::ThreadRng| {
        let x = num_bigint::RandBigInt::gen_biguint(rng, 166_100);
        x | (num_bigint::BigUint::from(1u32) << 166_099u32) | num_bigint::BigUint::from(1u32)
    };
    let (p, q) = (prime_sized(&mut rng), prime_sized(&mut rng));
    let n = &p * &q;
    let public = serde_json::json!({"kty": "DAJ", "alg": "PAI-GN1", "key_ops": ["encrypt"], "n": b64(&n)});
    let private = serde_json::json!({"kty": "DAJ", "key_ops": ["decrypt"], "p": b64(&p), "q": b64(&q), "pub": public});
    let private_path = write(dir.path(), "huge.jwk", &private.to_string());
    let public_path = write(dir.path(), "huge.pub", &public.to_string());
    let small = ecrt_golden::PrivateKey::generate(256, &mut rng).unwrap();
    let small_path = write(dir.path(), "small.jwk", &ecrt_golden::phe_format::write_private_key(&small, "t"));
    for (args, bits) in [
        (vec!["decrypt", "--key", &private_path], n.bits()),
        (vec!["encrypt", "--key", &public_path, "--", "1"], n.bits()),
        (vec!["encrypt", "--key", &private_path, "--", "1"], n.bits()),
        (vec!["decrypt", "--key", &small_path], 256),
    ] {
        let out = ecrt_within(&args, b"1\n", SECONDS_10);
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        let expected = format!("the key's modulus n has {bits} bits; ecrt supports keys of 512 to 8192 bits");
        assert!(stderr.contains(&expected), "{args:?}: {stderr}");
        assert!(!stderr.contains(&b64(&p)[..16]), "{stderr}");
    }
}

/// `ecrt serve --config` reads its file as a key file is read: a device, a FIFO with no writer or
/// an oversized file is refused at once, never read to exhaustion or waited on.
#[test]
fn serve_configurations_are_bounded_like_key_files() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.toml");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let big = write(dir.path(), "big.toml", &format!("# {}\n", "x".repeat(2 << 20)));
    let socket = dir.path().join("s.sock");
    for (path, expected) in [
        ("/dev/zero", "/dev/zero is a character device, not a configuration file"),
        (fifo.to_str().unwrap(), "is a FIFO, not a configuration file"),
        (&big, "is larger than 1024 KiB: not a configuration file"),
    ] {
        let out = ecrt_within(&["serve", "--config", path, "--socket", socket.to_str().unwrap()], b"", SECONDS_10);
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{path}: {stderr}");
    }
    assert!(!socket.exists());
}

/// An over-long line is that line's error (its bytes are skipped, never held) and the lines after
/// it are still answered; --out cannot be --in, which it would truncate before reading.
#[test]
fn long_lines_fail_alone_and_the_output_cannot_be_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture(1024);
    let key = write(dir.path(), "key.jwk", &file["private_key"].to_string());
    let case = &file["cases"][3];
    let good = case["ciphertext"].to_string();
    let long = "7".repeat(100_000);
    let input = format!("{good}\n{long}\n{good}");
    let out = ecrt_within(&["decrypt", "--key", &key], input.as_bytes(), SECONDS_10 * 6);
    assert_eq!(out.status.code(), Some(1));
    let value = case["value"].to_string();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("{value}\nnull\n{value}\n"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("line 2: the line is longer than 65536 bytes (skipped)"), "{stderr}");

    let out = ecrt_within(&["encrypt", "--key", &key], format!("1\n{long}\n2\n").as_bytes(), SECONDS_10 * 6);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().filter(|l| *l == "null").count(), 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("value 2: the line is longer than 65536 bytes"));

    let cts = write(dir.path(), "cts.jsonl", &input);
    let same = dir.path().join(".").join("cts.jsonl");
    let out = ecrt_within(&["decrypt", "--key", &key, "--in", &cts, "--out", same.to_str().unwrap()], b"", SECONDS_10);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--out and --in name the same file"));
    assert_eq!(std::fs::read_to_string(&cts).unwrap(), input);
}

/// A ciphertext whose exponent makes a huge integer gets null and its line number, not megabytes.
#[test]
fn huge_exponents_fail_their_line_instead_of_flooding_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture(1024);
    let key = write(dir.path(), "key.jwk", &file["private_key"].to_string());
    let v = &file["cases"][3]["ciphertext"]["v"];
    let input = format!("{{\"v\": {v}, \"e\": 1000000}}\n{{\"v\": {v}, \"e\": 0}}\n");
    let out = ecrt_within(&["decrypt", "--key", &key], input.as_bytes(), SECONDS_10 * 6);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "null");
    assert!(lines.len() == 2 && lines[1].parse::<num_bigint::BigInt>().is_ok() && stdout.len() < 2000, "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("line 1: the value is an integer of more than 4300 digits (exponent 1000000)"), "{stderr}");
}

/// `--device` must name the XDMA driver's character devices (or `ecrt emulate`'s FUSE nodes):
/// regular files in their place are refused before any register write.
#[test]
fn device_nodes_that_are_regular_files_are_refused_untouched() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = fixture(1024);
    let key = write(dir.path(), "key.jwk", &file["private_key"].to_string());
    let nodes: Vec<PathBuf> =
        ["_user", "_h2c_0", "_c2h_0"].iter().map(|s| dir.path().join(format!("xdma0{s}"))).collect();
    for node in &nodes {
        std::fs::write(node, b"").unwrap();
        std::fs::set_permissions(node, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let device = dir.path().join("xdma0");
    let good = file["cases"][0]["ciphertext"].to_string() + "\n";
    let args = ["decrypt", "--key", &key, "--backend", "xdma", "--device", device.to_str().unwrap()];
    let out = ecrt_within(&args, good.as_bytes(), SECONDS_10);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("xdma0_user is a regular file, not the XDMA driver's character device"), "{stderr}");
    for node in &nodes {
        assert_eq!(std::fs::metadata(node).unwrap().len(), 0, "{} was written", node.display());
    }
}

/// `ecrt explore` on a small sweep: explore.json with one point per configuration, its cycles the
/// configuration's formulas (checked against Verilator in ecrt-sim's accelerator tests), the
/// resources estimated, the Pareto front marked, and the plot drawn; bad sweeps and an unusable
/// font fail clearly. One point (its Yosys units are most of the test's time; the front among
/// several points is `ecrt-lab`'s unit tests'), the configuration ecrt-sim's DSP-leaf test then
/// finds in the estimate cache.
#[test]
fn explore_sweeps_projects_and_plots() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("explore");
    // On the two-slot engine: the lanes engine's Yosys units would double the test's time.
    let sweep = [
        "explore",
        "--key-bits",
        "512",
        "--digits-per-step",
        "1",
        "--schedule",
        "windows",
        "--window-bits",
        "4",
        "--engine",
        "slots",
        "--no-timing",
    ];
    let out = ecrt(&[&sweep[..], &["--out", out_dir.to_str().unwrap()]].concat(), "");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("cyc/core") && table.contains("Pareto"), "{table}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(out_dir.join("explore.json")).unwrap()).unwrap();
    let points = report["points"].as_array().unwrap();
    assert_eq!(points.len(), 1);
    for p in points {
        let config: ecrt_contract::config::AcceleratorConfig = serde_json::from_value(p["config"].clone()).unwrap();
        assert_eq!(p["latency_cycles"], config.latency_cycles());
        assert_eq!(p["cycles_per_decryption_per_core"], config.cycles_per_decryption_per_core());
        assert!(p["dsp48e1"].as_u64().unwrap() > 0 && p["lut"].as_u64().unwrap() > 0, "{p}");
        assert!(p["cores_per_xc7vx690t"].as_u64().unwrap() >= 1, "{p}");
        assert!(p["logic_delay_ns"].is_null(), "--no-timing");
    }
    assert_eq!(points[0]["schedule"], serde_json::json!("windows"));
    assert_eq!(points[0]["pareto"], true);
    let svg = std::fs::read_to_string(out_dir.join("pareto.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("Pareto front") && svg.contains("k = 1 limbs per step"));

    let bad = ecrt(&["explore", "--digits-per-step", "0", "--no-timing", "--out", out_dir.to_str().unwrap()], "");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--digits-per-step 0"));
    let bad = ecrt(&["explore", "--schedule", "spiral", "--no-timing", "--out", out_dir.to_str().unwrap()], "");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("`windows` or `segmented`"));
    let not_a_font = write(dir.path(), "font.ttf", "not a font");
    let bad = Command::new(env!("CARGO_BIN_EXE_ecrt"))
        .args(sweep)
        .arg("--out")
        .arg(&out_dir)
        .env("ECRT_FONT", &not_a_font)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a usable TrueType font"));
}
