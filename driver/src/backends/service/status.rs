//! What an `ecrt serve` reports about itself: [`ServiceStatus`], which a `Status` request carries
//! as JSON and `ecrt status` prints, and its metrics in Prometheus's text format, made from the
//! status by one table, [`METRICS`]: a metric is one row there (docs/service.md's list is
//! rendered from it, and a test keeps it current).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The service as a whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceStatus {
    /// "ecrt VERSION".
    pub service: String,
    pub protocol: u16,
    pub socket: String,
    pub uptime_seconds: f64,
    pub stopping: bool,
    /// Items held per client at most.
    pub credit: usize,
    pub limits: LimitsStatus,
    pub keys: Vec<KeyStatus>,
    pub devices: Vec<DeviceStatus>,
    /// Connections with a key open.
    pub clients: Vec<ClientStatus>,
    pub counters: Counters,
}

/// The limits on clients.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LimitsStatus {
    pub max_clients: usize,
    pub max_clients_per_uid: usize,
    pub handshake_seconds: f64,
    /// `None`: a connection without a key may idle without limit.
    pub idle_seconds: Option<f64>,
    pub frame_seconds: f64,
    pub write_seconds: f64,
}

/// One of the service's keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyStatus {
    pub id: String,
    pub bits: u64,
    /// Items waiting for a device.
    pub queued: usize,
    pub clients: usize,
    pub decryptions: u64,
    /// Whether an allow-list restricts it.
    pub restricted: bool,
}

/// One device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceStatus {
    pub name: String,
    /// The backend's name, once it is open.
    pub backend: String,
    /// "up", "failed" or "starting".
    pub state: String,
    /// The key it holds.
    pub key: Option<String>,
    pub in_flight: usize,
    pub completed: u64,
    /// Time with work in flight.
    pub busy_seconds: f64,
    pub key_switches: u64,
    pub failures: u64,
    /// Why it last failed.
    pub error: Option<String>,
}

impl DeviceStatus {
    pub fn is_up(&self) -> bool {
        self.state == "up"
    }
}

/// One connection with a key open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientStatus {
    pub id: u64,
    pub uid: u32,
    pub pid: i32,
    pub key: String,
    pub submitted: u64,
    pub unanswered: usize,
    pub queued: usize,
}

/// Counts since the service started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    /// Plaintexts delivered.
    pub decryptions: u64,
    /// Item errors delivered, by kind ([`ITEM_ERROR_KINDS`]).
    pub errors: BTreeMap<String, u64>,
    pub connections: u64,
    /// Answered with an error: the most clients, in all or of the UID, were connected, or no
    /// thread could be started.
    pub turned_away: u64,
    /// From peers that no allow-list admits.
    pub refused_connections: u64,
    /// Closed for missing a deadline.
    pub timed_out: u64,
    /// `Open`s refused by a key's allow-list.
    pub refusals: u64,
    /// Items retried after a device failed.
    pub retries: u64,
}

/// The kinds of item error, as the metrics label them.
pub const ITEM_ERROR_KINDS: [&str; 6] = ["invalid", "status", "corrupted", "backend", "timeout", "lost"];

/// A metric family: its name (after `ecrt_`), type, help text, the label its samples carry (if
/// any), and its samples, made from a status.
pub struct Metric {
    pub name: &'static str,
    pub kind: &'static str,
    pub help: &'static str,
    pub label: Option<&'static str>,
    pub samples: fn(&ServiceStatus) -> Vec<(String, String)>,
}

fn per_key(s: &ServiceStatus, value: impl Fn(&KeyStatus) -> String) -> Vec<(String, String)> {
    s.keys.iter().map(|k| (k.id.clone(), value(k))).collect()
}

fn per_device(s: &ServiceStatus, value: impl Fn(&DeviceStatus) -> String) -> Vec<(String, String)> {
    s.devices.iter().map(|d| (d.name.clone(), value(d))).collect()
}

fn one(value: impl ToString) -> Vec<(String, String)> {
    vec![(String::new(), value.to_string())]
}

