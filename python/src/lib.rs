//! `ecrt._ecrt`: the native half of the Python package. It opens a key in a backend of the driver
//! and decrypts whole batches with the GIL released; `ecrt/__init__.py` is the friendly API
//! (phe's objects, errors as exceptions, progress bars) over it.
//!
//! A batch comes back as one entry per item: its value, or `(kind, message)` naming the Python
//! exception class the package raises for it. Messages never show p, q or λ.

use ecrt_driver::api::{timeout_from_seconds, BackendSpec, Decryptor, ItemError, Options};
use ecrt_driver::backends::{BackendKind, BackendSettings};
use ecrt_driver::key_file::{check_key_size, private_key_from_primes, read_private_key_file, read_public_key_file};
use ecrt_golden::encoding::{decode, DecodeError, Encoded, Value};
use ecrt_golden::{PrivateKey, PublicKey};
use num_bigint::BigUint;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyList, PyTuple};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pyo3::create_exception!(
    ecrt,
    DeviceError,
    PyRuntimeError,
    "The backend cannot be used: no device, a bitstream for another key size, a C2H node another \
     process holds, a failed Verilator build."
);

/// How often a batch takes the GIL back: to look for Ctrl-C and to advance the progress bar.
const TICK: Duration = Duration::from_millis(100);

/// One decrypted item, before it is turned into a Python object.
enum Outcome {
    Raw(BigUint),
    Decoded(Value),
    Failed(&'static str, String),
}

/// A key loaded into a backend (`ecrt.Decryptor` holds one).
#[pyclass(module = "ecrt._ecrt", name = "_Decryptor")]
struct PyDecryptor {
    /// Locked with the GIL released: a batch takes the GIL back while it holds this lock.
    decryptor: Mutex<Option<Decryptor>>,
    n: BigUint,
    backend: &'static str,
    queue_depth: usize,
    /// For the service backend: how to connect again after the service went away.
    reconnect: Option<(PathBuf, PublicKey, Options)>,
}

#[pymethods]
impl PyDecryptor {
    /// Opens `backend` with the key: `key_file` (a pheutil/ecrt JWK file) or `primes` (n, p, q);
    /// or connects to the service at `socket` (`backend="service"`), under the key of `public_n`
    /// or `key_file` (a public key file does).
    #[new]
    #[pyo3(signature = (*, key_file=None, primes=None, public_n=None, backend="cpu", threads=None, device=None, socket=None, queue_depth=256, timeout=None, cores=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        key_file: Option<PathBuf>,
        primes: Option<(BigUint, BigUint, BigUint)>,
        public_n: Option<BigUint>,
        backend: &str,
        threads: Option<usize>,
        device: Option<PathBuf>,
        socket: Option<PathBuf>,
        queue_depth: usize,
        timeout: Option<f64>,
        cores: Option<usize>,
    ) -> PyResult<Self> {
        let timeout = match timeout {
            None => None,
            Some(t) => timeout_from_seconds(t).map_err(|e| PyValueError::new_err(format!("timeout {t}: {e}")))?,
        };
        let options = Options { queue_depth, timeout };
        options.check().map_err(|e| PyValueError::new_err(e.to_string()))?;
        if backend == "service" {
            let socket = socket.ok_or_else(|| PyValueError::new_err("the service backend needs socket="))?;
            let public = py
                .detach(|| service_public_key(key_file, primes, public_n))
                .map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
            let decryptor = py
                .detach(|| Decryptor::connect(&socket, &public, options))
                .map_err(|e| DeviceError::new_err(format!("{e:#}")))?;
            return Ok(PyDecryptor {
                backend: decryptor.backend_name(),
                decryptor: Mutex::new(Some(decryptor)),
                n: public.n().clone(),
                queue_depth,
                reconnect: Some((socket, public, options)),
            });
        }
        let key = py.detach(|| open_key(key_file, primes)).map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
        let spec = backend_spec(backend, &key, threads, device, cores)?;
        let decryptor = py
            .detach(|| Decryptor::open(&spec, &key, options))
            .map_err(|e| DeviceError::new_err(format!("cannot open the {backend} backend: {e:#}")))?;
        Ok(PyDecryptor {
            backend: decryptor.backend_name(),
            decryptor: Mutex::new(Some(decryptor)),
            n: key.public().n().clone(),
            queue_depth,
            reconnect: None,
        })
    }

    /// The public modulus n.
    #[getter]
    fn n(&self) -> BigUint {
        self.n.clone()
    }

