//! The whole accelerator ([`ecrt_hdl::shell::accelerator::Accelerator`]) in Verilator, driven the
//! way the XDMA IP drives it: registers over AXI4-Lite, request frames into the AXI4-Stream slave,
//! result frames out of the master, with back-pressure on both sides. Framing and register offsets
//! come from [`ecrt_contract::interface`], as in the driver.
//!
//! The streams are driven either a batch at a time ([`AcceleratorSim::run`]) or cycle by cycle
//! ([`AcceleratorSim::cycle`], which `run` is built on and the driver's XDMA emulator uses).

use crate::{BuildOptions, Model, ModelSpec, PortId, Result, SimError};
use ecrt_contract::config::AcceleratorConfig;
use ecrt_contract::host::HardwareKey;
use ecrt_contract::interface::{self as itf, FrameLayout, ResultFrame};
use ecrt_hdl::emit::{emit, Emitted, Manifest};
use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Cycles an AXI4-Lite transaction may take before the model is declared hung.
const AXIL_TIMEOUT: u64 = 64;

struct AxiLite {
    awaddr: PortId,
    awvalid: PortId,
    awready: PortId,
    wdata: PortId,
    wstrb: PortId,
    wvalid: PortId,
    wready: PortId,
    bvalid: PortId,
    bready: PortId,
    araddr: PortId,
    arvalid: PortId,
    arready: PortId,
    rdata: PortId,
    rvalid: PortId,
    rready: PortId,
}

struct Stream {
    data: Vec<PortId>,
    valid: PortId,
    ready: PortId,
    last: PortId,
}

/// What the model's stream inputs are driven to now: [`AcceleratorSim::cycle`] writes a port only
/// when its value changes, and evaluates the model only then.
#[derive(Default)]
struct Driven {
    input_data: Vec<u32>,
    input_last: bool,
    input_valid: bool,
    output_ready: bool,
}

pub use ecrt_contract::interface::{CycleIo, OutputBeat};

/// One request's passage through the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRecord {
    /// What came back.
    pub result: ResultFrame,
    /// The cycle the request's first beat was accepted.
    pub first_in: u64,
    /// The cycle the result's last beat left.
    pub last_out: u64,
}

impl JobRecord {
    /// Cycles from the first input beat to the last output beat.
    pub fn latency(&self) -> u64 {
        self.last_out - self.first_in
    }
}

/// When the host side reads results: every cycle, or with stalls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OutputPacing {
    /// TREADY always high.
    Always,
    /// TREADY high in the first `ready` cycles of every `period` (back-pressure).
    Duty {
        /// Cycles with TREADY high.
        ready: u64,
        /// The pattern's length in cycles.
        period: u64,
    },
}

/// A finished run.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// One record per request, in request order (results matched by tag).
    pub jobs: Vec<JobRecord>,
    /// Cycles from the first beat offered to the last beat received.
    pub cycles: u64,
    /// Wall time of the run.
    pub elapsed: Duration,
}

