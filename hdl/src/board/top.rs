//! The board top `ecrt_board_top`: the PCIe reference clock buffer, the XDMA IP `xdma_0` (AXI4-Stream
//! mode, one H2C and one C2H channel, AXI4-Lite master), the accelerator clock
//! ([`super::clocking`]), the crossings ([`super::cdc`]) and the accelerator, wired by the port
//! list of its manifest. Four LEDs show the link, the accelerator clock and both clocks' heartbeat.
//!
//! The accelerator has no reset port: its registers start from their initial values when the FPGA
//! is configured. An XDMA reset (`axi_aresetn`, e.g. after a PCIe hot reset) empties the crossings
//! but not the accelerator, so a frame cut by it leaves the accelerator mid-frame; reload the
//! bitstream after one.

use super::cdc::{self, Channel, Direction, Field};
use super::clocking::{self, AcceleratorClock};
use super::{Board, BoardError, TOP_MODULE};
use crate::emit::{Manifest, PortInfo};
use crate::interface::{ADDRESS_BITS, LANE_BITS};
use std::collections::BTreeSet;

/// Bits of XDMA's AXI4-Lite master addresses (PG195).
pub const XDMA_AXIL_ADDRESS_BITS: usize = 32;

/// The ports the accelerator of `manifest` must have: the AXI4-Lite slave, the two streams of
/// `manifest.lanes` 32-bit lanes, and the clock.
pub fn expected_accelerator_ports(lanes: usize) -> Vec<PortInfo> {
    let port = |name: &str, direction: &str, width| PortInfo { name: name.into(), direction: direction.into(), width };
    let mut ports = vec![
        port("clock", "input", 1),
        port("s_axil_awaddr", "input", ADDRESS_BITS),
        port("s_axil_awvalid", "input", 1),
        port("s_axil_awready", "output", 1),
        port("s_axil_wdata", "input", 32),
        port("s_axil_wstrb", "input", 4),
        port("s_axil_wvalid", "input", 1),
        port("s_axil_wready", "output", 1),
        port("s_axil_bresp", "output", 2),
        port("s_axil_bvalid", "output", 1),
        port("s_axil_bready", "input", 1),
        port("s_axil_araddr", "input", ADDRESS_BITS),
        port("s_axil_arvalid", "input", 1),
        port("s_axil_arready", "output", 1),
        port("s_axil_rdata", "output", 32),
        port("s_axil_rresp", "output", 2),
        port("s_axil_rvalid", "output", 1),
        port("s_axil_rready", "input", 1),
    ];
    for (prefix, into, out) in [("s_axis", "input", "output"), ("m_axis", "output", "input")] {
        ports.extend((0..lanes).map(|i| port(&format!("{prefix}_tdata${i}"), into, LANE_BITS)));
        ports.push(port(&format!("{prefix}_tvalid"), into, 1));
        ports.push(port(&format!("{prefix}_tready"), out, 1));
        ports.push(port(&format!("{prefix}_tlast"), into, 1));
    }
    ports
}

/// Checks that `manifest` lists exactly the ports the board top wires.
pub fn check_accelerator_ports(manifest: &Manifest) -> Result<(), BoardError> {
    if manifest.lanes * LANE_BITS != manifest.stream_bits || manifest.lanes == 0 {
        return Err(BoardError::Manifest(format!(
            "{} lanes of {LANE_BITS} bits do not make {}-bit streams",
            manifest.lanes, manifest.stream_bits
        )));
    }
    let key = |p: &PortInfo| (p.name.clone(), p.direction.clone(), p.width);
    let expected: BTreeSet<_> = expected_accelerator_ports(manifest.lanes).iter().map(key).collect();
    let actual: BTreeSet<_> = manifest.ports.iter().map(key).collect();
    let show = |set: Vec<&(String, String, usize)>| {
        set.iter().map(|(n, d, w)| format!("{d} {n} [{w}]")).collect::<Vec<_>>().join(", ")
    };
    let missing: Vec<_> = expected.difference(&actual).collect();
    let unexpected: Vec<_> = actual.difference(&expected).collect();
    if !missing.is_empty() || !unexpected.is_empty() {
        return Err(BoardError::Manifest(format!(
            "ports of `{}` missing: [{}]; unexpected: [{}]",
            manifest.top,
            show(missing),
            show(unexpected)
        )));
    }
    Ok(())
}

