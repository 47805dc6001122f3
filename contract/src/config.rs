//! The accelerator's configuration: the one source of truth for every size and parameter that the
//! RTL, the simulator, the driver and the manifest use.

use crate::limbs::LIMB_BITS;
use serde::{Deserialize, Serialize};

/// Why a configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("key sizes from 512 to 4096 bits, multiples of 64, are supported, not {0}")]
    KeyBits(usize),
    #[error("only 17-bit limbs are implemented (the DSP48E1's unsigned 17×24 multiplier), not {0}")]
    LimbBits(usize),
    #[error("window (segment) widths from 1 to 6 bits are supported, not {0}")]
    WindowBits(usize),
    #[error("from 1 to {MAX_CORES} decryption cores are supported, not {0}")]
    Cores(usize),
    #[error("stream (TDATA) widths of 64, 128, 256 or 512 bits are supported, not {0}")]
    StreamBits(usize),
    #[error("from 1 to {MAX_DIGITS_PER_STEP} digits per step are supported, not {0}")]
    DigitsPerStep(usize),
    #[error("the segmented schedule takes the exponent one bit at a time: windows of {0} bits apply to the windows schedule only")]
    SegmentedWindowBits(usize),
    #[error("the lanes engine runs the windows schedule with windows of 2 to 6 bits and keeps k + 5 tables of 2^w entries in 1,024: not the {0} with k = {1} (the slots engine, `--engine slots`, runs it)")]
    LanesSchedule(String, usize),
    #[error("the delay engine runs the windows schedule with windows of 2 to 6 bits: not the {0} (the slots engine, `--engine slots`, runs it)")]
    DelaySchedule(String),
}

/// How an exponentiation turns the exponent's bits into Montgomery multiplications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExponentSchedule {
    /// Fixed windows, left to right (`window_bits` wide): a table of 2^w powers, then w squarings
    /// and one table multiplication per window.
    #[default]
    Windows,
    /// MESA's right to left, one bit at a time: per bit the product acc·sq and the square sq²,
    /// which do not depend on each other. The exponent loads one bit per window (`window_bits` = 1).
    Segmented,
}

impl ExponentSchedule {
    /// Both schedules, windows first.
    pub const ALL: [ExponentSchedule; 2] = [ExponentSchedule::Windows, ExponentSchedule::Segmented];

    /// The name the command line and the reports use.
    pub fn name(self) -> &'static str {
        match self {
            ExponentSchedule::Windows => "windows",
            ExponentSchedule::Segmented => "segmented",
        }
    }

    /// The value of the `SCHEDULE` register.
    pub fn register_value(self) -> u32 {
        match self {
            ExponentSchedule::Windows => 0,
            ExponentSchedule::Segmented => 1,
        }
    }

    /// The schedule a `SCHEDULE` register value names (0 on a card that predates the register).
    pub fn from_register(value: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.register_value() == value)
    }
}

impl std::fmt::Display for ExponentSchedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ExponentSchedule {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|schedule| schedule.name() == s)
            .ok_or_else(|| format!("unknown schedule `{s}`: `windows` or `segmented`"))
    }
}

/// What a decryption core is built around. The lanes engine is the default: its longest logic path
/// is about half the two-slot engine's and a chip of it decrypts nearly twice as fast at its
/// plausible clock; the two-slot engine has the lower latency and runs every schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// Two slots on the folding multiplier, p's path and q's: one decryption in flight a core.
    Slots,
    /// The deep-loop multiplier's k + 3 lanes, a prime's whole path each: a decryption in flight
    /// per pair of lanes, ⌊(k + 3)/2⌋ a core.
    #[default]
    Lanes,
    /// The delayed-quotient multiplier's two lanes, p's path and q's: one decryption in flight a
    /// core, each of its multiplications in about a third of the deep loop's cycles.
    Delay,
}

impl Engine {
    /// Every engine, the two-slot one first.
    pub const ALL: [Engine; 3] = [Engine::Slots, Engine::Lanes, Engine::Delay];

