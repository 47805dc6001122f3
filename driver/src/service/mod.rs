//! `ecrt serve`: one process owns the devices and the private keys; many applications decrypt
//! through it over a Unix socket, in the spirit of ssh-agent. docs/service.md describes the
//! protocol, the scheduling, access and faults.
//!
//! - [`protocol`]: the frames on the socket;
//! - [`server`]: [`server::Service`], the listener and the connections;
//! - [`scheduler`]: fair queues per key and client, and when a device switches keys;
//! - [`device`]: a thread per device;
//! - [`state`]: what those threads share, and the status and metrics made of it;
//! - [`access`]: peer credentials, allow-lists, key-file permissions;
//! - [`limits`]: what one client may hold: connections and deadlines;
//! - [`socket`]: listening sockets created with their final mode, removed only by their creator;
//! - [`metrics_http`]: the metrics over HTTP, on TCP or a Unix socket;
//! - [`hardening`]: no core dumps or ptrace, memory locked in RAM;
//! - [`client`]: [`client::ServiceClient`], and the engine behind `BackendSpec::Service`.

pub mod access;
pub mod client;
pub mod device;
pub mod hardening;
pub mod limits;
pub mod metrics_http;
pub mod protocol;
pub mod scheduler;
pub mod server;
pub mod socket;
pub mod state;

pub use client::{ServiceClient, ServiceError};
pub use limits::ClientLimits;
pub use metrics_http::MetricsEndpoint;
pub use server::{key_id, Service, ServiceConfig, ServiceKey};
