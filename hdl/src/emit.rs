//! Verilog emission: the RTL of a configuration, marked as generated, and its manifest (the
//! configuration, the module list, the top's ports, the frame sizes, the register map and a
//! content hash) that the simulator, the driver and the Vivado flow read.
//!
//! [`emit`] gives the whole accelerator ([`Accelerator`]); [`emit_modexp`] the exponentiation unit
//! alone, [`emit_fold_mul`] the multiplier alone, [`emit_deep_mul`] the deep-loop multiplier
//! alone, [`emit_lane_exp`] the decryption paths in its lanes and [`emit_deep_core`] a decryption
//! core on them, for their own tests and benchmarks.

use crate::config::{AcceleratorConfig, ConfigError};
use crate::decryption::deep_core::{DeepCore, DelayCore};
use crate::exponentiation::lane_exp::LaneExp;
use crate::exponentiation::modexp::ModExp;
use crate::interface::{REGISTERS, VERSION_MAJOR, VERSION_MINOR};
use crate::multiplier::deep_mul::DeepMul;
use crate::multiplier::delay_mul::DelayMul;
use crate::multiplier::fold_mul::FoldMul;
use crate::shell::accelerator::Accelerator;
use ecrt_golden::hw::{DelayedShape, FoldShape};
use rust_hdl::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// A port of the top module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortInfo {
    pub name: String,
    /// "input" or "output".
    pub direction: String,
    pub width: usize,
}

/// What `manifest.json` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// "ecrt-hdl <version>".
    pub generator: String,
    pub config: AcceleratorConfig,
    /// The top module's name.
    pub top: String,
    /// The Verilog file, relative to the manifest.
    pub verilog: String,
    /// SHA-256 of the Verilog file's bytes.
    pub sha256: String,
    pub digits: usize,
    pub exponent_bits: usize,
    pub windows: usize,
    pub multiplications_per_exponentiation: usize,
    pub modules: Vec<String>,
    pub ports: Vec<PortInfo>,
    /// Decryption cores (the accelerator; 0 for the exponentiation unit alone).
    #[serde(default)]
    pub cores: usize,
    /// TDATA width of both streams.
    #[serde(default)]
    pub stream_bits: usize,
    /// 32-bit lanes of a beat.
    #[serde(default)]
    pub lanes: usize,
    /// Words of a request frame before padding (1 + 2·S).
    #[serde(default)]
    pub request_words: usize,
    /// Words of a result frame before padding (1 + S).
    #[serde(default)]
    pub result_words: usize,
    /// Beats of a request frame.
    #[serde(default)]
    pub request_beats: usize,
    /// Beats of a result frame.
    #[serde(default)]
    pub result_beats: usize,
    /// The host interface's version, "major.minor" (empty for the exponentiation unit alone).
    #[serde(default)]
    pub interface_version: String,
    /// The AXI4-Lite registers' byte offsets by name (empty for the exponentiation unit alone).
    #[serde(default)]
    pub registers: BTreeMap<String, u32>,
}

/// The emitted design.
pub struct Emitted {
    pub verilog: String,
    pub manifest: Manifest,
}

/// Name of the accelerator's Verilog file in an output directory.
pub const VERILOG_FILE: &str = "ecrt_accelerator.v";
/// Name of the exponentiation unit's Verilog file ([`emit_modexp`]).
pub const MODEXP_VERILOG_FILE: &str = "ecrt_modexp.v";
/// Name of the manifest in an output directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// Generates the accelerator of `config`: registers, dispatcher, `config.cores` decryption cores
/// and collector.
pub fn emit(config: &AcceleratorConfig) -> Result<Emitted, ConfigError> {
    config.validate()?;
    let layout = config.frame_layout()?;
    let owned = config.clone();
    let body = generate(move || {
        let mut uut = Accelerator::new(&owned);
        uut.connect_all();
        generate_verilog(&uut)
    });
    let mut emitted = finish(config, body, VERILOG_FILE);
    let m = &mut emitted.manifest;
    m.cores = config.cores;
    m.stream_bits = config.stream_bits;
    m.lanes = layout.lanes;
    m.request_words = layout.request_words;
    m.result_words = layout.result_words;
    m.request_beats = layout.request_beats;
    m.result_beats = layout.result_beats;
    m.interface_version = format!("{VERSION_MAJOR}.{VERSION_MINOR}");
    m.registers = REGISTERS.iter().map(|r| (r.name.to_string(), r.offset)).collect();
    Ok(emitted)
}

