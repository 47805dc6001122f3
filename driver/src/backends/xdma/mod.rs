//! The `xdma` backend: the accelerator on a board behind Xilinx's XDMA driver (docs/background.md#xdma), or
//! the same nodes served by `ecrt emulate`. Opening probes the register block and refuses a
//! bitstream that does not fit the key, opens C2H (once per card: another live process holding it
//! is refused) and H2C, takes the card over from whatever an earlier process left ([`takeover`]),
//! loads the key through the registers and sets the result packets' hold (so that a burst of
//! results comes back in one C2H transfer), then starts the C2H reader before the H2C writer
//! ([`stream`]).

pub mod nodes;
pub mod probe;
pub mod stream;
pub mod takeover;

use crate::engine::{Engine, OpenReport};
use anyhow::Context;
use ecrt_golden::PrivateKey;
use nodes::DeviceNodes;
use probe::DeviceInfo;
use std::path::Path;
use std::sync::mpsc;

/// Opens the device whose nodes start with `device` (e.g. `/dev/xdma0`) and loads `key`.
pub fn open(device: &Path, key: &PrivateKey) -> anyhow::Result<Engine> {
    let nodes = DeviceNodes::new(device);
    let mut user = nodes.open_user()?;
    // Reads only, and checks on the host: nothing disturbs a card another process is using.
    let info = DeviceInfo::probe(&mut user).with_context(|| format!("cannot use {}", nodes.user.display()))?;
    let config = info.config();
    let hw = ecrt_contract::host::hardware_key(key, &config)
        .with_context(|| format!("the accelerator at {} cannot take this key ({info})", device.display()))?;
    let key_id = probe::key_id(key.public().n());
    let layout = info.layout()?;
    // C2H opens once: holding it, this process is the card's only host.
    let c2h = nodes.open_c2h()?;
    let mut h2c = nodes.open_h2c()?;
    let (takeover, c2h) = takeover::take_over(&mut user, c2h, &mut h2c, &layout, &nodes, &takeover::Limits::default())
        .with_context(|| format!("cannot take over {}", device.display()))?;
    probe::load_key(&mut user, &hw, config.window_bits, key_id)
        .with_context(|| format!("cannot load the key into {}", device.display()))?;
    probe::set_packet_hold(&mut user, &layout).with_context(|| format!("cannot configure {}", device.display()))?;
    let setup = stream::StreamSetup {
        layout,
        key_id,
        modulus: key.public().n().clone(),
        window: info.cores * info.jobs_per_core,
        h2c_name: nodes.h2c.display().to_string(),
        c2h_name: nodes.c2h.display().to_string(),
    };
    let (event_tx, events) = mpsc::channel();
    let (threads, stop, held, jobs) = stream::start(h2c, c2h, setup, event_tx)
        .with_context(|| format!("cannot start the threads that drive {}", device.display()))?;
    let mut description = format!("{} ({info})", device.display());
    let mut opened = OpenReport { dropped_results: takeover.dropped_results, notice: None };
    if takeover.dropped_results > 0 {
        description += &format!("; took over: {takeover}");
        opened.notice = Some(format!("took over {}: {takeover}", device.display()));
    }
    Ok(Engine::new("xdma", description, jobs, events, threads, Some(stop)).with_held(held).with_open_report(opened))
}

/// The small card both backends' unit tests talk to: its frame sizes and its result frames.
#[cfg(test)]
pub(crate) mod test_card {
    use ecrt_contract::interface::{self as itf, FrameLayout, ResultFrame};
    use num_bigint::BigUint;

    pub const DIGITS: usize = 8;
    pub const STREAM_BITS: usize = 64;

    pub fn layout() -> FrameLayout {
        FrameLayout::new(DIGITS, STREAM_BITS).unwrap()
    }

    /// A result frame's bytes.
    pub fn result_bytes(tag: u16, status: u8, plaintext: BigUint) -> Vec<u8> {
        let frame = ResultFrame { tag, status, plaintext };
        itf::words_to_bytes(&itf::encode_result_words(&frame, DIGITS, STREAM_BITS).unwrap())
    }
}
