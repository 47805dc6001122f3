//! One configuration's figures, as `ecrt explore` sweeps them and its Pareto plot draws them.

use crate::chip::{
    cores_that_fit, schoolbook_bound_per_decryption, Usage, MESA_CYCLES, PROJECTION_PART, REFERENCE_MHZ,
    TARGET_THROUGHPUT,
};
use ecrt_contract::config::{AcceleratorConfig, ExponentSchedule};
use ecrt_sim::{ResourceEstimate, TimingEstimate};
use serde::{Deserialize, Serialize};

/// One configuration's figures. Resources are of a one-core accelerator (the shared top
/// included); the chip figures fill an xc7vx690t with as many of it as fit.
///
/// Unlike the other reports' figures, a point's are plain numbers (no runs): a sweep is one run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Point {
    pub config: AcceleratorConfig,
    pub schedule: ExponentSchedule,
    /// An idle core, first request beat in to last result beat out.
    pub latency_cycles: usize,
    pub latency_ms_100mhz: f64,
    /// The pace of one busy core.
    pub cycles_per_decryption_per_core: usize,
    /// What the stream ports need per decryption; with many cores they set the pace.
    pub stream_cycles_per_decryption: usize,
    pub dsp48e1: u64,
    pub lut: u64,
    pub ff: u64,
    pub bram36: f64,
    pub lutram: u64,
    pub cores_per_xc7vx690t: u64,
    /// The report field of the resource that stops one more core (`"dsp48e1"`, …), or `"none"`.
    pub xc7vx690t_limiting_resource: String,
    /// The chip's pace: a core's pace over the cores, or the stream's, whichever is slower.
    pub cycles_per_decryption_chip: f64,
    pub decryptions_per_s_100mhz: f64,
    pub logic_delay_ns: Option<f64>,
    pub plausible_clock_mhz: Option<f64>,
    pub decryptions_per_s_plausible_clock: Option<f64>,
    /// One core's DSP48E1s times its pace.
    pub dsp_cycles_per_decryption: f64,
    pub ratio_to_schoolbook_bound: f64,
    /// Whether 2048-bit targets hold (null for other key sizes): MESA's latency, the chip's pace.
    pub meets_latency_target: Option<bool>,
    pub meets_throughput_target: Option<bool>,
    /// On the Pareto front of its key size: no other point has both a lower latency and a higher
    /// chip throughput at 100 MHz (nor one better and one equal).
    pub pareto: bool,
}

impl Point {
    /// The figures of `config` with these estimates; `pareto` is set by [`mark_pareto`].
    pub fn new(config: &AcceleratorConfig, resources: &ResourceEstimate, timing: Option<&TimingEstimate>) -> Point {
        let fit = cores_that_fit(&Usage::of_estimate(resources, config.cores), &PROJECTION_PART);
        let (cores, limit) = fit.map_or((0, "none"), |f| (f.cores, f.limit));
        let (latency, period) = (config.latency_cycles(), config.cycles_per_decryption_per_core());
        let dsp_cycles = resources.dsp48e1 as f64 / config.cores as f64 * period as f64;
        let chip_cycles = (period as f64 / cores.max(1) as f64).max(config.stream_cycles_per_decryption() as f64);
        let per_s = |mhz: f64| if cores == 0 { 0.0 } else { mhz * 1e6 / chip_cycles };
        let clock = timing.map(TimingEstimate::plausible_clock_mhz);
        let is_2048 = config.key_bits == 2048;
        Point {
            config: config.clone(),
            schedule: config.schedule,
            latency_cycles: latency,
            latency_ms_100mhz: latency as f64 / (REFERENCE_MHZ * 1e3),
            cycles_per_decryption_per_core: period,
            stream_cycles_per_decryption: config.stream_cycles_per_decryption(),
            dsp48e1: resources.dsp48e1,
            lut: resources.lut,
            ff: resources.ff,
            bram36: resources.bram36,
            lutram: resources.lutram,
            cores_per_xc7vx690t: cores,
            xc7vx690t_limiting_resource: limit.into(),
            cycles_per_decryption_chip: chip_cycles,
            decryptions_per_s_100mhz: per_s(REFERENCE_MHZ),
            logic_delay_ns: timing.map(|t| t.logic_delay_ns),
            plausible_clock_mhz: clock,
            decryptions_per_s_plausible_clock: clock.map(per_s),
            dsp_cycles_per_decryption: dsp_cycles,
            ratio_to_schoolbook_bound: dsp_cycles / schoolbook_bound_per_decryption(config.key_bits),
            meets_latency_target: is_2048.then_some(latency as f64 <= MESA_CYCLES),
            meets_throughput_target: is_2048.then(|| per_s(REFERENCE_MHZ) >= TARGET_THROUGHPUT),
            pareto: false,
        }
    }

    fn dominates(&self, other: &Point) -> bool {
        let (lat, tp) = (self.latency_cycles, self.decryptions_per_s_100mhz);
        let (olat, otp) = (other.latency_cycles, other.decryptions_per_s_100mhz);
        lat <= olat && tp >= otp && (lat < olat || tp > otp)
    }
}

/// Marks the points no other point of the same key size dominates.
pub fn mark_pareto(points: &mut [Point]) {
    let front: Vec<bool> = points
        .iter()
        .map(|p| !points.iter().any(|q| q.config.key_bits == p.config.key_bits && q.dominates(p)))
        .collect();
    for (p, on) in points.iter_mut().zip(front) {
        p.pareto = on;
    }
}
