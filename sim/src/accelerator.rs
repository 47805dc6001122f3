//! The whole accelerator ([`ecrt_hdl::accelerator::Accelerator`]) in Verilator, driven the way the
//! XDMA IP drives it: registers over AXI4-Lite, request frames into the AXI4-Stream slave, result
//! frames out of the master, with back-pressure on both sides. Framing and register offsets come
//! from [`ecrt_hdl::interface`], as in the driver.

use crate::{BuildOptions, Model, ModelSpec, PortId, Result, SimError};
use ecrt_golden::hw::EcrtHwKey;
use ecrt_hdl::config::AcceleratorConfig;
use ecrt_hdl::emit::{emit, Manifest};
use ecrt_hdl::host::decryption_key_loads;
use ecrt_hdl::interface::{self as itf, FrameLayout, ResultFrame};
use std::collections::VecDeque;
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
    manifest: Manifest,
    layout: FrameLayout,
}

impl AcceleratorSim {
    /// Emits `config`'s RTL and builds (or loads from the cache) its Verilator model.
    pub fn build(config: &AcceleratorConfig, options: &BuildOptions, trace: bool) -> Result<Self> {
        let emitted = emit(config).map_err(|e| SimError::Spec(e.to_string()))?;
        let layout =
            FrameLayout::new(config.digits(), config.stream_bits).map_err(|e| SimError::Spec(e.to_string()))?;
        let spec = ModelSpec::from_verilog(emitted.verilog, &emitted.manifest.top)?.with_trace(trace);
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
        let mut sim = AcceleratorSim { model, axil, input, output, manifest: emitted.manifest, layout };
        sim.model.set_u64(sim.axil.wstrb, 0xF)?;
        sim.model.set_bool(sim.axil.bready, true)?;
        sim.model.set_bool(sim.axil.rready, true)?;
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

    /// Loads a private key's constants into every core and commits it under `key_id`.
    pub fn load_key(&mut self, key: &EcrtHwKey, key_id: u8) -> Result<()> {
        let window_bits = self.manifest.config.window_bits;
        self.write_register(itf::REG_KEY_CONTROL, itf::KEY_CONTROL_BEGIN)?;
        let mut selected = None;
        for (q_path, target, data) in decryption_key_loads(key, window_bits) {
            let select = itf::key_select(q_path, target as u8);
            if selected != Some(select) {
                self.write_register(itf::REG_KEY_SELECT, select)?;
                selected = Some(select);
            }
            self.write_register(itf::REG_KEY_DATA, data as u32)?;
        }
        self.write_register(itf::REG_KEY_CONTROL, itf::key_control_commit(key_id))?;
        let status = self.read_register(itf::REG_STATUS)?;
        if status & itf::STATUS_KEY_VALID == 0 {
            return Err(SimError::Spec(format!("key not valid after loading (STATUS {status:#x})")));
        }
        Ok(())
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
        let mut frame: Vec<u32> = Vec::with_capacity(self.layout.result_words + lanes);
        let (mut received, mut idle) = (0usize, 0u64);
        let start_cycle = self.model.cycles();
        let started = Instant::now();
        let mut offered: Option<(usize, bool, &[u32])> = None;
        while received < requests.len() {
            let cycle = self.model.cycles() - start_cycle;
            // Inputs for this cycle: the next beat (held until accepted) and TREADY.
            let mut changed = false;
            if offered.is_none() {
                offered = beats.pop_front();
                if let Some((_, last, beat)) = offered {
                    for (port, &word) in self.input.data.iter().zip(beat) {
                        self.model.set_u64(*port, u64::from(word))?;
                    }
                    self.model.set_bool(self.input.last, last)?;
                    self.model.set_bool(self.input.valid, true)?;
                    changed = true;
                } else if self.model.get_bool(self.input.valid)? {
                    self.model.set_bool(self.input.valid, false)?;
                    changed = true;
                }
            }
            let out_ready = match pacing {
                OutputPacing::Always => true,
                OutputPacing::Duty { ready, period } => cycle % period < ready,
            };
            if self.model.get_bool(self.output.ready)? != out_ready {
                self.model.set_bool(self.output.ready, out_ready)?;
                changed = true;
            }
            if changed {
                self.model.eval();
            }
            let took_input = offered.is_some() && self.model.get_bool(self.input.ready)?;
            let gave_output = out_ready && self.model.get_bool(self.output.valid)?;
            let mut last_out = false;
            if gave_output {
                for port in &self.output.data {
                    frame.push(self.model.get_u64(*port)? as u32);
                }
                last_out = self.model.get_bool(self.output.last)?;
            }
            self.model.tick()?;
            if took_input {
                let (job, _, _) = offered.take().expect("offered");
                first_in[job].get_or_insert(cycle);
            }
            if last_out {
                let result = self.decode_frame(&frame)?;
                frame.clear();
                let job = tags
                    .iter()
                    .position(|&t| t == result.tag)
                    .filter(|&j| records[j].is_none())
                    .ok_or_else(|| SimError::Spec(format!("result for unknown or repeated tag {}", result.tag)))?;
                let first = first_in[job].ok_or_else(|| SimError::Spec("result before its request".into()))?;
                records[job] = Some(JobRecord { result, first_in: first, last_out: cycle });
                received += 1;
                progress(received);
            }
            idle = if took_input || gave_output { 0 } else { idle + 1 };
            if idle > max_idle_cycles {
                return Err(SimError::Spec(format!(
                    "no stream activity for {max_idle_cycles} cycles with {} of {} results received",
                    received,
                    requests.len()
                )));
            }
        }
        self.model.set_bool(self.input.valid, false)?;
        let jobs = records.into_iter().map(|r| r.expect("every result received")).collect();
        Ok(RunReport { jobs, cycles: self.model.cycles() - start_cycle, elapsed: started.elapsed() })
    }

    fn decode_frame(&self, words: &[u32]) -> Result<ResultFrame> {
        let (digits, stream_bits) = (self.layout.digits, self.layout.stream_bits);
        itf::decode_result(&itf::words_to_bytes(words), digits, stream_bits)
            .map_err(|e| SimError::Spec(format!("bad result frame: {e}")))
    }
}
