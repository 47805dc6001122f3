//! One configuration's figures, as `ecrt explore` sweeps them and its Pareto plot draws them.

use crate::chip::{
    cores_that_fit, schoolbook_bound_per_decryption, Usage, MESA_CYCLES, PROJECTION_PART, REFERENCE_MHZ,
    TARGET_THROUGHPUT,
};
use crate::clocked::ClockedFigures;
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
    /// The logic delay of the longest path (no routing), the clocks it allows once routed
    /// ([`ClockedFigures`]), and the latency and the chip's pace at each; null with `--no-timing`.
    pub logic_delay_ns: Option<f64>,
    pub plausible_clock_mhz: Option<f64>,
    #[serde(default)]
    pub conservative_clock_mhz: Option<f64>,
    /// The hard block that caps the clocks, when one does.
    #[serde(default)]
    pub clock_capped_by: Option<String>,
    #[serde(default)]
    pub latency_us_conservative_clock: Option<f64>,
    #[serde(default)]
    pub latency_us_plausible_clock: Option<f64>,
    #[serde(default)]
    pub chip_decryptions_per_s_conservative_clock: Option<f64>,
    #[serde(alias = "decryptions_per_s_plausible_clock")]
    pub chip_decryptions_per_s_plausible_clock: Option<f64>,
    /// One core's DSP48E1s times its pace.
    pub dsp_cycles_per_decryption: f64,
    pub ratio_to_schoolbook_bound: f64,
    /// Whether 2048-bit targets hold (null for other key sizes): MESA's latency, the chip's pace.
    pub meets_latency_target: Option<bool>,
    pub meets_throughput_target: Option<bool>,
    /// On the Pareto front of its key size: no other point has both a lower latency and a higher
    /// chip throughput (nor one better and one equal), at the plausible clock when the sweep
    /// timed its points, else in cycles.
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
        let clocked =
            timing.map(|t| ClockedFigures::new(t.logic_delay_ns, latency as f64, (cores > 0).then_some(chip_cycles)));
        let clocked = clocked.as_ref();
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
            logic_delay_ns: clocked.map(|c| c.clocks.logic_delay_ns),
            plausible_clock_mhz: clocked.map(|c| c.clocks.plausible_clock_mhz),
            conservative_clock_mhz: clocked.map(|c| c.clocks.conservative_clock_mhz),
            clock_capped_by: clocked.and_then(|c| c.clocks.clock_capped_by.clone()),
            latency_us_conservative_clock: clocked.map(|c| c.latency_us_conservative_clock),
            latency_us_plausible_clock: clocked.map(|c| c.latency_us_plausible_clock),
            chip_decryptions_per_s_conservative_clock: clocked.map(|c| c.chip_decryptions_per_s_conservative_clock),
            chip_decryptions_per_s_plausible_clock: clocked.map(|c| c.chip_decryptions_per_s_plausible_clock),
            dsp_cycles_per_decryption: dsp_cycles,
            ratio_to_schoolbook_bound: dsp_cycles / schoolbook_bound_per_decryption(config.key_bits),
            meets_latency_target: is_2048.then_some(latency as f64 <= MESA_CYCLES),
            meets_throughput_target: is_2048.then(|| per_s(REFERENCE_MHZ) >= TARGET_THROUGHPUT),
            pareto: false,
        }
    }

    /// (latency, chip throughput) as the plot draws them: µs and decryptions/s at the plausible
    /// clock when the point was timed, else ms and decryptions/s at 100 MHz.
    pub fn plotted(&self) -> (f64, f64) {
        match (self.latency_us_plausible_clock, self.chip_decryptions_per_s_plausible_clock) {
            (Some(latency), Some(rate)) => (latency, rate),
            _ => (self.latency_ms_100mhz, self.decryptions_per_s_100mhz),
        }
    }

    fn dominates(&self, other: &Point) -> bool {
        let ((lat, tp), (olat, otp)) = (self.plotted(), other.plotted());
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