    /// The backend's name, as `backend=` spells it.
    #[getter]
    fn backend(&self) -> &'static str {
        self.backend
    }

    /// What the backend reports about itself.
    #[getter]
    fn description(&self, py: Python<'_>) -> String {
        self.with_decryptor(py, |d| d.description().to_owned()).unwrap_or_else(|_| "closed".to_owned())
    }

    /// Whether `close` has run.
    #[getter]
    fn closed(&self, py: Python<'_>) -> bool {
        self.with_decryptor(py, |_| ()).is_err()
    }

    /// Decrypts `ciphertexts` (a list of ints, or of `None` for an item already refused).
    /// With `exponents`, each plaintext is decoded as phe's `EncodedNumber.decode` does.
    /// `progress(done)` is called every 100 ms with the number of items finished.
    #[pyo3(signature = (ciphertexts, exponents=None, progress=None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        ciphertexts: &Bound<'py, PyList>,
        exponents: Option<Vec<i64>>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let count = ciphertexts.len();
        if exponents.as_ref().is_some_and(|e| e.len() != count) {
            return Err(PyValueError::new_err("one exponent per ciphertext"));
        }
        let mut inputs = Vec::with_capacity(count);
        for item in ciphertexts.iter() {
            inputs.push(match item.extract::<BigUint>() {
                Ok(c) => Ok(c),
                Err(_) if item.is_none() => Err(("skip", String::new())),
                Err(_) => Err(not_a_ciphertext(&item)),
            });
        }
        if let Some((socket, public, options)) = &self.reconnect {
            self.with_decryptor(py, |d| {
                if d.pending() == 0 {
                    d.try_next(); // takes in a failure already reported: nothing is pending to lose
                }
                if d.failure().is_some() {
                    // The service went away since the last batch: connect again (it may be back).
                    *d = Decryptor::connect(socket, public, *options)?;
                }
                Ok::<_, anyhow::Error>(())
            })?
            .map_err(|e| DeviceError::new_err(format!("{e:#}")))?;
        }
        let depth = self.queue_depth;
        let n = &self.n;
        let outcomes = self.with_decryptor(py, |d| run_batch(d, inputs, depth, progress.as_ref()))??;
        let outcomes = py.detach(|| decode_all(n, outcomes, exponents.as_deref()));
        let list = PyList::empty(py);
        for outcome in outcomes {
            match outcome {
                Outcome::Raw(m) => list.append(m)?,
                Outcome::Decoded(Value::Int(i)) => list.append(i)?,
                Outcome::Decoded(Value::Float(x)) => list.append(PyFloat::new(py, x))?,
                Outcome::Failed(kind, message) => list.append(PyTuple::new(py, [kind, message.as_str()])?)?,
            }
        }
        Ok(list)
    }

    /// Waits for the items in flight and releases the backend (the device's nodes, the threads).
    fn close(&self, py: Python<'_>) {
        py.detach(|| {
            if let Some(decryptor) = self.lock().take() {
                drop(decryptor.close());
            }
        })
    }
}

impl PyDecryptor {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Decryptor>> {
        // A panic inside a batch leaves the decryptor as it was; keep using it.
        self.decryptor.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `f` on the open decryptor, with the GIL released while waiting for it and while `f` runs.
    fn with_decryptor<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut Decryptor) -> T + Send) -> PyResult<T> {
        py.detach(|| self.lock().as_mut().map(f)).ok_or_else(|| PyValueError::new_err("the Decryptor is closed"))
    }
}

/// The backend `backend=` names, with its options.
fn backend_spec(
    backend: &str,
    key: &PrivateKey,
    threads: Option<usize>,
    device: Option<PathBuf>,
    cores: Option<usize>,
) -> PyResult<BackendSpec> {
    if threads == Some(0) {
        return Err(PyValueError::new_err("threads must be at least 1"));
    }
    let kind: BackendKind = backend.parse().map_err(|_| {
        let names: Vec<String> = BackendKind::ALL.iter().map(|k| format!("\"{k}\"")).collect();
        let (last, rest) = names.split_last().expect("backends");
        let given = ecrt_driver::redact::redacted(backend);
        PyValueError::new_err(format!("backend must be {} or {last}, not \"{given}\"", rest.join(", ")))
    })?;
    if kind == BackendKind::Service {
        return Err(PyValueError::new_err("the service backend needs socket="));
    }
    let defaults = ecrt_contract::config::AcceleratorConfig::default();
    let settings = BackendSettings {
        threads,
        device,
        socket: None,
        sim: ecrt_contract::config::AcceleratorConfig { cores: cores.unwrap_or(defaults.cores), ..defaults },
        progress: false,
    };
    kind.spec(&settings, key).map_err(|e| PyValueError::new_err(format!("{e:#}")))
}

/// The public key a service client decrypts under: n itself, a key file's public half, or the
/// n of the primes.
fn service_public_key(
    key_file: Option<PathBuf>,
    primes: Option<(BigUint, BigUint, BigUint)>,
    public_n: Option<BigUint>,
) -> anyhow::Result<PublicKey> {
    match (key_file, primes, public_n) {
        (None, None, Some(n)) | (None, Some((n, _, _)), None) => {
            check_key_size(n.bits())?;
            Ok(PublicKey::new(n)?)
        }
        (Some(path), None, None) => read_public_key_file(&path),
        _ => anyhow::bail!("give one key: a key file, the primes or n"),
    }
}

