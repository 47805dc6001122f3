//! The one error type of the crate.

use std::path::PathBuf;

/// Everything that can go wrong while building, loading or driving a model, or estimating resources.
///
/// Build failures carry the tail of the build log so that the message alone usually tells what broke;
/// the full log stays on disk at the path given.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// A file-system operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, with the path involved.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// An external tool (verilator, g++, yosys) could not be started.
    #[error("cannot run `{tool}`: {source} (Debian: apt-get install -y verilator yosys g++)")]
    ToolMissing {
        /// The program name.
        tool: String,
        /// Why it could not be started.
        #[source]
        source: std::io::Error,
    },
    /// The Verilog text could not be understood well enough to find the top module's ports.
    #[error("cannot parse the ports of the Verilog source: {0}")]
    Parse(String),
    /// The model description is inconsistent (duplicate ports, a clock that is not a 1-bit input, ...).
    #[error("invalid model spec: {0}")]
    Spec(String),
    /// An external build step failed; `tail` is the end of its log.
    #[error("{stage} failed (full log: {}):\n{tail}", log.display())]
    Build {
        /// The step that failed ("verilator", "compile shim", "link", "yosys", ...).
        stage: String,
        /// The full log of the build.
        log: PathBuf,
        /// The last lines of the log.
        tail: String,
    },
    /// The built shared object could not be loaded or does not match what was expected.
    #[error("cannot load the model library {}: {message}", path.display())]
    Load {
        /// The shared object.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// No port of that name exists on the top module.
    #[error("unknown port `{name}` (ports: {available})")]
    UnknownPort {
        /// The name asked for.
        name: String,
        /// The names that exist, comma-separated.
        available: String,
    },
    /// An output port cannot be driven.
    #[error("port `{port}` is an output and cannot be set")]
    NotAnInput {
        /// The port name.
        port: String,
    },
    /// A value does not fit into the port.
    #[error("value for port `{port}` needs {bits} bits but the port is {width} bits wide")]
    ValueTooWide {
        /// The port name.
        port: String,
        /// The port width in bits.
        width: u32,
        /// The number of significant bits of the value.
        bits: u64,
    },
    /// The port is wider than the requested Rust type (e.g. `get_u64` on a 130-bit port).
    #[error("port `{port}` is {width} bits wide, too wide for {target}")]
    PortTooWide {
        /// The port name.
        port: String,
        /// The port width in bits.
        width: u32,
        /// The Rust type asked for.
        target: &'static str,
    },
    /// A [`PortId`](crate::PortId) of another design was used.
    #[error("port handle {index} belongs to another design")]
    ForeignPort {
        /// The port index stored in the handle.
        index: usize,
    },
    /// `tick`/`run` on a model that was built without a clock port.
    #[error("the model has no clock port (ModelSpec::clock is None): drive the clock with set() and eval()")]
    NoClock,
    /// VCD output was asked of a model built without tracing.
    #[error("the model was built without tracing: set ModelSpec::trace = true")]
    TraceDisabled,
    /// A tool's report could not be read.
    #[error("cannot read the {tool} report: {message}")]
    Report {
        /// The tool ("yosys").
        tool: &'static str,
        /// What went wrong.
        message: String,
    },
}

/// Shorthand for results of this crate.
pub type Result<T, E = SimError> = std::result::Result<T, E>;

impl SimError {
    /// Wraps an I/O error with the operation and path it came from.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        SimError::Io { context: context.into(), source }
    }
}
