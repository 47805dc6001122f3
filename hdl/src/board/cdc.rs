//! The clock-domain crossings between XDMA (`axi_aclk`) and the accelerator (`accel_clk`): the H2C
//! and C2H streams and the five AXI4-Lite channels, each a valid/ready channel through its own
//! asynchronous FIFO.
//!
//! Why Xilinx's `xpm_fifo_axis` (UG974) for all seven, rather than an AXI4-Lite clock-converter IP
//! or a hand-written FIFO: one macro whose Gray-coded pointers and synchronizers Xilinx verifies
//! and constrains itself (Vivado applies the XPM's own CDC constraints), no extra IP to configure
//! in the flow, and the same valid/ready semantics on every channel. An AXI4-Lite channel through a
//! FIFO stays a correct AXI4-Lite channel (the five channels are independent and each keeps its
//! order; the register block answers one transaction at a time). The cost is small: the AXI4-Lite
//! FIFOs are 16 deep in distributed RAM.
//!
//! When the accelerator runs on `axi_aclk` itself the channel module is a wire.

use super::clocking::AcceleratorClock;

/// Depth of each AXI4-Lite channel's FIFO: the smallest `xpm_fifo_axis` allows.
pub const LITE_FIFO_DEPTH: usize = 16;

/// Depth of each stream FIFO for frames of at most `frame_beats` beats: room for two frames (one
/// arriving while the other drains), a power of two of at least 16 as `xpm_fifo_axis` requires.
pub fn stream_fifo_depth(frame_beats: usize) -> usize {
    (2 * frame_beats).next_power_of_two().max(LITE_FIFO_DEPTH)
}

