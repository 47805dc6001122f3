//! `ecrt status`: what a running service is doing.

use crate::commands::printable;
use ecrt_driver::api::timeout_from_seconds;
use ecrt_driver::backends::service::{ServiceClient, ServiceStatus};
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
        println!("{}", serde_json::to_string(&status)?);
    } else {
        print_table(&status);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_table(s: &ServiceStatus) {
    // Whatever the service sends is printed with its control characters escaped.
    let text = |v: &str| printable(v, "");
    let or_dash = |v: &Option<String>| v.as_deref().map_or("-".to_string(), text);
    println!(
        "{} at {}: up {:.0} s{}, protocol {}",
        text(&s.service),
        text(&s.socket),
        s.uptime_seconds,
        if s.stopping { ", stopping" } else { "" },
        s.protocol
    );
    println!("\nkeys");
    println!("  {:<18} {:>6} {:>8} {:>8} {:>12} {:>10}", "id", "bits", "clients", "queued", "decryptions", "access");
    for k in &s.keys {
        println!(
            "  {:<18} {:>6} {:>8} {:>8} {:>12} {:>10}",
            text(&k.id),
            k.bits,
            k.clients,
            k.queued,
            k.decryptions,
            if k.restricted { "allow-list" } else { "open" }
        );
    }
    println!("\ndevices");
    println!(
        "  {:<24} {:<8} {:<9} {:<18} {:>9} {:>11} {:>8} {:>8}",
        "name", "backend", "state", "key", "in flight", "completed", "busy s", "switches"
    );
    for d in &s.devices {
        println!(
            "  {:<24} {:<8} {:<9} {:<18} {:>9} {:>11} {:>8.1} {:>8}",
            text(&d.name),
            text(&d.backend),
            text(&d.state),
            or_dash(&d.key),
            d.in_flight,
            d.completed,
            d.busy_seconds,
            d.key_switches
        );
        if let Some(error) = &d.error {
            println!("    last error: {}", text(error));
        }
    }
    println!("\nclients: {}", s.clients.len());
    for c in &s.clients {
        println!(
            "  #{} uid {} pid {} key {}: {} submitted, {} unanswered, {} queued",
            c.id,
            c.uid,
            c.pid,
            text(&c.key),
            c.submitted,
            c.unanswered,
            c.queued
        );
    }
    let counters = &s.counters;
    let total: u64 = counters.errors.values().sum();
    let errors: Vec<String> = counters.errors.iter().map(|(kind, n)| format!("{n} {}", text(kind))).collect();
    println!(
        "\ncounters: {} decryptions, {} item errors{}, {} connections ({} turned away, {} refused, {} timed out), \
         {} refusals, {} retries",
        counters.decryptions,
        total,
        if errors.is_empty() { String::new() } else { format!(" ({})", errors.join(", ")) },
        counters.connections,
        counters.turned_away,
        counters.refused_connections,
        counters.timed_out,
        counters.refusals,
        counters.retries
    );
}