/// The board-side signal an accelerator port connects to.
fn accelerator_net(port: &str) -> String {
    let lane = |prefix: &str, rest: &str| -> Option<String> {
        let i: usize = rest.parse().ok()?;
        Some(format!("{prefix}_tdata[{}:{}]", LANE_BITS * i + LANE_BITS - 1, LANE_BITS * i))
    };
    if port == "clock" {
        return "accel_clk".into();
    }
    if let Some(field) = port.strip_prefix("s_axil_") {
        return format!("acc_axil_{field}");
    }
    if let Some(i) = port.strip_prefix("s_axis_tdata$") {
        return lane("h2c_acc", i).expect("checked port");
    }
    if let Some(i) = port.strip_prefix("m_axis_tdata$") {
        return lane("c2h_acc", i).expect("checked port");
    }
    if let Some(field) = port.strip_prefix("s_axis_") {
        return format!("h2c_acc_{field}");
    }
    let field = port.strip_prefix("m_axis_").expect("checked port");
    format!("c2h_acc_{field}")
}

/// `wire [w-1:0] name;` or `wire name;`.
fn wire(name: &str, width: usize) -> String {
    if width == 1 {
        format!("    wire {name};\n")
    } else {
        format!("    wire [{}:0] {name};\n", width - 1)
    }
}

/// The channels between XDMA and the accelerator.
fn channels(stream_bits: usize, fifo_depth: usize) -> Vec<Channel> {
    let field = |source: &str, sink: &str, bits| Field { source: source.into(), sink: sink.into(), bits };
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    let address = format!("[{}:0]", ADDRESS_BITS - 1);
    let lite = |name, what, direction, fields, valid, ready| Channel {
        name,
        what,
        direction,
        fields,
        last: None,
        valid,
        ready,
        depth: cdc::LITE_FIFO_DEPTH,
        memory: "distributed",
    };
    use Direction::{FromAccelerator, ToAccelerator};
    vec![
        lite(
            "aw",
            "AXI4-Lite write address",
            ToAccelerator,
            vec![field(&format!("xdma_axil_awaddr{address}"), "acc_axil_awaddr", ADDRESS_BITS)],
            pair("xdma_axil_awvalid", "acc_axil_awvalid"),
            pair("acc_axil_awready", "xdma_axil_awready"),
        ),
        lite(
            "w",
            "AXI4-Lite write data",
            ToAccelerator,
            vec![field("xdma_axil_wdata", "acc_axil_wdata", 32), field("xdma_axil_wstrb", "acc_axil_wstrb", 4)],
            pair("xdma_axil_wvalid", "acc_axil_wvalid"),
            pair("acc_axil_wready", "xdma_axil_wready"),
        ),
        lite(
            "b",
            "AXI4-Lite write response",
            FromAccelerator,
            vec![field("acc_axil_bresp", "xdma_axil_bresp", 2)],
            pair("acc_axil_bvalid", "xdma_axil_bvalid"),
            pair("xdma_axil_bready", "acc_axil_bready"),
        ),
        lite(
            "ar",
            "AXI4-Lite read address",
            ToAccelerator,
            vec![field(&format!("xdma_axil_araddr{address}"), "acc_axil_araddr", ADDRESS_BITS)],
            pair("xdma_axil_arvalid", "acc_axil_arvalid"),
            pair("acc_axil_arready", "xdma_axil_arready"),
        ),
        lite(
            "r",
            "AXI4-Lite read data",
            FromAccelerator,
            vec![field("acc_axil_rdata", "xdma_axil_rdata", 32), field("acc_axil_rresp", "xdma_axil_rresp", 2)],
            pair("acc_axil_rvalid", "xdma_axil_rvalid"),
            pair("xdma_axil_rready", "acc_axil_rready"),
        ),
        Channel {
            name: "h2c",
            what: "H2C stream (requests)",
            direction: ToAccelerator,
            fields: vec![field("h2c_xdma_tdata", "h2c_acc_tdata", stream_bits)],
            last: Some(pair("h2c_xdma_tlast", "h2c_acc_tlast")),
            valid: pair("h2c_xdma_tvalid", "h2c_acc_tvalid"),
            ready: pair("h2c_acc_tready", "h2c_xdma_tready"),
            depth: fifo_depth,
            memory: "auto",
        },
        Channel {
            name: "c2h",
            what: "C2H stream (results)",
            direction: FromAccelerator,
            fields: vec![field("c2h_acc_tdata", "c2h_xdma_tdata", stream_bits)],
            last: Some(pair("c2h_acc_tlast", "c2h_xdma_tlast")),
            valid: pair("c2h_acc_tvalid", "c2h_xdma_tvalid"),
            ready: pair("c2h_xdma_tready", "c2h_acc_tready"),
            depth: fifo_depth,
            memory: "auto",
        },
    ]
}