/// The Verilog module `ecrt_cdc_channel`: one channel from clock `s_clk` to `m_clk`.
pub fn channel_module(clock: &AcceleratorClock) -> String {
    let ports = "    input  wire             s_clk,
    input  wire             s_resetn,   // s_clk domain, active low: empties the channel
    input  wire [WIDTH-1:0] s_data,
    input  wire             s_last,
    input  wire             s_valid,
    output wire             s_ready,
    input  wire             m_clk,
    output wire [WIDTH-1:0] m_data,
    output wire             m_last,
    output wire             m_valid,
    input  wire             m_ready
);
";
    if clock.is_shared() {
        return format!(
            "// One valid/ready channel; both sides run on axi_aclk, so it is a wire.
module ecrt_cdc_channel #(
    parameter WIDTH = 8
) (
{ports}    assign m_data = s_data;
    assign m_last = s_last;
    assign m_valid = s_valid;
    assign s_ready = m_ready;
    wire unused_ok = &{{1'b0, s_clk, s_resetn, m_clk, 1'b0}};
endmodule
"
        );
    }
    format!(
        "// One valid/ready channel from s_clk to an unrelated m_clk, through an asynchronous FIFO.
module ecrt_cdc_channel #(
    parameter WIDTH = 8,                // payload bits: a multiple of 8 (xpm_fifo_axis TDATA)
    parameter DEPTH = 16,               // entries: a power of two, at least 16
    parameter MEMORY = \"distributed\"    // \"distributed\", \"block\" or \"auto\"
) (
{ports}    wire [WIDTH/8-1:0] unused_keep, unused_strb;
    wire unused_id, unused_dest, unused_user, unused_prog_full, unused_prog_empty, unused_almost_full;
    wire unused_almost_empty, unused_sbiterr, unused_dbiterr, unused_wr_count, unused_rd_count;
    xpm_fifo_axis #(
        .CLOCKING_MODE(\"independent_clock\"),
        .CDC_SYNC_STAGES(3),
        .FIFO_DEPTH(DEPTH),
        .FIFO_MEMORY_TYPE(MEMORY),
        .PACKET_FIFO(\"false\"),
        .RELATED_CLOCKS(0),
        .TDATA_WIDTH(WIDTH),
        .TDEST_WIDTH(1),
        .TID_WIDTH(1),
        .TUSER_WIDTH(1),
        .RD_DATA_COUNT_WIDTH(1),
        .WR_DATA_COUNT_WIDTH(1),
        .USE_ADV_FEATURES(\"0000\")
    ) fifo (
        .s_aclk(s_clk),
        .s_aresetn(s_resetn),
        .s_axis_tdata(s_data),
        .s_axis_tkeep({{(WIDTH/8){{1'b1}}}}),
        .s_axis_tstrb({{(WIDTH/8){{1'b1}}}}),
        .s_axis_tid(1'b0),
        .s_axis_tdest(1'b0),
        .s_axis_tuser(1'b0),
        .s_axis_tlast(s_last),
        .s_axis_tvalid(s_valid),
        .s_axis_tready(s_ready),
        .m_aclk(m_clk),
        .m_axis_tdata(m_data),
        .m_axis_tkeep(unused_keep),
        .m_axis_tstrb(unused_strb),
        .m_axis_tid(unused_id),
        .m_axis_tdest(unused_dest),
        .m_axis_tuser(unused_user),
        .m_axis_tlast(m_last),
        .m_axis_tvalid(m_valid),
        .m_axis_tready(m_ready),
        .prog_full_axis(unused_prog_full),
        .prog_empty_axis(unused_prog_empty),
        .almost_full_axis(unused_almost_full),
        .almost_empty_axis(unused_almost_empty),
        .wr_data_count_axis(unused_wr_count),
        .rd_data_count_axis(unused_rd_count),
        .injectsbiterr_axis(1'b0),
        .injectdbiterr_axis(1'b0),
        .sbiterr_axis(unused_sbiterr),
        .dbiterr_axis(unused_dbiterr)
    );
endmodule
"
    )
}

/// Which way a channel goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From XDMA (`axi_aclk`) to the accelerator (`accel_clk`).
    ToAccelerator,
    /// From the accelerator to XDMA.
    FromAccelerator,
}

/// One field of a channel's payload: the expression on the sending side, the wire it drives on the
/// receiving side, its bits.
pub struct Field {
    pub source: String,
    pub sink: String,
    pub bits: usize,
}

/// One valid/ready channel of the board top.
pub struct Channel {
    /// Instance prefix: `aw` gives `aw_cdc`.
    pub name: &'static str,
    /// What it carries, for the comment.
    pub what: &'static str,
    pub direction: Direction,
    /// The payload, least significant first.
    pub fields: Vec<Field>,
    /// (source, sink) of TLAST, if the channel has one.
    pub last: Option<(String, String)>,
    /// (source, sink) of VALID.
    pub valid: (String, String),
    /// (source, sink) of READY: the receiving side's ready, and the wire it drives back.
    pub ready: (String, String),
    pub depth: usize,
    /// `xpm_fifo_axis` FIFO_MEMORY_TYPE.
    pub memory: &'static str,
}

impl Channel {
    /// Payload bits, before padding.
    pub fn bits(&self) -> usize {
        self.fields.iter().map(|f| f.bits).sum()
    }

    /// The channel's instance of `ecrt_cdc_channel`, the payload padded to whole bytes.
    pub fn instance(&self, clock: &AcceleratorClock) -> String {
        let (name, bits) = (self.name, self.bits());
        let width = bits.div_ceil(8) * 8;
        let (s_clk, s_resetn, m_clk, arrow) = match self.direction {
            Direction::ToAccelerator => ("axi_aclk", "axi_aresetn", "accel_clk", "XDMA → accelerator"),
            Direction::FromAccelerator => ("accel_clk", "accel_aresetn", "axi_aclk", "accelerator → XDMA"),
        };
        let mut packed: Vec<String> = self.fields.iter().rev().map(|f| f.source.clone()).collect();
        if width > bits {
            packed.insert(0, format!("{}'d0", width - bits));
        }
        let mut v = format!(
            "    // {}, {arrow}.\n    wire [{}:0] {name}_s_data = {{{}}};\n    wire [{}:0] {name}_m_data;\n",
            self.what,
            width - 1,
            packed.join(", "),
            width - 1
        );
        let (s_last, m_last) = match &self.last {
            Some((source, sink)) => (source.clone(), sink.clone()),
            None => {
                v += &format!("    wire unused_{name}_m_last;\n");
                ("1'b0".to_string(), format!("unused_{name}_m_last"))
            }
        };
        let parameters = if clock.is_shared() {
            format!("#(.WIDTH({width}))")
        } else {
            format!("#(.WIDTH({width}), .DEPTH({}), .MEMORY(\"{}\"))", self.depth, self.memory)
        };
        v += &format!(
            "    ecrt_cdc_channel {parameters} {name}_cdc (
        .s_clk({s_clk}),
        .s_resetn({s_resetn}),
        .s_data({name}_s_data),
        .s_last({s_last}),
        .s_valid({}),
        .s_ready({}),
        .m_clk({m_clk}),
        .m_data({name}_m_data),
        .m_last({m_last}),
        .m_valid({}),
        .m_ready({})
    );
",
            self.valid.0, self.ready.1, self.valid.1, self.ready.0
        );
        let mut low = 0;
        for f in &self.fields {
            v += &format!("    assign {} = {name}_m_data[{}:{low}];\n", f.sink, low + f.bits - 1);
            low += f.bits;
        }
        if width > bits {
            v += &format!(
                "    wire [{}:0] unused_{name}_pad = {name}_m_data[{}:{bits}];\n",
                width - bits - 1,
                width - 1
            );
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::clocking::accelerator_clock;

    #[test]
    fn stream_fifos_hold_two_frames() {
        assert_eq!(stream_fifo_depth(1), 16);
        assert_eq!(stream_fifo_depth(31), 64);
        assert_eq!(stream_fifo_depth(122), 256);
    }

    #[test]
    fn a_channel_packs_its_fields_in_order_and_pads_to_bytes() {
        let field = |source: &str, sink: &str, bits| Field { source: source.into(), sink: sink.into(), bits };
        let w = Channel {
            name: "w",
            what: "AXI4-Lite write data",
            direction: Direction::ToAccelerator,
            fields: vec![field("x_wdata", "a_wdata", 32), field("x_wstrb", "a_wstrb", 4)],
            last: None,
            valid: ("x_wvalid".into(), "a_wvalid".into()),
            ready: ("a_wready".into(), "x_wready".into()),
            depth: 16,
            memory: "distributed",
        };
        let v = w.instance(&accelerator_clock(250.0, 100.0).unwrap());
        for needle in [
            "wire [39:0] w_s_data = {4'd0, x_wstrb, x_wdata};",
            ".DEPTH(16), .MEMORY(\"distributed\")",
            ".s_clk(axi_aclk)",
            ".s_valid(x_wvalid)",
            ".s_ready(x_wready)",
            ".m_valid(a_wvalid)",
            ".m_ready(a_wready)",
            "assign a_wdata = w_m_data[31:0];",
            "assign a_wstrb = w_m_data[35:32];",
            "wire [3:0] unused_w_pad = w_m_data[39:36];",
        ] {
            assert!(v.contains(needle), "{needle} in\n{v}");
        }
        let shared = w.instance(&accelerator_clock(250.0, 250.0).unwrap());
        assert!(shared.contains("ecrt_cdc_channel #(.WIDTH(40)) w_cdc"), "{shared}");
    }
}
