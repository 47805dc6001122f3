//! What the register block says about the bitstream, and the register sequences that set the
//! card up (loading a key, the result packets' hold): the contract's
//! ([`ecrt_contract::session`]) over the `_user` node.

pub use ecrt_contract::host::key_id;
pub use ecrt_contract::session::{load_key, set_packet_hold, DeviceInfo};