    /// The name the command line and the reports use.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Slots => "slots",
            Engine::Lanes => "lanes",
            Engine::Delay => "delay",
        }
    }

    /// The value of the `ENGINE` register (0 on a card that predates the register).
    pub fn register_value(self) -> u32 {
        self as u32
    }

    /// The engine an `ENGINE` register value names.
    pub fn from_register(value: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.register_value() == value)
    }

    /// The engine a configuration gets when none is named: the default where it runs `config`'s
    /// schedule, the two-slot engine (which runs them all) elsewhere.
    pub fn default_for(config: &AcceleratorConfig) -> Self {
        if config.lanes_run() {
            Engine::Lanes
        } else {
            Engine::Slots
        }
    }
}

/// The engine of a manifest or record written before the field: every core had two slots then.
fn engine_before_the_field() -> Engine {
    Engine::Slots
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Engine {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|engine| engine.name() == s)
            .ok_or_else(|| format!("unknown engine `{s}`: `slots`, `lanes` or `delay`"))
    }
}

/// The most decryption cores an accelerator has.
pub const MAX_CORES: usize = 64;
/// The widest exponent window (segment) the sequencer's table addresses.
pub const WINDOW_BITS_MAX: usize = 6;
pub use crate::limbs::STEP_BITS;
/// The most limbs the folding multiplier consumes per step.
pub const MAX_DIGITS_PER_STEP: usize = ecrt_golden::hw::MAX_LIMBS_PER_STEP;

fn default_digits_per_step() -> usize {
    3
}

fn default_cores() -> usize {
    1
}

fn default_stream_bits() -> usize {
    256
}

/// One accelerator configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcceleratorConfig {
    /// Bits of the Paillier modulus n; the exponentiations run mod p² and q², |p²| = key_bits.
    pub key_bits: usize,
    /// Bits of a multiplier digit and of an exact limb.
    pub limb_bits: usize,
    /// The exponent loads in windows of this many bits; the windows schedule does one table
    /// multiplication per window, the segmented one takes 1-bit windows.
    pub window_bits: usize,
    /// How the exponent's bits become multiplications.
    #[serde(default)]
    pub schedule: ExponentSchedule,
    /// The reference clock for reporting times and throughputs.
    pub clock_mhz: f64,
    /// The FPGA part.
    pub part: String,
    /// Decryption cores behind the dispatcher and the collector, 1 to 64.
    #[serde(default = "default_cores")]
    pub cores: usize,
    /// TDATA width of both AXI4-Stream ports: 64, 128, 256 or 512 bits.
    #[serde(default = "default_stream_bits")]
    pub stream_bits: usize,
    /// Limbs of the multiplier the exponentiation's folding multiplier consumes per step, k.
    #[serde(default = "default_digits_per_step")]
    pub digits_per_step: usize,
    /// What each core is built around.
    #[serde(default = "engine_before_the_field")]
    pub engine: Engine,
}

impl Default for AcceleratorConfig {
    fn default() -> Self {
        AcceleratorConfig {
            key_bits: 2048,
            limb_bits: LIMB_BITS,
            window_bits: 5,
            schedule: ExponentSchedule::Windows,
            clock_mhz: 100.0,
            part: crate::part::DEFAULT.name.into(),
            cores: default_cores(),
            stream_bits: default_stream_bits(),
            digits_per_step: default_digits_per_step(),
            engine: Engine::default(),
        }
    }
}

