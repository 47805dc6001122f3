//! The flags every command that builds or drives the accelerator takes: its configuration, its
//! exponent schedule, its top's parameters, and which backend decrypts.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use ecrt_contract::config::{AcceleratorConfig, Engine, ExponentSchedule};
use ecrt_driver::backends::BackendKind;

/// A `--backend` flag's parser, taking the backends in `kinds` by name.
pub fn backend_parser(kinds: &'static [BackendKind]) -> impl TypedValueParser<Value = BackendKind> {
    PossibleValuesParser::new(kinds.iter().map(|k| k.name())).try_map(|name| name.parse::<BackendKind>())
}

/// The accelerator's configuration, as every command that builds or drives it takes it.
#[derive(clap::Args, Clone)]
pub struct ConfigArgs {
    /// Bits of the Paillier modulus n (512 to 4096, a multiple of 64).
    #[arg(long, default_value_t = AcceleratorConfig::default().key_bits)]
    pub key_bits: usize,
    /// Bits of a multiplier digit (only 17 is implemented).
    #[arg(long, default_value_t = AcceleratorConfig::default().limb_bits)]
    pub limb_bits: usize,
    #[command(flatten)]
    pub schedule: ScheduleArgs,
    /// The accelerator's clock in MHz: the reference for reported times, and with `rtl --board` the
    /// clock the board makes for it (there, by default, the design's conservative clock: 1000 / (4 ×
    /// its logic delay), rounded down to a clock the board makes).
    #[arg(long, default_value_t = AcceleratorConfig::default().clock_mhz)]
    pub clock_mhz: f64,
    #[command(flatten)]
    pub top: TopArgs,
}

/// How the exponent's bits become multiplications.
#[derive(clap::Args, Clone)]
pub struct ScheduleArgs {
    /// The exponent schedule: `windows` (fixed windows, left to right, a table multiplication per
    /// window) or `segmented` (MESA's right to left: per bit a multiplication and a squaring).
    #[arg(long, default_value = "windows",
          value_parser = PossibleValuesParser::new(ExponentSchedule::ALL.map(ExponentSchedule::name))
              .try_map(|name| name.parse::<ExponentSchedule>()))]
    pub schedule: ExponentSchedule,
    /// Width of the exponent's windows with `--schedule windows`, 1 to 6 bits [default: 5].
    #[arg(long)]
    pub window_bits: Option<usize>,
}

impl ScheduleArgs {
    /// `config` with this schedule; the segmented one loads the exponent in 1-bit windows.
    pub fn apply(&self, config: AcceleratorConfig) -> AcceleratorConfig {
        let default_window_bits = match self.schedule {
            ExponentSchedule::Windows => AcceleratorConfig::default().window_bits,
            ExponentSchedule::Segmented => 1,
        };
        AcceleratorConfig {
            schedule: self.schedule,
            window_bits: self.window_bits.unwrap_or(default_window_bits),
            ..config
        }
    }
}

/// The accelerator top's parameters (the key size comes from elsewhere: a flag or the key).
#[derive(clap::Args, Clone)]
pub struct TopArgs {
    /// Decryption cores behind the dispatcher and the collector.
    #[arg(long, default_value_t = AcceleratorConfig::default().cores)]
    pub cores: usize,
    /// TDATA width of the AXI4-Stream ports: 64, 128, 256 or 512 bits.
    #[arg(long, default_value_t = AcceleratorConfig::default().stream_bits)]
    pub stream_bits: usize,
    /// Limbs of the multiplier the exponentiation's folding multiplier consumes per step, 1 to 16:
    /// more is fewer cycles per multiplication for more DSP48E1s.
    #[arg(long, default_value_t = AcceleratorConfig::default().digits_per_step)]
    pub digits_per_step: usize,
    /// What each core is built around: `lanes` (the deep-loop multiplier's k + 3 lanes, a
    /// decryption per pair; windows of 2 to 6 bits) or `slots` (two slots on the folding
    /// multiplier, one decryption in flight; every schedule) [default: lanes, or slots for a
    /// schedule the lanes do not run].
    #[arg(long,
          value_parser = PossibleValuesParser::new(Engine::ALL.map(Engine::name))
              .try_map(|name| name.parse::<Engine>()))]
    pub engine: Option<Engine>,
}

impl TopArgs {
    /// The configuration that decrypts under `key` (its key size) with these parameters.
    pub fn config_for_key(&self, key: &ecrt_golden::PrivateKey, schedule: &ScheduleArgs) -> AcceleratorConfig {
        ecrt_driver::backends::sim::config_for_key(key, &self.base(schedule))
    }

    /// The configuration these parameters and `schedule` make, but for the key size.
    pub fn base(&self, schedule: &ScheduleArgs) -> AcceleratorConfig {
        let config = schedule.apply(AcceleratorConfig {
            cores: self.cores,
            stream_bits: self.stream_bits,
            digits_per_step: self.digits_per_step,
            ..Default::default()
        });
        // The engine named, or the one the schedule gets by default.
        AcceleratorConfig { engine: self.engine.unwrap_or_else(|| Engine::default_for(&config)), ..config }
    }
}

impl ConfigArgs {
    /// The validated configuration.
    pub fn config(&self) -> anyhow::Result<AcceleratorConfig> {
        let config = self.unvalidated();
        config.validate()?;
        Ok(config)
    }

    /// The configuration as given, not yet validated.
    pub fn unvalidated(&self) -> AcceleratorConfig {
        AcceleratorConfig {
            key_bits: self.key_bits,
            limb_bits: self.limb_bits,
            clock_mhz: self.clock_mhz,
            ..self.top.base(&self.schedule)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Command {
        #[command(flatten)]
        config: ConfigArgs,
    }

    fn config(args: &[&str]) -> anyhow::Result<AcceleratorConfig> {
        Command::try_parse_from([&["ecrt"], args].concat())?.config.config()
    }

    #[test]
    fn the_engine_is_the_lanes_unless_the_schedule_needs_the_slots() {
        assert_eq!(config(&[]).unwrap().engine, Engine::Lanes);
        assert_eq!(config(&["--schedule", "segmented"]).unwrap().engine, Engine::Slots);
        assert_eq!(config(&["--window-bits", "1"]).unwrap().engine, Engine::Slots);
        assert_eq!(config(&["--engine", "slots"]).unwrap().engine, Engine::Slots);
        let named = config(&["--engine", "lanes", "--schedule", "segmented"]).unwrap_err().to_string();
        assert!(named.contains("`--engine slots`"), "{named}");
    }
}
