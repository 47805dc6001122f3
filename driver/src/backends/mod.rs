//! Where decryptions run, under [`crate::api::Decryptor`]: the host's cores ([`cpu`]), the
//! accelerator's Verilator model ([`sim`]), the board behind Xilinx's XDMA driver ([`xdma`]),
//! and an `ecrt serve` that owns the devices and keys ([`service`]). [`BackendKind`] is the one
//! list of them that the command, the service's configuration and the Python package parse.
//!
//! [`Backend`] is the raw layer for backends that decrypt whole batches (the CPU and the
//! Verilator model); the XDMA backend and the service stream.

use crate::engine::Engine;
use anyhow::Context;
use ecrt_contract::config::AcceleratorConfig;
use ecrt_golden::PrivateKey;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

pub mod cpu;
pub mod service;
#[cfg(feature = "sim")]
pub mod sim;
pub mod xdma;

/// A backend by name, as `--backend`, the service's `backend =` and Python's `backend=` spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// The host's cores, OpenSSL's constant-time exponentiation.
    Cpu,
    /// The accelerator's Verilator model.
    Sim,
    /// The accelerator behind Xilinx's XDMA driver (a board, or the emulated device).
    Xdma,
    /// An `ecrt serve` on this host.
    Service,
}

impl BackendKind {
    /// Every backend, in the order help texts list them.
    pub const ALL: [BackendKind; 4] = [BackendKind::Cpu, BackendKind::Sim, BackendKind::Xdma, BackendKind::Service];

    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Sim => "sim",
            BackendKind::Xdma => "xdma",
            BackendKind::Service => "service",
        }
    }

    /// The names, for help texts and errors: "cpu, sim, xdma or service".
    pub fn names() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|k| k.name()).collect();
        let (last, rest) = names.split_last().expect("backends");
        format!("{} or {last}", rest.join(", "))
    }
}

/// Where decryptions run.
#[derive(Debug, Clone)]
pub enum BackendSpec {
    /// eCRT on the host CPU on `threads` threads.
    Cpu { threads: usize },
    /// The accelerator's Verilator model of `config` (its key size must be the key's).
    #[cfg(feature = "sim")]
    Sim { config: AcceleratorConfig, build: ecrt_sim::BuildOptions, progress: bool },
    /// An accelerator behind the XDMA driver: `device` is the nodes' common prefix, e.g.
    /// `/dev/xdma0` for `/dev/xdma0_user`, `/dev/xdma0_h2c_0` and `/dev/xdma0_c2h_0`.
    Xdma { device: PathBuf },
    /// An `ecrt serve` listening at `socket`, which holds the private key: the decryptor needs
    /// only the public key ([`crate::api::Decryptor::connect`]).
    Service { socket: PathBuf },
}

/// What the backends are configured with; each takes what it needs.
#[derive(Debug, Clone, Default)]
pub struct BackendSettings {
    /// The CPU's worker threads (default: one per core).
    pub threads: Option<usize>,
    /// The XDMA device: its nodes' common prefix (default `/dev/xdma0`).
    pub device: Option<PathBuf>,
    /// The service's socket.
    pub socket: Option<PathBuf>,
    /// The simulated accelerator's configuration, but for the key size (the key's).
    pub sim: AcceleratorConfig,
    /// Progress bars on a terminal (the simulator's build and batches).
    pub progress: bool,
}

impl BackendKind {
    /// The backend of this kind, as `settings` configure it, for `key`.
    pub fn spec(self, settings: &BackendSettings, key: &PrivateKey) -> anyhow::Result<BackendSpec> {
        Ok(match self {
            BackendKind::Cpu => BackendSpec::Cpu { threads: crate::batch::thread_count(settings.threads) },
            #[cfg(feature = "sim")]
            BackendKind::Sim => BackendSpec::Sim {
                config: sim::config_for_key(key, &settings.sim),
                build: ecrt_sim::BuildOptions { progress: settings.progress, ..Default::default() },
                progress: settings.progress,
            },
            #[cfg(not(feature = "sim"))]
            BackendKind::Sim => {
                let _ = key;
                anyhow::bail!("this build of ecrt has no sim backend")
            }
            BackendKind::Xdma => {
                BackendSpec::Xdma { device: settings.device.clone().unwrap_or_else(|| PathBuf::from("/dev/xdma0")) }
            }
            BackendKind::Service => BackendSpec::Service {
                socket: settings.socket.clone().context("the service backend needs the service's socket")?,
            },
        })
    }
}

/// The engine of a backend that holds the private key itself (every one but the service's).
pub fn open_engine(spec: &BackendSpec, key: &PrivateKey) -> anyhow::Result<Engine> {
    Ok(match spec {
        BackendSpec::Cpu { threads } => Engine::batched(cpu::CpuBackend::new(key, *threads)?, 64)
            .context("cannot start the CPU backend's thread")?,
        #[cfg(feature = "sim")]
        BackendSpec::Sim { config, build, progress } => {
            let sim = sim::SimBackend::new(key, config, build, *progress, false)?;
            Engine::batched(sim, 4096).context("cannot start the simulator's thread")?
        }
        BackendSpec::Xdma { device } => xdma::open(device, key)?,
        BackendSpec::Service { .. } => anyhow::bail!("the service holds the key: connect to it instead"),
    })
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BackendKind {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == text)
            .ok_or_else(|| format!("the backend is {}, not {:?}", Self::names(), crate::redact::redacted(text)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backends_parse_by_name() {
        for kind in BackendKind::ALL {
            assert_eq!(kind.name().parse(), Ok(kind));
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{kind}\""));
        }
        let error = "gpu".parse::<BackendKind>().unwrap_err();
        assert!(error.contains("cpu, sim, xdma or service"), "{error}");
    }
}