impl AcceleratorConfig {
    /// Checks that the configuration can be built.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(512..=4096).contains(&self.key_bits) || self.key_bits % 64 != 0 {
            return Err(ConfigError::KeyBits(self.key_bits));
        }
        if self.limb_bits != LIMB_BITS {
            return Err(ConfigError::LimbBits(self.limb_bits));
        }
        if !(1..=WINDOW_BITS_MAX).contains(&self.window_bits) {
            return Err(ConfigError::WindowBits(self.window_bits));
        }
        if self.schedule == ExponentSchedule::Segmented && self.window_bits != 1 {
            return Err(ConfigError::SegmentedWindowBits(self.window_bits));
        }
        if !(1..=MAX_CORES).contains(&self.cores) {
            return Err(ConfigError::Cores(self.cores));
        }
        if !crate::interface::frames::STREAM_BITS_CHOICES.contains(&self.stream_bits) {
            return Err(ConfigError::StreamBits(self.stream_bits));
        }
        if !(1..=MAX_DIGITS_PER_STEP).contains(&self.digits_per_step) {
            return Err(ConfigError::DigitsPerStep(self.digits_per_step));
        }
        if self.engine == Engine::Lanes && !self.lanes_run() {
            return Err(ConfigError::LanesSchedule(self.schedule_label(), self.digits_per_step));
        }
        if self.engine == Engine::Delay && !self.windows_of_two_bits_or_more() {
            return Err(ConfigError::DelaySchedule(self.schedule_label()));
        }
        Ok(())
    }

    /// Whether the lanes engine runs this schedule: windows of 2 bits or more, and k + 5 tables
    /// of 2^w entries in the lane's 1,024-entry block RAM.
    pub fn lanes_run(&self) -> bool {
        let lane_tables = (self.digits_per_step + 5) << self.window_bits;
        self.windows_of_two_bits_or_more() && lane_tables <= 1024
    }
    /// The windows schedule with windows of 2 bits or more: what a lane's sequencer runs (the delay
    /// engine's two lanes keep 4 tables of at most 64 entries).
    fn windows_of_two_bits_or_more(&self) -> bool {
        self.schedule == ExponentSchedule::Windows && self.window_bits >= 2
    }
    /// Bits of the exponentiation moduli p² and q².
    pub fn modulus_bits(&self) -> usize {
        self.key_bits
    }
    /// Bits of the exponents p − 1 and q − 1.
    pub fn exponent_bits(&self) -> usize {
        self.key_bits / 2
    }
    /// The folding multiplier's sizes: k limbs per step over modulus_bits-bit moduli.
    pub fn fold_shape(&self) -> ecrt_golden::hw::FoldShape {
        ecrt_golden::hw::FoldShape::new(self.modulus_bits(), self.digits_per_step.clamp(1, MAX_DIGITS_PER_STEP))
            .expect("a validated configuration has a shape")
    }
    /// The delay engine's multiplier's sizes: k limbs per step, its pipeline's quotient delay d.
    pub fn delayed_shape(&self) -> ecrt_golden::hw::DelayedShape {
        ecrt_golden::hw::DelayTiming::shape(self.modulus_bits(), self.digits_per_step.clamp(1, MAX_DIGITS_PER_STEP))
            .expect("a validated configuration has a shape")
    }
    /// The delay engine's multiplier's pipeline.
    pub fn delay_timing(&self) -> ecrt_golden::hw::DelayTiming {
        ecrt_golden::hw::DelayTiming::new(self.digits_per_step.clamp(1, MAX_DIGITS_PER_STEP))
    }
    /// Digits S of a classic pass, and limbs of every value a core holds: k·(m − 1), so that the
    /// multiplier's two modes share R = 2^(17·S) (the golden model's `FoldEcrtKey`). R > 4N for
    /// every modulus_bits-bit N, and values of the folding mode (< 2^(17k+3)·N) fit. The delay
    /// engine's m is d steps more (its operands d·k limbs wider).
    pub fn digits(&self) -> usize {
        match self.engine {
            Engine::Slots | Engine::Lanes => self.fold_shape().classic_digits(),
            Engine::Delay => self.delayed_shape().classic_digits(),
        }
    }
    /// Cycles of one classic pass (the multiplier's exact-quotient mode) in either slot: 4·S + 4,
    /// a step taking two turns (its quotient's, then its products').
    pub fn cycles_per_multiplication(&self) -> usize {
        self.fold_shape().classic_cycles(ecrt_golden::hw::ClassicOp::Multiply)
    }
    /// Cycles of the exact division's classic pass: 4·M + 4, over the modulus limbs M.
    pub fn cycles_per_division(&self) -> usize {
        self.fold_shape().classic_cycles(ecrt_golden::hw::ClassicOp::Decremented)
    }
    /// Cycles of one folding multiplication in either slot: 2·m + 4.
    pub fn cycles_per_fold_multiplication(&self) -> usize {
        self.fold_shape().fold_cycles()
    }
    /// The golden model's form of the schedule: a slot runs its whole exponent as one segment.
    pub fn golden_schedule(&self) -> ecrt_golden::hw::Schedule {
        match self.schedule {
            ExponentSchedule::Windows => {
                ecrt_golden::hw::Schedule::FixedWindow { window_bits: self.window_bits as u32 }
            }
            ExponentSchedule::Segmented => ecrt_golden::hw::Schedule::RightToLeft { segments: 1 },
        }
    }
    /// The schedule in a few words: "5-bit windows", or "segmented".
    pub fn schedule_label(&self) -> String {
        match self.schedule {
            ExponentSchedule::Windows => format!("{}-bit windows", self.window_bits),
            ExponentSchedule::Segmented => "segmented".into(),
        }
    }
    /// Windows per exponent (the exponent's loads).
    pub fn windows(&self) -> usize {
        self.exponent_bits().div_ceil(self.window_bits)
    }
    /// Montgomery multiplications per exponentiation: the wide REDC of the base and the
    /// multiplication by R³ (into the domain), the schedule's (windows: the table, w squarings and
    /// one multiplication per window after the first; segmented: two per bit), out of the domain.
    pub fn multiplications_per_exponentiation(&self) -> usize {
        self.fold_multiplications_per_exponentiation() + 2
    }
    /// Of those, the folding ones: all but the wide REDC and the way out (classic passes).
    pub fn fold_multiplications_per_exponentiation(&self) -> usize {
        let (in_schedule, _) = ecrt_golden::hw::schedule_cost(self.golden_schedule(), self.exponent_bits())
            .expect("a validated configuration's schedule fits its exponent");
        1 + in_schedule
    }
    /// Cycles of one exponentiation (not decrypting) from its first multiplication's start to its
    /// last one's result: the wide REDC and the way out as classic passes, the rest folding; each
    /// multiplication starts in the cycle the one before it shows its result.
    pub fn cycles_per_exponentiation(&self) -> usize {
        2 * self.cycles_per_multiplication()
            + self.fold_multiplications_per_exponentiation() * self.cycles_per_fold_multiplication()
    }
    /// Montgomery multiplications of one prime's path of a decryption: the exponentiation, then
    /// the exact division and the multiplication by t·R (each slot does one path).
    pub fn multiplications_per_decryption_path(&self) -> usize {
        self.multiplications_per_exponentiation() + 2
    }
    /// Cycles of one prime's path on a core (both paths run side by side), without the frames:
    /// 4 classic passes (the wide REDC, out of the domain, the exact division over M digits, ×t·R),
    /// the rest folding multiplications.
    /// On the lanes engine, a lane's path: the same multiplications on the deep-loop multiplier
    /// (`FoldShape::deep_path_cycles`); on the delay engine, on the delayed-quotient multiplier
    /// (`DelayTiming::path_cycles`).
    pub fn cycles_per_decryption_path(&self) -> usize {
        match self.engine {
            Engine::Slots => {
                3 * self.cycles_per_multiplication()
                    + self.cycles_per_division()
                    + self.fold_multiplications_per_exponentiation() * self.cycles_per_fold_multiplication()
            }
            Engine::Lanes => self.fold_shape().deep_path_cycles(self.fold_multiplications_per_exponentiation() - 1),
            Engine::Delay => self
                .delay_timing()
                .path_cycles(&self.delayed_shape(), self.fold_multiplications_per_exponentiation() - 1),
        }
    }
    /// Decryptions a core holds in flight: one on the two slots, one per pair of lanes.
    pub fn jobs_per_core(&self) -> usize {
        match self.engine {
            Engine::Slots => 1,
            Engine::Lanes | Engine::Delay => self.engine_lanes() / 2,
        }
    }
    /// Lanes of a lanes core's multiplier: k + 3 on the deep loop, 2 on the delay engine (none on
    /// the two slots).
    pub fn engine_lanes(&self) -> usize {
        match self.engine {
            Engine::Slots => 0,
            Engine::Lanes => self.fold_shape().deep_lanes(),
            Engine::Delay => 2,
        }
    }
    /// Cycles of one decryption on an idle core, from the cycle its request's first beat is
    /// accepted to the cycle its result's last beat is taken (TREADY held high): the request's
    /// beats (each taken in L + 1 cycles: accepted, then its L words one per cycle), both paths,
    /// the correction over S limbs, the result's beats (L + 1 cycles each: its words written one
    /// per cycle, then presented), and 4 cycles of hand-over (the dispatcher's start, the paths'
    /// results into the correction, the correction's last difference a step after its last sum,
    /// its first limb to the collector).
    ///
    /// The lanes engines hand over in 11 cycles (the job waits in the core for its pair's first
    /// lane to decide and to load, the terms are written to their memory and read into the
    /// correction one after the other), and a job may wait up to [`Self::lane_wait_cycles`] more
    /// for a pair's first lane: the least latency is this, the most that much more.
    pub fn latency_cycles(&self) -> usize {
        let layout = self.frame_layout().expect("a validated configuration has a layout");
        let hand_over = match self.engine {
            Engine::Slots => 4,
            Engine::Lanes | Engine::Delay => 11,
        };
        (layout.request_beats + layout.result_beats) * (layout.lanes + 1)
            + self.cycles_per_decryption_path()
            + self.digits()
            + hand_over
    }
    /// Cycles a job on an idle core may wait for a pair's first lane to come round, beyond
    /// [`Self::latency_cycles`]: none on the two slots; on the lanes, pairs start at even lanes,
    /// so one, or two when the lanes are odd in number (the last is no pair's). It depends on
    /// the cycle the request comes in, never on the data.
    pub fn lane_wait_cycles(&self) -> usize {
        match self.engine {
            Engine::Slots => 0,
            Engine::Lanes | Engine::Delay => 1 + self.engine_lanes() % 2,
        }
    }
    /// Cycles between a core's rounds of jobs, one job per slot or pair, when the stream keeps
    /// up: on the two slots, [`Self::cycles_per_decryption_per_core`]; on the lanes, a pair's
    /// path, then a request frame into the freed core (its beats, L + 1 cycles each) and 10
    /// cycles of hand-over, rounded up to whole turns of the lanes (a pair starts at its own
    /// first lane).
    pub fn cycles_per_round(&self) -> usize {
        let layout = self.frame_layout().expect("a validated configuration has a layout");
        match self.engine {
            Engine::Slots => self.cycles_per_decryption_per_core(),
            Engine::Lanes | Engine::Delay => {
                (self.cycles_per_decryption_path() + layout.request_beats * (layout.lanes + 1) + 10)
                    .next_multiple_of(self.engine_lanes())
            }
        }
    }
    /// Cycles between results of one busy core, when the stream keeps up: on the two slots, the
    /// latency, less the overlap of one result frame's padding with the next request (the core is
    /// ready once its S limbs are taken; the next request's first beat is already waiting), plus
    /// the cycle of the registered ready; on the lanes, a round over its jobs (rounded up).
    pub fn cycles_per_decryption_per_core(&self) -> usize {
        let layout = self.frame_layout().expect("a validated configuration has a layout");
        match self.engine {
            Engine::Slots => {
                let padding = layout.result_beats * layout.lanes - layout.result_words;
                self.latency_cycles() + 1 - padding
            }
            Engine::Lanes | Engine::Delay => self.cycles_per_round().div_ceil(self.jobs_per_core()),
        }
    }
    /// Cycles the stream ports need per decryption, the busier direction's: the request's beats
    /// on the way in, the result's on the way out, L + 1 cycles a beat. Cores share them, so
    /// more cores than period / this cannot all be kept busy.
    pub fn stream_cycles_per_decryption(&self) -> usize {
        let layout = self.frame_layout().expect("a validated configuration has a layout");
        layout.request_beats.max(layout.result_beats) * (layout.lanes + 1)
    }
    /// 32-bit lanes of a stream beat, L = stream_bits / 32.
    pub fn lanes(&self) -> usize {
        self.stream_bits / crate::interface::frames::LANE_BITS
    }
    /// Words of a request frame before padding: 1 + 2·S.
    pub fn request_words(&self) -> usize {
        crate::interface::frames::request_words(self.digits())
    }
    /// Words of a result frame before padding: 1 + S.
    pub fn result_words(&self) -> usize {
        crate::interface::frames::result_words(self.digits())
    }
    /// The frame sizes (words, beats, bytes) of this configuration.
    pub fn frame_layout(&self) -> Result<crate::interface::frames::FrameLayout, ConfigError> {
        self.validate()?;
        crate::interface::frames::FrameLayout::new(self.digits(), self.stream_bits)
            .map_err(|_| ConfigError::StreamBits(self.stream_bits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_defaults_validation_and_frame_sizes() {
        // The two-slot engine's figures; the lanes engine's below.
        let c = AcceleratorConfig { engine: Engine::Slots, ..Default::default() };
        assert_eq!((c.cores, c.stream_bits, c.lanes(), c.digits_per_step), (1, 256, 8, 3));
        // k = 3 over 2048-bit moduli: m = ⌈2052/51⌉ + 2 = 43 steps, S = 3·42 = 126 classic digits.
        assert_eq!((c.fold_shape().steps, c.digits()), (43, 126));
        assert_eq!(
            (c.cycles_per_fold_multiplication(), c.cycles_per_multiplication(), c.cycles_per_division()),
            (90, 508, 488)
        );
        assert_eq!((c.request_words(), c.result_words()), (253, 127));
        assert_eq!(c.frame_layout().unwrap().request_beats, 32);
        // The idle latency and the steady pace of one core at k = 3, measured in Verilator (`ecrt
        // bench --backend sim --key-bits 2048 --cores 1`; the accelerator's phe-vector test holds
        // the latency to the cycle), and at k = 8 by the same formula.
        assert_eq!((c.latency_cycles(), c.cycles_per_decryption_per_core()), (115_524, 115_524));
        let k8 = AcceleratorConfig { digits_per_step: 8, ..c.clone() };
        assert_eq!((k8.latency_cycles(), k8.cycles_per_decryption_per_core()), (52_949, 52_943));
        assert_eq!(c.stream_cycles_per_decryption(), 32 * 9);
        // The segmented schedule on the same multiplier: 2 multiplications per exponent bit (its
        // formula held to Verilator at 512 bits by the accelerator's tests).
        let segmented = AcceleratorConfig { schedule: ExponentSchedule::Segmented, window_bits: 1, ..c.clone() };
        assert_eq!(segmented.fold_multiplications_per_exponentiation(), 1 + 2 * 1024);
        assert_eq!((segmented.latency_cycles(), segmented.cycles_per_decryption_per_core()), (186_984, 186_984));
        assert_eq!(
            AcceleratorConfig { schedule: ExponentSchedule::Segmented, ..c.clone() }.validate(),
            Err(ConfigError::SegmentedWindowBits(5))
        );
        assert_eq!("segmented".parse(), Ok(ExponentSchedule::Segmented));
        assert!("spiral".parse::<ExponentSchedule>().is_err());
        assert_eq!(
            AcceleratorConfig { digits_per_step: 0, ..c.clone() }.validate(),
            Err(ConfigError::DigitsPerStep(0))
        );
        assert_eq!(
            AcceleratorConfig { digits_per_step: 17, ..c.clone() }.validate(),
            Err(ConfigError::DigitsPerStep(17))
        );
        assert_eq!(AcceleratorConfig { cores: 0, ..c.clone() }.validate(), Err(ConfigError::Cores(0)));
        assert_eq!(AcceleratorConfig { cores: 65, ..c.clone() }.validate(), Err(ConfigError::Cores(65)));
        assert_eq!(AcceleratorConfig { cores: 64, ..c.clone() }.validate(), Ok(()));
        assert_eq!(AcceleratorConfig { stream_bits: 32, ..c.clone() }.validate(), Err(ConfigError::StreamBits(32)));
        assert!(ConfigError::StreamBits(96).to_string().contains("64, 128, 256 or 512"));
        // The lanes engine at k = 3: six lanes, three jobs a core; a path on the deep loop, the
        // hand-over, the round (the formulas held to Verilator at 512 and 1024 bits by the
        // accelerator's tests).
        let lanes = AcceleratorConfig { engine: Engine::Lanes, ..c.clone() };
        assert_eq!(
            (lanes.jobs_per_core(), lanes.lane_wait_cycles(), lanes.cycles_per_decryption_path()),
            (3, 1, 344_910)
        );
        assert_eq!(lanes.latency_cycles(), c.latency_cycles() - c.cycles_per_decryption_path() + 344_910 + 7);
        assert_eq!(lanes.latency_cycles(), 345_479);
        assert_eq!((lanes.cycles_per_round(), lanes.cycles_per_decryption_per_core()), (345_210, 115_070));
        assert_eq!(lanes.cycles_per_round() % 6, 0, "whole turns of the lanes");
        assert_eq!(
            AcceleratorConfig { window_bits: 1, ..lanes.clone() }.validate(),
            Err(ConfigError::LanesSchedule("1-bit windows".into(), 3))
        );
        assert!(AcceleratorConfig { window_bits: 6, digits_per_step: 12, ..lanes.clone() }.validate().is_err());
        assert_eq!(AcceleratorConfig { window_bits: 6, digits_per_step: 11, ..lanes.clone() }.validate(), Ok(()));
        // The delay engine at k = 3: two lanes, one job a core; S = 3·(45 − 1) = 132 digits (its
        // multiplier's R); the idle latency and the pace as `ecrt bench --backend sim --key-bits
        // 2048 --engine delay` measured them in Verilator (its constant-time test holds the
        // formulas to the cycle at 512 bits).
        let delay = AcceleratorConfig { engine: Engine::Delay, ..c.clone() };
        assert_eq!((delay.digits(), delay.jobs_per_core(), delay.lane_wait_cycles()), (132, 1, 1));
        assert_eq!((delay.latency_cycles(), delay.cycles_per_decryption_per_core()), (139_908, 139_622));
        assert_eq!(
            AcceleratorConfig { window_bits: 1, ..delay.clone() }.validate(),
            Err(ConfigError::DelaySchedule("1-bit windows".into()))
        );
        assert_eq!("delay".parse(), Ok(Engine::Delay));
        assert_eq!("lanes".parse(), Ok(Engine::Lanes));
        assert!("wheels".parse::<Engine>().is_err());
        // Manifests written before these fields existed still read.
        let old = r#"{"key_bits":1024,"limb_bits":17,"window_bits":4,"clock_mhz":100.0,"part":"x"}"#;
        let c: AcceleratorConfig = serde_json::from_str(old).unwrap();
        assert_eq!((c.cores, c.stream_bits, c.digits_per_step, c.schedule), (1, 256, 3, ExponentSchedule::Windows));
        assert_eq!(c.engine, Engine::Slots);
        // A configuration that names no engine gets the lanes where they run it.
        assert_eq!(AcceleratorConfig::default().engine, Engine::Lanes);
        assert_eq!(Engine::default_for(&AcceleratorConfig::default()), Engine::Lanes);
        let segmented =
            AcceleratorConfig { schedule: ExponentSchedule::Segmented, window_bits: 1, ..Default::default() };
        assert_eq!(Engine::default_for(&segmented), Engine::Slots);
    }
}