/// Every metric the service exports.
pub const METRICS: &[Metric] = &[
    Metric {
        name: "decryptions_total",
        kind: "counter",
        help: "Plaintexts delivered to clients.",
        label: Some("key"),
        samples: |s| per_key(s, |k| k.decryptions.to_string()),
    },
    Metric {
        name: "item_errors_total",
        kind: "counter",
        help: "Item errors delivered to clients, by kind.",
        label: Some("kind"),
        samples: |s| {
            let count = |kind: &str| s.counters.errors.get(kind).copied().unwrap_or(0).to_string();
            ITEM_ERROR_KINDS.iter().map(|kind| (kind.to_string(), count(kind))).collect()
        },
    },
    Metric {
        name: "queue_depth",
        kind: "gauge",
        help: "Ciphertexts queued for a device.",
        label: Some("key"),
        samples: |s| per_key(s, |k| k.queued.to_string()),
    },
    Metric {
        name: "device_up",
        kind: "gauge",
        help: "1 while the device works.",
        label: Some("device"),
        samples: |s| per_device(s, |d| u8::from(d.is_up()).to_string()),
    },
    Metric {
        name: "device_in_flight",
        kind: "gauge",
        help: "Ciphertexts at the device.",
        label: Some("device"),
        samples: |s| per_device(s, |d| d.in_flight.to_string()),
    },
    Metric {
        name: "device_busy_seconds_total",
        kind: "counter",
        help: "Time the device had work in flight.",
        label: Some("device"),
        samples: |s| per_device(s, |d| format!("{:.6}", d.busy_seconds)),
    },
    Metric {
        name: "device_decryptions_total",
        kind: "counter",
        help: "Items the device answered.",
        label: Some("device"),
        samples: |s| per_device(s, |d| d.completed.to_string()),
    },
    Metric {
        name: "key_switches_total",
        kind: "counter",
        help: "Keys loaded into the device.",
        label: Some("device"),
        samples: |s| per_device(s, |d| d.key_switches.to_string()),
    },
    Metric {
        name: "device_failures_total",
        kind: "counter",
        help: "Times the device failed.",
        label: Some("device"),
        samples: |s| per_device(s, |d| d.failures.to_string()),
    },
    Metric {
        name: "clients",
        kind: "gauge",
        help: "Connections with a key open.",
        label: None,
        samples: |s| one(s.clients.len()),
    },
    Metric {
        name: "connections_total",
        kind: "counter",
        help: "Connections accepted.",
        label: None,
        samples: |s| one(s.counters.connections),
    },
    Metric {
        name: "connections_turned_away_total",
        kind: "counter",
        help: "Connections answered with an error because the most clients (in all, or of the UID) were connected.",
        label: None,
        samples: |s| one(s.counters.turned_away),
    },
    Metric {
        name: "connections_refused_total",
        kind: "counter",
        help: "Connections from peers that no allow-list admits.",
        label: None,
        samples: |s| one(s.counters.refused_connections),
    },
    Metric {
        name: "connections_timed_out_total",
        kind: "counter",
        help: "Connections closed for missing a deadline (Hello, idle, a frame).",
        label: None,
        samples: |s| one(s.counters.timed_out),
    },
    Metric {
        name: "refusals_total",
        kind: "counter",
        help: "Opens refused by a key's allow-list.",
        label: None,
        samples: |s| one(s.counters.refusals),
    },
    Metric {
        name: "retries_total",
        kind: "counter",
        help: "Items retried after a device failed.",
        label: None,
        samples: |s| one(s.counters.retries),
    },
];

impl ServiceStatus {
    /// The metrics, in Prometheus's text exposition format.
    pub fn prometheus(&self) -> String {
        let mut out = String::new();
        for metric in METRICS {
            let name = metric.name;
            let _ = writeln!(out, "# HELP ecrt_{name} {}\n# TYPE ecrt_{name} {}", metric.help, metric.kind);
            for (label, value) in (metric.samples)(self) {
                match metric.label {
                    Some(key) => {
                        let _ = writeln!(out, "ecrt_{name}{{{key}=\"{}\"}} {value}", escape(&label));
                    }
                    None => {
                        let _ = writeln!(out, "ecrt_{name} {value}");
                    }
                }
            }
        }
        out
    }
}

/// docs/service.md's table of the metrics, in [`METRICS`]' order.
pub fn metrics_markdown() -> String {
    let mut out = String::from("| metric | type | what it is |\n|---|---|---|\n");
    for m in METRICS {
        let label = m.label.map_or(String::new(), |label| format!("{{{label}}}"));
        let _ = writeln!(out, "| `ecrt_{}{label}` | {} | {} |", m.name, m.kind, m.help);
    }
    out
}

/// A label value with Prometheus's escapes.
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metrics_come_from_the_status() {
        let device = |name: &str, state: &str| DeviceStatus {
            name: name.into(),
            backend: "cpu".into(),
            state: state.into(),
            key: None,
            in_flight: 3,
            completed: 7,
            busy_seconds: 1.5,
            key_switches: 1,
            failures: 0,
            error: None,
        };
        let key = KeyStatus { id: "ab".into(), bits: 1024, queued: 4, clients: 1, decryptions: 9, restricted: false };
        let status = ServiceStatus {
            service: "ecrt".into(),
            protocol: 1,
            socket: "/s".into(),
            uptime_seconds: 1.0,
            stopping: false,
            credit: 8,
            limits: LimitsStatus {
                max_clients: 1,
                max_clients_per_uid: 1,
                handshake_seconds: 5.0,
                idle_seconds: None,
                frame_seconds: 10.0,
                write_seconds: 60.0,
            },
            keys: vec![key],
            devices: vec![device("card \"0\"", "up"), device("card1", "failed")],
            clients: vec![],
            counters: Counters { errors: [("lost".to_string(), 2)].into(), retries: 5, ..Default::default() },
        };
        let text = status.prometheus();
        for line in [
            "ecrt_decryptions_total{key=\"ab\"} 9",
            "ecrt_device_up{device=\"card \\\"0\\\"\"} 1",
            "ecrt_device_up{device=\"card1\"} 0",
            "ecrt_item_errors_total{kind=\"lost\"} 2",
            "ecrt_item_errors_total{kind=\"invalid\"} 0",
            "ecrt_retries_total 5",
            "# TYPE ecrt_queue_depth gauge",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing from\n{text}");
        }
        let json = serde_json::to_string(&status).unwrap();
        assert_eq!(serde_json::from_str::<ServiceStatus>(&json).unwrap(), status);
    }

    /// docs/service.md lists every metric, between its markers; `ECRT_UPDATE_DOCS=1` rewrites it.
    #[test]
    fn the_docs_list_every_metric() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/service.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let (begin, end) = ("<!-- metrics: generated, do not edit -->\n", "<!-- /metrics -->");
        let start = text.find(begin).expect("the begin marker") + begin.len();
        let stop = text.find(end).expect("the end marker");
        let expected = metrics_markdown();
        if std::env::var_os("ECRT_UPDATE_DOCS").is_some() {
            std::fs::write(&path, format!("{}{expected}{}", &text[..start], &text[stop..])).unwrap();
            return;
        }
        assert_eq!(
            &text[start..stop],
            expected,
            "docs/service.md's metric list is not METRICS': regenerate it with \
             `ECRT_UPDATE_DOCS=1 cargo test -p ecrt-driver --lib the_docs_list_every_metric`"
        );
    }
}
