//! The `sim` backend: the accelerator's Verilator model behind the same [`Backend`] API as the
//! CPU. The key is loaded once through the register block, ciphertexts go in as request frames
//! and plaintexts come back as result frames, exactly as over XDMA; only the transport differs.

use crate::engine::Backend;
use anyhow::Context;
use ecrt_contract::config::AcceleratorConfig;
use ecrt_contract::interface::{self as itf, FrameLayout};
use ecrt_golden::PrivateKey;
use ecrt_sim::accelerator::{AcceleratorSim, OutputPacing, RunReport};
use ecrt_sim::BuildOptions;
use num_bigint::BigUint;
use std::sync::Mutex;

/// The key id the backend commits its key under.
const KEY_ID: u8 = 1;
/// Requests per run of the model (tags are 16 bits; results are matched by tag).
const CHUNK: usize = 4096;

/// A configuration whose Verilator model can decrypt under `key`: the key size sets key_bits.
pub fn config_for_key(key: &PrivateKey, base: &AcceleratorConfig) -> AcceleratorConfig {
    AcceleratorConfig { key_bits: key.public().n().bits() as usize, ..base.clone() }
}

/// The accelerator's Verilator model with one key loaded.
pub struct SimBackend {
    sim: Mutex<AcceleratorSim>,
    config: AcceleratorConfig,
    progress: bool,
}

impl SimBackend {
    /// Builds (or takes from the cache) the model of `config` and loads `key` into it; with
    /// `trace`, the model can write a VCD (`model().model_mut().open_vcd(…)`).
    pub fn new(
        key: &PrivateKey,
        config: &AcceleratorConfig,
        build: &BuildOptions,
        progress: bool,
        trace: bool,
    ) -> anyhow::Result<Self> {
        config.validate()?;
        let hw = ecrt_contract::host::hardware_key(key, config)?;
        let mut sim = AcceleratorSim::build(config, build, trace).context("cannot build the Verilator model")?;
        sim.load_key(&hw, KEY_ID).context("cannot load the key into the model")?;
        Ok(SimBackend { sim: Mutex::new(sim), config: config.clone(), progress })
    }

    /// The configuration simulated.
    pub fn config(&self) -> &AcceleratorConfig {
        &self.config
    }

    /// The model (for measurements beyond decryption).
    pub fn model(&self) -> std::sync::MutexGuard<'_, AcceleratorSim> {
        self.sim.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs one batch of at most 65,536 ciphertexts through the model and returns its record.
    pub fn run(&self, ciphertexts: &[BigUint], pacing: OutputPacing) -> anyhow::Result<RunReport> {
        anyhow::ensure!(ciphertexts.len() <= 1 << 16, "at most 65,536 requests per run (16-bit tags)");
        let layout = FrameLayout::new(self.config.digits(), self.config.stream_bits)?;
        let requests = ciphertexts
            .iter()
            .enumerate()
            .map(|(i, c)| itf::encode_request_words(i as u16, KEY_ID, c, layout.digits, layout.stream_bits))
            .collect::<Result<Vec<_>, _>>()?;
        let bar = crate::batch::progress_bar(ciphertexts.len(), "decrypt (sim)");
        if !self.progress {
            bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        // A decryption takes a fixed number of cycles: far more than that without any stream
        // activity means the model hangs.
        let max_idle = 4 * self.config.cycles_per_decryption_path() as u64 + 10_000;
        let report = self.model().run(&requests, pacing, max_idle, |done| bar.set_position(done as u64))?;
        bar.finish_and_clear();
        Ok(report)
    }
}

impl Backend for SimBackend {
    fn name(&self) -> &'static str {
        "sim"
    }

    fn decrypt_batch(&self, ciphertexts: &[BigUint]) -> anyhow::Result<Vec<Result<BigUint, String>>> {
        let mut out = Vec::with_capacity(ciphertexts.len());
        for chunk in ciphertexts.chunks(CHUNK) {
            let report = self.run(chunk, OutputPacing::Always)?;
            out.extend(report.jobs.into_iter().map(|job| {
                if job.result.is_ok() {
                    Ok(job.result.plaintext)
                } else {
                    Err(format!("the accelerator answered with error status {:#04x}", job.result.status))
                }
            }));
        }
        Ok(out)
    }
}