/// The Verilog of the board top for the accelerator of `manifest` on `board` (one file: the
/// top, then `ecrt_cdc_channel` and `ecrt_accel_clocking`); stream FIFOs `fifo_depth` deep.
pub fn board_top(
    manifest: &Manifest,
    board: Board,
    clock: &AcceleratorClock,
    fifo_depth: usize,
) -> Result<String, BoardError> {
    check_accelerator_ports(manifest)?;
    let facts = board.facts();
    let (bits, lanes) = (manifest.stream_bits, facts.link_lanes);
    let keep = bits / 8;
    let mut v = format!(
        "// Generated by ecrt-hdl {version} (`ecrt rtl --board {board}`): do not edit.
// The {upper} board top: PCIe Gen{generation} x{lanes} through the XDMA IP (xdma_0, AXI4-Stream, {bits}-bit at
// {user:.0} MHz) to the accelerator `{acc}` of {file} (sha256 {sha}).
// Configuration: {config}
// Accelerator clock: {clk:.3} MHz{how}.
// The accelerator has no reset port: it starts from its initial values when the FPGA is configured; an
// XDMA reset empties the crossings but not the accelerator (reload the bitstream after a PCIe reset).
// xdma_0 is generated by vivado/build.tcl; the Xilinx primitives and XPM macros come with Vivado.

module {TOP_MODULE} (
    input  wire       sys_clk_p,   // PCIe reference clock, {refclk:.0} MHz (MGTREFCLK: {board}.xdc)
    input  wire       sys_clk_n,
    input  wire       sys_rst_n,   // PCIe PERST#, active low
    output wire [{l}:0] pci_exp_txp,
    output wire [{l}:0] pci_exp_txn,
    input  wire [{l}:0] pci_exp_rxp,
    input  wire [{l}:0] pci_exp_rxn,
    output wire [3:0] led          // 0: link up, 1: accelerator clock locked, 2: axi_aclk and 3: accel_clk heartbeat
);
    // PCIe reference clock: a GT reference-clock buffer (LOC in {board}.xdc).
    wire sys_clk;
    wire unused_sys_clk_div2;
    IBUFDS_GTE2 refclk_ibuf (.O(sys_clk), .ODIV2(unused_sys_clk_div2), .CEB(1'b0), .I(sys_clk_p), .IB(sys_clk_n));

",
        version = env!("CARGO_PKG_VERSION"),
        upper = facts.name.to_uppercase(),
        generation = facts.pcie_generation,
        user = facts.user_clock_mhz,
        acc = manifest.top,
        file = manifest.verilog,
        sha = manifest.sha256,
        config = serde_json::to_string(&manifest.config).expect("serializable"),
        clk = clock.mhz(),
        how = if clock.is_shared() { ", XDMA's axi_aclk itself" } else { ", an MMCM from XDMA's axi_aclk" },
        refclk = facts.refclk_mhz,
        l = lanes - 1,
    );

    // XDMA.
    v += "    // XDMA: the user clock and reset, the AXI4-Lite master, and one H2C and one C2H stream.\n";
    v += "    wire axi_aclk, axi_aresetn, user_lnk_up;\n";
    v += "    wire unused_usr_irq_ack, unused_msi_enable;\n";
    v += &wire("unused_msi_vector_width", 3);
    v += &wire("xdma_axil_awaddr", XDMA_AXIL_ADDRESS_BITS);
    v += &wire("xdma_axil_araddr", XDMA_AXIL_ADDRESS_BITS);
    v += &wire("unused_axil_awprot", 3);
    v += &wire("unused_axil_arprot", 3);
    v += "    wire xdma_axil_awvalid, xdma_axil_awready, xdma_axil_wvalid, xdma_axil_wready;\n";
    v += "    wire xdma_axil_bvalid, xdma_axil_bready, xdma_axil_arvalid, xdma_axil_arready;\n";
    v += "    wire xdma_axil_rvalid, xdma_axil_rready;\n";
    v += &wire("xdma_axil_wdata", 32);
    v += &wire("xdma_axil_wstrb", 4);
    v += &wire("xdma_axil_bresp", 2);
    v += &wire("xdma_axil_rdata", 32);
    v += &wire("xdma_axil_rresp", 2);
    v += &wire("h2c_xdma_tdata", bits);
    v += &wire("unused_h2c_xdma_tkeep", keep);
    v += "    wire h2c_xdma_tlast, h2c_xdma_tvalid, h2c_xdma_tready;\n";
    v += &wire("c2h_xdma_tdata", bits);
    v += "    wire c2h_xdma_tlast, c2h_xdma_tvalid, c2h_xdma_tready;\n";
    v += &format!(
        "    xdma_0 xdma (
        .sys_clk(sys_clk),
        .sys_rst_n(sys_rst_n),
        .user_lnk_up(user_lnk_up),
        .pci_exp_txp(pci_exp_txp),
        .pci_exp_txn(pci_exp_txn),
        .pci_exp_rxp(pci_exp_rxp),
        .pci_exp_rxn(pci_exp_rxn),
        .axi_aclk(axi_aclk),
        .axi_aresetn(axi_aresetn),
        .usr_irq_req(1'b0),
        .usr_irq_ack(unused_usr_irq_ack),
        .msi_enable(unused_msi_enable),
        .msi_vector_width(unused_msi_vector_width),
        .m_axil_awaddr(xdma_axil_awaddr),
        .m_axil_awprot(unused_axil_awprot),
        .m_axil_awvalid(xdma_axil_awvalid),
        .m_axil_awready(xdma_axil_awready),
        .m_axil_wdata(xdma_axil_wdata),
        .m_axil_wstrb(xdma_axil_wstrb),
        .m_axil_wvalid(xdma_axil_wvalid),
        .m_axil_wready(xdma_axil_wready),
        .m_axil_bvalid(xdma_axil_bvalid),
        .m_axil_bresp(xdma_axil_bresp),
        .m_axil_bready(xdma_axil_bready),
        .m_axil_araddr(xdma_axil_araddr),
        .m_axil_arprot(unused_axil_arprot),
        .m_axil_arvalid(xdma_axil_arvalid),
        .m_axil_arready(xdma_axil_arready),
        .m_axil_rdata(xdma_axil_rdata),
        .m_axil_rresp(xdma_axil_rresp),
        .m_axil_rvalid(xdma_axil_rvalid),
        .m_axil_rready(xdma_axil_rready),
        .s_axis_c2h_tdata_0(c2h_xdma_tdata),
        .s_axis_c2h_tlast_0(c2h_xdma_tlast),
        .s_axis_c2h_tvalid_0(c2h_xdma_tvalid),
        .s_axis_c2h_tready_0(c2h_xdma_tready),
        .s_axis_c2h_tkeep_0({{{keep}{{1'b1}}}}),  // whole beats: no TKEEP on the accelerator
        .m_axis_h2c_tdata_0(h2c_xdma_tdata),
        .m_axis_h2c_tlast_0(h2c_xdma_tlast),
        .m_axis_h2c_tvalid_0(h2c_xdma_tvalid),
        .m_axis_h2c_tready_0(h2c_xdma_tready),
        .m_axis_h2c_tkeep_0(unused_h2c_xdma_tkeep)
    );
    // The register block decodes {ADDRESS_BITS} address bits; the 4 KiB BAR's offsets fit them.
    wire [{hi}:0] unused_axil_awaddr_high = xdma_axil_awaddr[{top}:{ADDRESS_BITS}];
    wire [{hi}:0] unused_axil_araddr_high = xdma_axil_araddr[{top}:{ADDRESS_BITS}];

",
        hi = XDMA_AXIL_ADDRESS_BITS - ADDRESS_BITS - 1,
        top = XDMA_AXIL_ADDRESS_BITS - 1,
    );

    // Clocking.
    v += "    // The accelerator's clock and the reset of the crossings' accelerator side.
    wire accel_clk, accel_locked, accel_aresetn;
    ecrt_accel_clocking accel_clocking (
        .axi_aclk(axi_aclk),
        .axi_aresetn(axi_aresetn),
        .accel_clk(accel_clk),
        .accel_locked(accel_locked),
        .accel_aresetn(accel_aresetn)
    );

";

    // The accelerator's side of the channels, from its ports.
    v += "    // The accelerator's side of the channels.\n";
    for p in manifest.ports.iter().filter(|p| p.name.starts_with("s_axil_")) {
        v += &wire(&accelerator_net(&p.name), p.width);
    }
    v += &wire("h2c_acc_tdata", bits);
    v += "    wire h2c_acc_tlast, h2c_acc_tvalid, h2c_acc_tready;\n";
    v += &wire("c2h_acc_tdata", bits);
    v += "    wire c2h_acc_tlast, c2h_acc_tvalid, c2h_acc_tready;\n\n";

    for channel in channels(bits, fifo_depth) {
        v += &channel.instance(clock);
        v += "\n";
    }

    // The accelerator.
    let connections: Vec<String> =
        manifest.ports.iter().map(|p| format!("        .{}({})", p.name, accelerator_net(&p.name))).collect();
    v += &format!(
        "    // The accelerator ({} lanes of {LANE_BITS} bits: lane i is TDATA[32i+31:32i]).\n    {} accelerator (\n{}\n    );\n\n",
        manifest.lanes,
        manifest.top,
        connections.join(",\n")
    );

    // LEDs.
    v += "    // LEDs: link up, accelerator clock locked, and a heartbeat of each clock (~0.5 s at 250 MHz).
    reg [26:0] axi_heartbeat = 27'd0;
    always @(posedge axi_aclk) axi_heartbeat <= axi_heartbeat + 27'd1;
    reg [26:0] accel_heartbeat = 27'd0;
    always @(posedge accel_clk) accel_heartbeat <= accel_heartbeat + 27'd1;
    assign led = {accel_heartbeat[26], axi_heartbeat[26], accel_locked, user_lnk_up};
endmodule

";
    v += &cdc::channel_module(clock);
    v += "\n";
    v += &clocking::clocking_module(clock);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(lanes: usize) -> Manifest {
        let config = crate::config::AcceleratorConfig { stream_bits: lanes * 32, ..Default::default() };
        Manifest {
            generator: "test".into(),
            config,
            top: "top".into(),
            verilog: "ecrt_accelerator.v".into(),
            sha256: "0".into(),
            digits: 0,
            exponent_bits: 0,
            windows: 0,
            multiplications_per_exponentiation: 0,
            modules: vec![],
            ports: expected_accelerator_ports(lanes),
            cores: 1,
            stream_bits: lanes * 32,
            lanes,
            request_words: 0,
            result_words: 0,
            request_beats: 0,
            result_beats: 0,
            interface_version: format!("{}.{}", crate::interface::VERSION_MAJOR, crate::interface::VERSION_MINOR),
            registers: Default::default(),
        }
    }

    #[test]
    fn accelerator_ports_map_to_board_nets() {
        assert_eq!(accelerator_net("clock"), "accel_clk");
        assert_eq!(accelerator_net("s_axil_rdata"), "acc_axil_rdata");
        assert_eq!(accelerator_net("s_axis_tdata$2"), "h2c_acc_tdata[95:64]");
        assert_eq!(accelerator_net("m_axis_tdata$0"), "c2h_acc_tdata[31:0]");
        assert_eq!(accelerator_net("m_axis_tready"), "c2h_acc_tready");
        assert_eq!(accelerator_net("s_axis_tlast"), "h2c_acc_tlast");
    }

    #[test]
    fn a_manifest_whose_ports_differ_is_refused() {
        let good = manifest(8);
        assert_eq!(check_accelerator_ports(&good), Ok(()));
        let mut missing_lane = good.clone();
        missing_lane.ports.retain(|p| p.name != "m_axis_tdata$7");
        let err = check_accelerator_ports(&missing_lane).unwrap_err().to_string();
        assert!(err.contains("missing: [output m_axis_tdata$7 [32]]"), "{err}");
        let mut wider = good.clone();
        wider.ports.iter_mut().find(|p| p.name == "s_axil_awaddr").unwrap().width = 16;
        let err = check_accelerator_ports(&wider).unwrap_err().to_string();
        assert!(err.contains("unexpected: [input s_axil_awaddr [16]]"), "{err}");
        let mut reset = good.clone();
        reset.ports.push(PortInfo { name: "reset".into(), direction: "input".into(), width: 1 });
        assert!(check_accelerator_ports(&reset).is_err());
        let wrong_lanes = Manifest { lanes: 4, ..good };
        assert!(check_accelerator_ports(&wrong_lanes).is_err());
    }
}
