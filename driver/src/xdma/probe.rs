//! What the register block says about the bitstream, and loading a key through it: the
//! contract's register sequences ([`ecrt_contract::session`]) over the `_user` node.

pub use ecrt_contract::host::key_id;
pub use ecrt_contract::session::{load_key, DeviceInfo};