/// The key, from its file or its primes, validated; errors name the check, never a secret.
fn open_key(key_file: Option<PathBuf>, primes: Option<(BigUint, BigUint, BigUint)>) -> anyhow::Result<PrivateKey> {
    match (key_file, primes) {
        (Some(path), None) => read_private_key_file(&path),
        (None, Some((n, p, q))) => {
            private_key_from_primes(&n, p, q).map_err(|e| anyhow::anyhow!("invalid private key: {e:#}"))
        }
        _ => anyhow::bail!("give a key file or the primes (this backend needs the private key)"),
    }
}

fn not_a_ciphertext(item: &Bound<'_, PyAny>) -> (&'static str, String) {
    let type_name = item.get_type().name().map_or_else(|_| "?".to_owned(), |n| n.to_string());
    match item.extract::<num_bigint::BigInt>() {
        Ok(_) => ("ValueError", "a ciphertext is an integer 0 < c < n², this one is negative".to_owned()),
        Err(_) => ("TypeError", format!("a ciphertext is an int, not {type_name}")),
    }
}

/// Submits every valid ciphertext, at most `depth` in flight, and collects the plaintexts in order.
/// Takes the GIL every [`TICK`] to look for Ctrl-C (then drains what is in flight, so the
/// decryptor stays usable, and raises `KeyboardInterrupt`) and to report progress.
fn run_batch(
    decryptor: &mut Decryptor,
    inputs: Vec<Result<BigUint, (&'static str, String)>>,
    depth: usize,
    progress: Option<&Py<PyAny>>,
) -> PyResult<Vec<Outcome>> {
    let mut outcomes: Vec<Option<Outcome>> = Vec::with_capacity(inputs.len());
    // The item each submission stands for, in submission order (completions come in that order).
    let mut submitted = std::collections::VecDeque::new();
    let mut done = 0usize;
    let mut inputs = inputs.into_iter().enumerate();
    let mut last_tick = Instant::now();
    let mut exhausted = false;
    loop {
        while !exhausted && decryptor.pending() < depth {
            match inputs.next() {
                Some((index, Ok(c))) => {
                    outcomes.push(None);
                    decryptor.submit(c);
                    submitted.push_back(index);
                }
                Some((_, Err((kind, message)))) => outcomes.push(Some(Outcome::Failed(kind, message))),
                None => exhausted = true,
            }
        }
        if exhausted && decryptor.pending() == 0 {
            break;
        }
        if let Some(completion) = decryptor.wait_next_for(TICK) {
            let index = submitted.pop_front().expect("one completion per submission");
            outcomes[index] = Some(match completion.result {
                Ok(m) => Outcome::Raw(m),
                Err(e) => Outcome::Failed(error_kind(&e), e.to_string()),
            });
            done += 1;
        }
        if last_tick.elapsed() >= TICK {
            last_tick = Instant::now();
            let interrupted = Python::attach(|py| -> PyResult<()> {
                py.check_signals()?;
                if let Some(report) = progress {
                    report.call1(py, (done,))?;
                }
                Ok(())
            });
            if let Err(e) = interrupted {
                while decryptor.pending() > 0 {
                    decryptor.wait_next_for(TICK);
                }
                return Err(e);
            }
        }
    }
    if let Some(report) = progress {
        Python::attach(|py| report.call1(py, (done,)))?;
    }
    Ok(outcomes.into_iter().map(|o| o.expect("every item answered")).collect())
}

/// The Python exception an item error becomes.
fn error_kind(e: &ItemError) -> &'static str {
    match e {
        ItemError::Invalid(_) => "ValueError",
        ItemError::Status(_)
        | ItemError::Corrupted(_)
        | ItemError::Backend(_)
        | ItemError::Timeout(_)
        | ItemError::Lost(_) => "DeviceError",
    }
}

/// phe's decoding of each plaintext, with the exponent that came with its ciphertext.
fn decode_all(n: &BigUint, outcomes: Vec<Outcome>, exponents: Option<&[i64]>) -> Vec<Outcome> {
    let Some(exponents) = exponents else { return outcomes };
    outcomes
        .into_iter()
        .zip(exponents)
        .map(|(outcome, &exponent)| match outcome {
            Outcome::Raw(encoding) => match decode(n, &Encoded { encoding, exponent }) {
                Ok(value) => Outcome::Decoded(value),
                Err(e @ (DecodeError::Overflow | DecodeError::FloatOverflow)) => {
                    Outcome::Failed("OverflowError", e.to_string())
                }
                Err(e) => Outcome::Failed("ValueError", e.to_string()),
            },
            other => other,
        })
        .collect()
}

#[pymodule]
fn _ecrt(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDecryptor>()?;
    m.add("DeviceError", m.py().get_type::<DeviceError>())?;
    m.add("MAX_QUEUE_DEPTH", ecrt_driver::api::MAX_QUEUE_DEPTH)?;
    Ok(())
}