/// Generates the exponentiation unit of `config` alone (the engine's tests and benchmarks drive
/// its ports directly).
pub fn emit_modexp(config: &AcceleratorConfig) -> Result<Emitted, ConfigError> {
    config.validate()?;
    let (shape, exponent_bits, schedule) = (config.fold_shape(), config.exponent_bits(), config.golden_schedule());
    let body = generate(move || {
        let mut uut = ModExp::new(&shape, exponent_bits, schedule, false);
        uut.connect_all();
        generate_verilog(&uut)
    });
    Ok(finish(config, body, MODEXP_VERILOG_FILE))
}

/// Generates the folding multiplier of `shape` alone (its own tests and benchmarks drive its
/// ports directly): the Verilog, top module `top`.
pub fn emit_fold_mul(shape: &FoldShape) -> String {
    let shape = *shape;
    generate(move || {
        let mut uut = FoldMul::new(&shape);
        uut.connect_all();
        generate_verilog(&uut)
    })
}

/// Generates the deep-loop multiplier of `shape` alone (its own tests and benchmarks drive its
/// ports directly): the Verilog, top module `top`.
pub fn emit_deep_mul(shape: &FoldShape) -> String {
    let shape = *shape;
    generate(move || {
        let mut uut = DeepMul::new(&shape);
        uut.connect_all();
        generate_verilog(&uut)
    })
}

/// Generates the delayed-quotient multiplier of `shape` alone (its tests drive its ports
/// directly): the Verilog, top module `top`.
pub fn emit_delay_mul(shape: &DelayedShape) -> String {
    let shape = *shape;
    generate(move || {
        let mut uut = DelayMul::new(&shape);
        uut.connect_all();
        generate_verilog(&uut)
    })
}

/// Generates the decryption paths in the deep-loop multiplier's lanes alone (exponents of
/// `exponent_bits` bits in windows of `window_bits`): the Verilog, top module `top`.
pub fn emit_lane_exp(shape: &FoldShape, exponent_bits: usize, window_bits: usize) -> String {
    let shape = *shape;
    generate(move || {
        let mut uut = LaneExp::new(&shape, exponent_bits, window_bits);
        uut.connect_all();
        generate_verilog(&uut)
    })
}

/// Generates a decryption core on the deep loop's lanes alone (exponents of `exponent_bits` bits
/// in windows of `window_bits`): the Verilog, top module `top`.
pub fn emit_deep_core(shape: &FoldShape, exponent_bits: usize, window_bits: usize) -> String {
    let shape = *shape;
    generate(move || {
        let mut uut = DeepCore::new(&shape, exponent_bits, window_bits);
        uut.connect_all();
        generate_verilog(&uut)
    })
}

/// Generates a decryption core on the delayed-quotient multiplier's two lanes alone (exponents
/// of `exponent_bits` bits in windows of `window_bits`): the Verilog, top module `top`.
pub fn emit_delay_core(shape: &DelayedShape, exponent_bits: usize, window_bits: usize) -> String {
    let shape = *shape;
    generate(move || {
        let mut uut = DelayCore::new(&shape, exponent_bits, window_bits);
        uut.connect_all();
        generate_verilog(&uut)
    })
}

/// Runs a generator on a thread with a large stack: the design structure of a 4096-bit
/// configuration is several megabytes.
fn generate(f: impl FnOnce() -> String + Send + 'static) -> String {
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(f)
        .expect("spawn the generator thread")
        .join()
        .expect("Verilog generation panicked")
}

/// The marked Verilog and the manifest's common part.
fn finish(config: &AcceleratorConfig, body: String, file: &str) -> Emitted {
    let header = format!(
        "// Generated by ecrt-hdl {} (`ecrt rtl`): do not edit.\n// Configuration: {}\n",
        env!("CARGO_PKG_VERSION"),
        serde_json::to_string(config).expect("serializable")
    );
    let verilog = header + &body;
    let manifest = Manifest {
        generator: format!("ecrt-hdl {}", env!("CARGO_PKG_VERSION")),
        config: config.clone(),
        top: "top".into(),
        verilog: file.into(),
        sha256: format!("{:x}", Sha256::digest(verilog.as_bytes())),
        digits: config.digits(),
        exponent_bits: config.exponent_bits(),
        windows: config.windows(),
        multiplications_per_exponentiation: config.multiplications_per_exponentiation(),
        modules: module_names(&verilog),
        ports: top_ports(&verilog, "top"),
        cores: 0,
        stream_bits: 0,
        lanes: 0,
        request_words: 0,
        result_words: 0,
        request_beats: 0,
        result_beats: 0,
        interface_version: String::new(),
        registers: BTreeMap::new(),
    };
    Emitted { verilog, manifest }
}

