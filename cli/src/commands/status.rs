//! `ecrt status`: what a running service is doing.

use crate::commands::printable;
use anyhow::Context;
use ecrt_driver::api::timeout_from_seconds;
use ecrt_driver::backends::service::ServiceClient;
use std::path::PathBuf;
use std::process::ExitCode;

/// Show a running `ecrt serve`: its devices, keys, clients, queue depths, counters and errors.
#[derive(clap::Args)]
pub struct Args {
    /// The service's socket.
    #[arg(long, value_name = "SOCKET")]
    service: PathBuf,
    /// Print the status as one JSON object.
    #[arg(long, conflicts_with = "prometheus")]
    json: bool,
    /// Print the metrics in Prometheus's text format.
    #[arg(long)]
    prometheus: bool,
    /// Seconds to wait for the service to accept and answer (0: as long as it takes).
    #[arg(long, default_value_t = 10.0, value_name = "S")]
    timeout: f64,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let timeout = timeout_from_seconds(args.timeout).map_err(|e| anyhow::anyhow!("--timeout {}: {e}", args.timeout))?;
    let mut client = ServiceClient::connect_within(&args.service, timeout)?;
    if args.prometheus {
        print!("{}", printable(&client.metrics()?, "\n"));
        return Ok(ExitCode::SUCCESS);
    }
    let status = client.status()?;
    if args.json {
        println!("{status}");
    } else {
        print_table(&status).context("the service's status lacks a field")?;
    }
    Ok(ExitCode::SUCCESS)
}

fn print_table(s: &serde_json::Value) -> Option<()> {
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => printable(s, ""),
        serde_json::Value::Null => "-".into(),
        other => printable(&other.to_string(), ""),
    };
    println!(
        "{} at {}: up {:.0} s{}, protocol {}",
        text(&s["service"]),
        text(&s["socket"]),
        s["uptime_seconds"].as_f64()?,
        if s["stopping"].as_bool()? { ", stopping" } else { "" },
        text(&s["protocol"])
    );
    println!("\nkeys");
    println!("  {:<18} {:>6} {:>8} {:>8} {:>12} {:>10}", "id", "bits", "clients", "queued", "decryptions", "access");
    for k in s["keys"].as_array()? {
        println!(
            "  {:<18} {:>6} {:>8} {:>8} {:>12} {:>10}",
            text(&k["id"]),
            text(&k["bits"]),
            text(&k["clients"]),
            text(&k["queued"]),
            text(&k["decryptions"]),
            if k["restricted"].as_bool()? { "allow-list" } else { "open" }
        );
    }
    println!("\ndevices");
    println!(
        "  {:<24} {:<8} {:<9} {:<18} {:>9} {:>11} {:>8} {:>8}",
        "name", "backend", "state", "key", "in flight", "completed", "busy s", "switches"
    );
    for d in s["devices"].as_array()? {
        println!(
            "  {:<24} {:<8} {:<9} {:<18} {:>9} {:>11} {:>8.1} {:>8}",
            text(&d["name"]),
            text(&d["backend"]),
            text(&d["state"]),
            text(&d["key"]),
            text(&d["in_flight"]),
            text(&d["completed"]),
            d["busy_seconds"].as_f64()?,
            text(&d["key_switches"])
        );
        if let Some(error) = d["error"].as_str() {
            println!("    last error: {}", printable(error, ""));
        }
    }
    let clients = s["clients"].as_array()?;
    println!("\nclients: {}", clients.len());
    for c in clients {
        println!(
            "  #{} uid {} pid {} key {}: {} submitted, {} unanswered, {} queued",
            text(&c["id"]),
            text(&c["uid"]),
            text(&c["pid"]),
            text(&c["key"]),
            text(&c["submitted"]),
            text(&c["unanswered"]),
            text(&c["queued"])
        );
    }
    let counters = &s["counters"];
    let by_kind = counters["errors"].as_object()?;
    let total: u64 = by_kind.values().filter_map(|n| n.as_u64()).sum();
    let errors: Vec<String> = by_kind.iter().map(|(kind, n)| format!("{} {}", text(n), printable(kind, ""))).collect();
    println!(
        "\ncounters: {} decryptions, {} item errors{}, {} connections ({} turned away, {} refused, {} timed out), \
         {} refusals, {} retries",
        text(&counters["decryptions"]),
        total,
        if errors.is_empty() { String::new() } else { format!(" ({})", errors.join(", ")) },
        text(&counters["connections"]),
        text(&counters["turned_away"]),
        text(&counters["refused_connections"]),
        text(&counters["timed_out"]),
        text(&counters["refusals"]),
        text(&counters["retries"])
    );
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(printable("a\u{1b}[2Jb\r\n", ""), "a\\u{1b}[2Jb\\r\\n");
        assert_eq!(printable("# HELP x\nx 1\n", "\n"), "# HELP x\nx 1\n");
        assert_eq!(printable("ключ", ""), "ключ");
    }
}
