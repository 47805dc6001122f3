//! `ecrt serve`: one process owns the devices and the private keys; many applications decrypt
//! through it over a Unix socket, in the spirit of ssh-agent. docs/service.md describes the
//! protocol, the scheduling, access and faults. The protocol and the client are the host
//! library's (`ecrt_driver::backends::service`): applications need only that.
//!
//! - [`server`]: [`server::Service`], the listener and the connections;
//! - [`scheduler`]: fair queues per key and client, and when a device switches keys;
//! - [`device`]: a thread per device;
//! - [`state`]: what those threads share, and the status and metrics made of it;
//! - [`access`]: peer credentials, allow-lists, key-file permissions;
//! - [`limits`]: what one client may hold: connections and deadlines;
//! - [`socket`]: listening sockets created with their final mode, removed only by their creator;
//! - [`metrics_http`]: the metrics over HTTP, on TCP or a Unix socket;
//! - [`hardening`]: no core dumps or ptrace, memory locked in RAM;
//! - [`process`]: `ecrt serve` as a child process, for the benches.

pub mod access;
pub mod device;
pub mod hardening;
pub mod limits;
pub mod metrics_http;
pub mod process;
pub mod scheduler;
pub mod server;
pub mod socket;
pub mod state;

pub use ecrt_driver::backends::service::key_id;
pub use limits::ClientLimits;
pub use metrics_http::MetricsEndpoint;
pub use server::{Service, ServiceConfig, ServiceKey};