/// Writes the Verilog (under the manifest's file name) and `manifest.json` into `dir`.
pub fn write(emitted: &Emitted, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(&emitted.manifest.verilog), &emitted.verilog)?;
    std::fs::write(
        dir.join(MANIFEST_FILE),
        serde_json::to_string_pretty(&emitted.manifest).expect("serializable") + "\n",
    )
}
fn module_names(verilog: &str) -> Vec<String> {
    verilog
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("module "))
        .map(|rest| rest.split(['(', ' ', ';']).next().unwrap_or("").to_string())
        .collect()
}

/// The ports of module `top`, from its non-ANSI declarations (`input wire [16:0] a;`).
pub fn top_ports(verilog: &str, top: &str) -> Vec<PortInfo> {
    let mut ports = Vec::new();
    let mut inside = false;
    for line in verilog.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("module ") {
            inside = rest.starts_with(&format!("{top}(")) || rest.starts_with(&format!("{top} "));
            continue;
        }
        if !inside {
            continue;
        }
        if line.starts_with("endmodule") {
            break;
        }
        let direction = if line.starts_with("input ") {
            "input"
        } else if line.starts_with("output ") {
            "output"
        } else {
            continue;
        };
        let decl = line.trim_end_matches(';');
        let width = match (decl.find('['), decl.find(':')) {
            (Some(open), Some(colon)) => decl[open + 1..colon].trim().parse::<usize>().map_or(1, |msb| msb + 1),
            _ => 1,
        };
        let name = decl.split_whitespace().last().unwrap_or("").to_string();
        ports.push(PortInfo { name, direction: direction.into(), width });
    }
    ports
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_accelerator_emits_marked_verilog_and_a_consistent_manifest() {
        let config = AcceleratorConfig {
            key_bits: 512,
            window_bits: 4,
            cores: 2,
            stream_bits: 128,
            engine: crate::config::Engine::Slots,
            ..Default::default()
        };
        let emitted = emit(&config).unwrap();
        assert!(emitted.verilog.starts_with("// Generated by ecrt-hdl"));
        let m = &emitted.manifest;
        assert_eq!((m.digits, m.cores, m.stream_bits, m.lanes), (36, 2, 128, 4));
        assert_eq!((m.request_words, m.request_beats, m.result_words, m.result_beats), (73, 19, 37, 10));
        assert_eq!(m.verilog, VERILOG_FILE);
        assert_eq!(m.interface_version, "5.3");
        assert_eq!(m.registers["ID"], 0x000);
        assert_eq!(m.registers["KEY_DATA"], 0x04C);
        assert_eq!(m.registers["PACKET_HOLD"], 0x050);
        assert_eq!(m.registers.len(), REGISTERS.len());
        assert_eq!(m.sha256, format!("{:x}", Sha256::digest(emitted.verilog.as_bytes())));
        assert_eq!(m.modules[0], "top");
        let port =
            |name: &str, direction: &str, width| PortInfo { name: name.into(), direction: direction.into(), width };
        for p in [
            port("clock", "input", 1),
            port("s_axil_awaddr", "input", 12),
            port("s_axil_rdata", "output", 32),
            port("s_axis_tdata$3", "input", 32),
            port("s_axis_tready", "output", 1),
            port("m_axis_tdata$0", "output", 32),
            port("m_axis_tlast", "output", 1),
        ] {
            assert!(m.ports.contains(&p), "{p:?}");
        }
        assert!(!m.ports.iter().any(|p| p.name == "s_axis_tdata$4"));
        assert_eq!(emit(&AcceleratorConfig { cores: 0, ..config.clone() }).err(), Some(ConfigError::Cores(0)));
        assert_eq!(emit(&AcceleratorConfig { limb_bits: 16, ..config }).err(), Some(ConfigError::LimbBits(16)));
    }

    #[test]
    fn modexp_emission_keeps_the_engine_ports() {
        let config = AcceleratorConfig { key_bits: 512, window_bits: 4, ..Default::default() };
        let emitted = emit_modexp(&config).unwrap();
        let m = &emitted.manifest;
        // k = 4 over 512-bit moduli: m = 10 steps, S = 4·9 = 36 digits.
        assert_eq!((m.digits, m.verilog.as_str()), (36, MODEXP_VERILOG_FILE));
        assert!(m.ports.contains(&PortInfo { name: "result$35".into(), direction: "output".into(), width: 18 }));
        assert!(m.ports.contains(&PortInfo { name: "start0".into(), direction: "input".into(), width: 1 }));
        assert!(m.registers.is_empty());
        let dir = tempfile::tempdir().unwrap();
        write(&emitted, dir.path()).unwrap();
        assert!(dir.path().join(MODEXP_VERILOG_FILE).exists());
        let back: Manifest =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(MANIFEST_FILE)).unwrap()).unwrap();
        assert_eq!(&back, m);
        assert_eq!(emit_modexp(&config).unwrap().manifest.sha256, m.sha256, "generation is deterministic");
    }
}