impl RunReport {
    /// Simulated cycles per second of wall time.
    pub fn cycles_per_second(&self) -> f64 {
        self.cycles as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// A Verilator model of the accelerator.
pub struct AcceleratorSim {
    model: Model,
    axil: AxiLite,
    input: Stream,
    output: Stream,
    driven: Driven,
    manifest: Manifest,
    layout: FrameLayout,
}

impl ecrt_contract::session::RegisterBus for AcceleratorSim {
    type Error = SimError;
    fn read(&mut self, offset: u32) -> Result<u32> {
        self.read_register(offset)
    }
    fn write(&mut self, offset: u32, value: u32) -> Result<()> {
        self.write_register(offset, value)
    }
}

/// The accelerator's Verilog for `config`, emitted once per process and kept on disk under the
/// cache directory: rust-hdl takes tens of seconds to emit a full-width design, and test
/// processes, emulators and the Python package build the same configurations again and again (the
/// Verilator model itself is cached by the Verilog's content).
fn emitted(config: &AcceleratorConfig, cache_dir: &Path) -> Result<Arc<Emitted>> {
    type Slot = Arc<OnceLock<std::result::Result<Arc<Emitted>, String>>>;
    static EMITTED: OnceLock<Mutex<HashMap<String, Slot>>> = OnceLock::new();
    let key = serde_json::to_string(config).map_err(|e| SimError::Spec(e.to_string()))?;
    let slot = {
        let mut slots = EMITTED.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(slots.entry(key).or_default())
    };
    // Outside the map's lock: other configurations emit meanwhile; this one's callers wait here.
    slot.get_or_init(|| emitted_on_disk(config, cache_dir).map(Arc::new).map_err(|e| e.to_string()))
        .clone()
        .map_err(SimError::Spec)
}

/// `config`'s Verilog and manifest from `<cache_dir>/emitted/`, emitted and stored there first if
/// missing. The entry's key covers the configuration and a fingerprint of every source the
/// emission reads (sim/build.rs), so a changed HDL never meets a stale entry. An unreadable or
/// unwritable cache only costs the emission.
fn emitted_on_disk(config: &AcceleratorConfig, cache_dir: &Path) -> std::result::Result<Emitted, String> {
    let config_json = serde_json::to_string(config).map_err(|e| e.to_string())?;
    let key = crate::cache::content_key(&[env!("ECRT_EMIT_FINGERPRINT").as_bytes(), config_json.as_bytes()]);
    let dir = cache_dir.join("emitted");
    let (verilog_path, manifest_path) = (dir.join(format!("{key}.v")), dir.join(format!("{key}.manifest.json")));
    // The manifest is written last: where it is, the Verilog is whole.
    let cached = std::fs::read_to_string(&manifest_path).ok().and_then(|m| serde_json::from_str::<Manifest>(&m).ok());
    if let Some(manifest) = cached.filter(|m| &m.config == config) {
        if let Ok(verilog) = std::fs::read_to_string(&verilog_path) {
            return Ok(Emitted { verilog, manifest });
        }
    }
    let emitted = emit(config).map_err(|e| e.to_string())?;
    let store = || -> std::io::Result<()> {
        std::fs::create_dir_all(&dir)?;
        for (path, text) in
            [(&verilog_path, &emitted.verilog), (&manifest_path, &serde_json::to_string(&emitted.manifest)?)]
        {
            let mut staged = tempfile::NamedTempFile::new_in(&dir)?;
            std::io::Write::write_all(&mut staged, text.as_bytes())?;
            staged.persist(path).map_err(|e| e.error)?;
        }
        Ok(())
    };
    let _ = store();
    Ok(emitted)
}

impl AcceleratorSim {
    /// Emits `config`'s RTL and builds (or loads from the cache) its Verilator model.
    pub fn build(config: &AcceleratorConfig, options: &BuildOptions, trace: bool) -> Result<Self> {
        let emitted = emitted(config, &options.cache_dir)?;
        let layout =
            FrameLayout::new(config.digits(), config.stream_bits).map_err(|e| SimError::Spec(e.to_string()))?;
        let spec = ModelSpec::from_verilog(emitted.verilog.clone(), &emitted.manifest.top)?.with_trace(trace);
        let model = Model::build(&spec, options)?;
        let id = |name: &str| model.port_id(name);
        let axil = AxiLite {
            awaddr: id("s_axil_awaddr")?,
            awvalid: id("s_axil_awvalid")?,
            awready: id("s_axil_awready")?,
            wdata: id("s_axil_wdata")?,
            wstrb: id("s_axil_wstrb")?,
            wvalid: id("s_axil_wvalid")?,
            wready: id("s_axil_wready")?,
            bvalid: id("s_axil_bvalid")?,
            bready: id("s_axil_bready")?,
            araddr: id("s_axil_araddr")?,
            arvalid: id("s_axil_arvalid")?,
            arready: id("s_axil_arready")?,
            rdata: id("s_axil_rdata")?,
            rvalid: id("s_axil_rvalid")?,
            rready: id("s_axil_rready")?,
        };
        let stream = |prefix: &str| -> Result<Stream> {
            Ok(Stream {
                data: (0..layout.lanes).map(|i| id(&format!("{prefix}_tdata${i}"))).collect::<Result<_>>()?,
                valid: id(&format!("{prefix}_tvalid"))?,
                ready: id(&format!("{prefix}_tready"))?,
                last: id(&format!("{prefix}_tlast"))?,
            })
        };
        let (input, output) = (stream("s_axis")?, stream("m_axis")?);
        let driven = Driven { input_data: vec![0; layout.lanes], ..Default::default() };
        let mut sim = AcceleratorSim { model, axil, input, output, driven, manifest: emitted.manifest.clone(), layout };
        sim.model.set_u64(sim.axil.wstrb, 0xF)?;
        sim.model.set_bool(sim.axil.bready, true)?;
        sim.model.set_bool(sim.axil.rready, true)?;
        // The stream inputs start as `driven` says: zero data, TVALID and TREADY low.
        for port in &sim.input.data {
            sim.model.set_u64(*port, 0)?;
        }
        sim.model.set_bool(sim.input.last, false)?;
        sim.model.set_bool(sim.input.valid, false)?;
        sim.model.set_bool(sim.output.ready, false)?;
        Ok(sim)
    }

    /// The emitted design's manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The frame sizes.
    pub fn layout(&self) -> &FrameLayout {
        &self.layout
    }

    /// The Verilator model (for VCD tracing and build information).
    pub fn model_mut(&mut self) -> &mut Model {
        &mut self.model
    }

    /// Clock cycles run so far.
    pub fn cycles(&self) -> u64 {
        self.model.cycles()
    }

    /// Waits (ticking) until `port` is high, at most [`AXIL_TIMEOUT`] cycles.
    fn await_high(&mut self, port: PortId, what: &str) -> Result<()> {
        for _ in 0..AXIL_TIMEOUT {
            self.model.eval();
            if self.model.get_bool(port)? {
                return Ok(());
            }
            self.model.tick()?;
        }
        Err(SimError::Spec(format!("AXI4-Lite {what} not answered in {AXIL_TIMEOUT} cycles")))
    }

    /// An AXI4-Lite write (address and data offered together, as the XDMA bridge does).
    pub fn write_register(&mut self, offset: u32, value: u32) -> Result<()> {
        self.hold_streams()?;
        let a = &self.axil;
        let (awvalid, wvalid, awready, wready, bvalid) = (a.awvalid, a.wvalid, a.awready, a.wready, a.bvalid);
        self.model.set_u64(a.awaddr, u64::from(offset))?;
        self.model.set_u64(a.wdata, u64::from(value))?;
        self.model.set_bool(awvalid, true)?;
        self.model.set_bool(wvalid, true)?;
        let (mut address_taken, mut data_taken) = (false, false);
        for _ in 0..AXIL_TIMEOUT {
            self.model.eval();
            let (aw, w) = (self.model.get_bool(awready)?, self.model.get_bool(wready)?);
            self.model.tick()?;
            address_taken |= aw;
            data_taken |= w;
            self.model.set_bool(awvalid, !address_taken)?;
            self.model.set_bool(wvalid, !data_taken)?;
            if address_taken && data_taken {
                break;
            }
        }
        if !(address_taken && data_taken) {
            return Err(SimError::Spec(format!("AXI4-Lite write to {offset:#05x} not accepted")));
        }
        self.await_high(bvalid, "write response")?;
        self.model.tick()
    }

    /// An AXI4-Lite read.
    pub fn read_register(&mut self, offset: u32) -> Result<u32> {
        self.hold_streams()?;
        let (araddr, arvalid, arready, rvalid, rdata) =
            (self.axil.araddr, self.axil.arvalid, self.axil.arready, self.axil.rvalid, self.axil.rdata);
        self.model.set_u64(araddr, u64::from(offset))?;
        self.model.set_bool(arvalid, true)?;
        self.await_high(arready, "read address")?;
        self.model.tick()?;
        self.model.set_bool(arvalid, false)?;
        self.await_high(rvalid, "read data")?;
        let value = self.model.get_u64(rdata)? as u32;
        self.model.tick()?;
        Ok(value)
    }

    /// Lowers s_axis_tvalid and m_axis_tready, so that the cycles a register access takes move
    /// no beat that the caller of [`cycle`](Self::cycle) would not see. (A beat offered and not
    /// yet taken is withdrawn for those cycles and offered again by the next `cycle`: AXI4-Stream
    /// forbids that, but the accelerator's slave only acts on a handshake.)
    fn hold_streams(&mut self) -> Result<()> {
        if self.driven.input_valid {
            self.model.set_bool(self.input.valid, false)?;
            self.driven.input_valid = false;
        }
        if self.driven.output_ready {
            self.model.set_bool(self.output.ready, false)?;
            self.driven.output_ready = false;
        }
        Ok(())
    }

    /// One clock cycle of the streams, as the XDMA IP drives them: offers `input` (a beat of
    /// `lanes` words and its TLAST) on s_axis with TVALID high, or TVALID low for `None`; drives
    /// m_axis_tready with `output_ready`; then clocks the model once and reports what moved on
    /// that edge. A beat not taken must be offered again (unchanged, per AXI4-Stream) on the
    /// next cycle; a caller that stops offering it breaks the protocol, not the model.
    pub fn cycle(&mut self, input: Option<(&[u32], bool)>, output_ready: bool) -> Result<CycleIo> {
        // Ports are written only when their value changes: a held beat costs no port writes and
        // no extra evaluation (the tick leaves the combinational outputs current).
        let mut changed = false;
        match input {
            Some((beat, last)) => {
                if beat.len() != self.layout.lanes {
                    return Err(SimError::Spec(format!(
                        "a beat has {} words, not {} lanes",
                        beat.len(),
                        self.layout.lanes
                    )));
                }
                for (k, (&word, port)) in beat.iter().zip(&self.input.data).enumerate() {
                    if self.driven.input_data[k] != word {
                        self.model.set_u64(*port, u64::from(word))?;
                        self.driven.input_data[k] = word;
                        changed = true;
                    }
                }
                if self.driven.input_last != last {
                    self.model.set_bool(self.input.last, last)?;
                    self.driven.input_last = last;
                    changed = true;
                }
                if !self.driven.input_valid {
                    self.model.set_bool(self.input.valid, true)?;
                    self.driven.input_valid = true;
                    changed = true;
                }
            }
            None if self.driven.input_valid => {
                self.model.set_bool(self.input.valid, false)?;
                self.driven.input_valid = false;
                changed = true;
            }
            None => {}
        }
        if self.driven.output_ready != output_ready {
            self.model.set_bool(self.output.ready, output_ready)?;
            self.driven.output_ready = output_ready;
            changed = true;
        }
        if changed {
            self.model.eval();
        }
        let input_taken = input.is_some() && self.model.get_bool(self.input.ready)?;
        let output = if output_ready && self.model.get_bool(self.output.valid)? {
            let words =
                self.output.data.iter().map(|port| Ok(self.model.get_u64(*port)? as u32)).collect::<Result<_>>()?;
            Some(OutputBeat { words, last: self.model.get_bool(self.output.last)? })
        } else {
            None
        };
        self.model.tick()?;
        Ok(CycleIo { input_taken, output })
    }

    /// Loads a private key's constants into every core and commits it under `key_id`: the
    /// contract's key-load sequence, over the AXI4-Lite ports.
    pub fn load_key(&mut self, key: &HardwareKey, key_id: u8) -> Result<()> {
        let window_bits = self.manifest.config.window_bits;
        ecrt_contract::session::load_key(self, key, window_bits, key_id)
            .map_err(|e| SimError::Spec(format!("cannot load the key: {e}")))
    }

    /// Streams request frames (words, padded to whole beats, as [`itf::encode_request_words`]
    /// makes them) through the model until one result per request has come back.
    ///
    /// Results are matched to requests by tag (tags must be distinct). `progress` is called with
    /// the number of results received so far. Errors: no result within `max_idle_cycles` of the
    /// last stream activity (a hang), a malformed result frame, an unknown tag.
    pub fn run(
        &mut self,
        requests: &[Vec<u32>],
        pacing: OutputPacing,
        max_idle_cycles: u64,
        mut progress: impl FnMut(usize),
    ) -> Result<RunReport> {
        let lanes = self.layout.lanes;
        let tags: Vec<u16> = requests.iter().map(|w| w[0] as u16).collect();
        let mut beats: VecDeque<(usize, bool, &[u32])> = VecDeque::new();
        for (job, words) in requests.iter().enumerate() {
            let count = words.len() / lanes;
            for (k, beat) in words.chunks(lanes).enumerate() {
                beats.push_back((job, k + 1 == count, beat));
            }
        }
        let mut first_in = vec![None; requests.len()];
        let mut records: Vec<Option<JobRecord>> = vec![None; requests.len()];
        let frame_words = self.layout.result_beats * lanes;
        let mut frame: Vec<u32> = Vec::with_capacity(frame_words);
        let (mut received, mut idle) = (0usize, 0u64);
        let start_cycle = self.model.cycles();
        let started = Instant::now();
        let mut offered: Option<(usize, bool, &[u32])> = None;
        while received < requests.len() {
            let cycle = self.model.cycles() - start_cycle;
            // The next beat is offered once the previous one is taken, and held until it is.
            if offered.is_none() {
                offered = beats.pop_front();
            }
            let out_ready = match pacing {
                OutputPacing::Always => true,
                OutputPacing::Duty { ready, period } => cycle % period < ready,
            };
            let io = self.cycle(offered.map(|(_, last, beat)| (beat, last)), out_ready)?;
            if io.input_taken {
                let (job, _, _) = offered.take().expect("offered");
                first_in[job].get_or_insert(cycle);
            }
            let gave_output = io.output.is_some();
            if let Some(beat) = io.output {
                // Frames by size: TLAST ends a burst of one or more whole frames.
                frame.extend_from_slice(&beat.words);
                if beat.last && frame.len() % frame_words != 0 {
                    return Err(SimError::Spec("TLAST inside a result frame".into()));
                }
                if frame.len() == frame_words {
                    let result = self.decode_frame(&frame)?;
                    frame.clear();
                    let job =
                        tags.iter().position(|&t| t == result.tag).filter(|&j| records[j].is_none()).ok_or_else(
                            || SimError::Spec(format!("result for unknown or repeated tag {}", result.tag)),
                        )?;
                    let first = first_in[job].ok_or_else(|| SimError::Spec("result before its request".into()))?;
                    records[job] = Some(JobRecord { result, first_in: first, last_out: cycle });
                    received += 1;
                    progress(received);
                }
            }
            idle = if io.input_taken || gave_output { 0 } else { idle + 1 };
            if idle > max_idle_cycles {
                return Err(SimError::Spec(format!(
                    "no stream activity for {max_idle_cycles} cycles with {} of {} results received",
                    received,
                    requests.len()
                )));
            }
        }
        if self.driven.input_valid {
            self.model.set_bool(self.input.valid, false)?;
            self.driven.input_valid = false;
        }
        let jobs = records.into_iter().map(|r| r.expect("every result received")).collect();
        Ok(RunReport { jobs, cycles: self.model.cycles() - start_cycle, elapsed: started.elapsed() })
    }

    fn decode_frame(&self, words: &[u32]) -> Result<ResultFrame> {
        let (digits, stream_bits) = (self.layout.digits, self.layout.stream_bits);
        itf::decode_result(&itf::words_to_bytes(words), digits, stream_bits)
            .map_err(|e| SimError::Spec(format!("bad result frame: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The emitted Verilog is stored under the cache directory and read back from there.
    #[test]
    fn emitted_verilog_is_kept_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let config = AcceleratorConfig { key_bits: 512, cores: 1, ..Default::default() };
        let first = emitted_on_disk(&config, dir.path()).unwrap();
        let entries: Vec<_> =
            std::fs::read_dir(dir.path().join("emitted")).unwrap().flatten().map(|e| e.path()).collect();
        let verilog = entries.iter().find(|p| p.extension().is_some_and(|x| x == "v")).expect("a stored .v");
        assert_eq!(std::fs::read_to_string(verilog).unwrap(), first.verilog);
        // What is on disk is what the next process gets, without emitting.
        std::fs::write(verilog, "// stored").unwrap();
        assert_eq!(emitted_on_disk(&config, dir.path()).unwrap().verilog, "// stored");
        // A damaged manifest is emitted again.
        let manifest = entries.iter().find(|p| p.to_string_lossy().ends_with(".manifest.json")).unwrap();
        std::fs::write(manifest, "{").unwrap();
        assert_eq!(emitted_on_disk(&config, dir.path()).unwrap().verilog, first.verilog);
    }
}
