// Black-box stand-ins for the Xilinx IP, primitives and XPM macros that the ecrt board top
// (ecrt_board_top.v) instantiates, so that Verilator and Yosys can elaborate and lint it without
// Vivado (hdl/tests/board.rs). Never given to Vivado, which has the real ones. Their ports and
// parameters are the documented ones the board top uses:
// - xdma_0: the DMA/Bridge Subsystem for PCI Express (PG195, "Port Descriptions") as build.tcl
//   configures it on a 7-series part: AXI4-Stream, one H2C and one C2H channel, the AXI4-Lite
//   master, one user interrupt, no configuration-management port (compare the IP's instantiation
//   template xdma_0.veo). The stream width and the lanes come from ECRT_XDMA_DATA_BITS and
//   ECRT_XDMA_LANES, which the test sets from the manifest and the board;
// - IBUFDS_GTE2, MMCME2_BASE, BUFG: the 7 Series Libraries Guide (UG953);
// - xpm_fifo_axis, xpm_cdc_async_rst: the Xilinx Parameterized Macros (UG974).
// Nothing drives their outputs: that is what a black box is.
/* verilator lint_off UNDRIVEN */
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
`ifndef ECRT_XDMA_DATA_BITS
`define ECRT_XDMA_DATA_BITS 256
`endif
`ifndef ECRT_XDMA_LANES
`define ECRT_XDMA_LANES 8
`endif

(* blackbox *)
module xdma_0 (
    input  wire                              sys_clk,
    input  wire                              sys_rst_n,
    output wire                              user_lnk_up,
    output wire [`ECRT_XDMA_LANES-1:0]       pci_exp_txp,
    output wire [`ECRT_XDMA_LANES-1:0]       pci_exp_txn,
    input  wire [`ECRT_XDMA_LANES-1:0]       pci_exp_rxp,
    input  wire [`ECRT_XDMA_LANES-1:0]       pci_exp_rxn,
    output wire                              axi_aclk,
    output wire                              axi_aresetn,
    input  wire [0:0]                        usr_irq_req,
    output wire [0:0]                        usr_irq_ack,
    output wire                              msi_enable,
    output wire [2:0]                        msi_vector_width,
    output wire [31:0]                       m_axil_awaddr,
    output wire [2:0]                        m_axil_awprot,
    output wire                              m_axil_awvalid,
    input  wire                              m_axil_awready,
    output wire [31:0]                       m_axil_wdata,
    output wire [3:0]                        m_axil_wstrb,
    output wire                              m_axil_wvalid,
    input  wire                              m_axil_wready,
    input  wire                              m_axil_bvalid,
    input  wire [1:0]                        m_axil_bresp,
    output wire                              m_axil_bready,
    output wire [31:0]                       m_axil_araddr,
    output wire [2:0]                        m_axil_arprot,
    output wire                              m_axil_arvalid,
    input  wire                              m_axil_arready,
    input  wire [31:0]                       m_axil_rdata,
    input  wire [1:0]                        m_axil_rresp,
    input  wire                              m_axil_rvalid,
    output wire                              m_axil_rready,
    input  wire [`ECRT_XDMA_DATA_BITS-1:0]   s_axis_c2h_tdata_0,
    input  wire                              s_axis_c2h_tlast_0,
    input  wire                              s_axis_c2h_tvalid_0,
    output wire                              s_axis_c2h_tready_0,
    input  wire [`ECRT_XDMA_DATA_BITS/8-1:0] s_axis_c2h_tkeep_0,
    output wire [`ECRT_XDMA_DATA_BITS-1:0]   m_axis_h2c_tdata_0,
    output wire                              m_axis_h2c_tlast_0,
    output wire                              m_axis_h2c_tvalid_0,
    input  wire                              m_axis_h2c_tready_0,
    output wire [`ECRT_XDMA_DATA_BITS/8-1:0] m_axis_h2c_tkeep_0
);
endmodule

(* blackbox *)
module IBUFDS_GTE2 #(
    parameter CLKCM_CFG = "TRUE",
    parameter CLKRCV_TRST = "TRUE",
    parameter CLKSWING_CFG = 2'b11
) (
    output wire O,
    output wire ODIV2,
    input  wire CEB,
    input  wire I,
    input  wire IB
);
endmodule

(* blackbox *)
module BUFG (
    output wire O,
    input  wire I
);
endmodule

(* blackbox *)
module MMCME2_BASE #(
    parameter BANDWIDTH = "OPTIMIZED",
    parameter CLKFBOUT_MULT_F = 5.000,
    parameter CLKFBOUT_PHASE = 0.000,
    parameter CLKIN1_PERIOD = 0.000,
    parameter CLKOUT0_DIVIDE_F = 1.000,
    parameter CLKOUT0_DUTY_CYCLE = 0.500,
    parameter CLKOUT0_PHASE = 0.000,
    parameter CLKOUT1_DIVIDE = 1,
    parameter CLKOUT2_DIVIDE = 1,
    parameter CLKOUT3_DIVIDE = 1,
    parameter CLKOUT4_DIVIDE = 1,
    parameter CLKOUT5_DIVIDE = 1,
    parameter CLKOUT6_DIVIDE = 1,
    parameter CLKOUT4_CASCADE = "FALSE",
    parameter DIVCLK_DIVIDE = 1,
    parameter REF_JITTER1 = 0.010,
    parameter STARTUP_WAIT = "FALSE"
) (
    output wire CLKOUT0,
    output wire CLKOUT0B,
    output wire CLKOUT1,
    output wire CLKOUT1B,
    output wire CLKOUT2,
    output wire CLKOUT2B,
    output wire CLKOUT3,
    output wire CLKOUT3B,
    output wire CLKOUT4,
    output wire CLKOUT5,
    output wire CLKOUT6,
    output wire CLKFBOUT,
    output wire CLKFBOUTB,
    output wire LOCKED,
    input  wire CLKIN1,
    input  wire PWRDWN,
    input  wire RST,
    input  wire CLKFBIN
);
endmodule

(* blackbox *)
module xpm_fifo_axis #(
    parameter CASCADE_HEIGHT = 0,
    parameter CDC_SYNC_STAGES = 2,
    parameter CLOCKING_MODE = "common_clock",
    parameter ECC_MODE = "no_ecc",
    parameter FIFO_DEPTH = 2048,
    parameter FIFO_MEMORY_TYPE = "auto",
    parameter PACKET_FIFO = "false",
    parameter PROG_EMPTY_THRESH = 10,
    parameter PROG_FULL_THRESH = 10,
    parameter RD_DATA_COUNT_WIDTH = 1,
    parameter RELATED_CLOCKS = 0,
    parameter SIM_ASSERT_CHK = 0,
    parameter TDATA_WIDTH = 32,
    parameter TDEST_WIDTH = 1,
    parameter TID_WIDTH = 1,
    parameter TUSER_WIDTH = 1,
    parameter USE_ADV_FEATURES = "1000",
    parameter WR_DATA_COUNT_WIDTH = 1
) (
    output wire                           almost_empty_axis,
    output wire                           almost_full_axis,
    output wire                           dbiterr_axis,
    output wire [TDATA_WIDTH-1:0]         m_axis_tdata,
    output wire [TDEST_WIDTH-1:0]         m_axis_tdest,
    output wire [TID_WIDTH-1:0]           m_axis_tid,
    output wire [TDATA_WIDTH/8-1:0]       m_axis_tkeep,
    output wire                           m_axis_tlast,
    output wire [TDATA_WIDTH/8-1:0]       m_axis_tstrb,
    output wire [TUSER_WIDTH-1:0]         m_axis_tuser,
    output wire                           m_axis_tvalid,
    output wire                           prog_empty_axis,
    output wire                           prog_full_axis,
    output wire [RD_DATA_COUNT_WIDTH-1:0] rd_data_count_axis,
    output wire                           s_axis_tready,
    output wire                           sbiterr_axis,
    output wire [WR_DATA_COUNT_WIDTH-1:0] wr_data_count_axis,
    input  wire                           injectdbiterr_axis,
    input  wire                           injectsbiterr_axis,
    input  wire                           m_aclk,
    input  wire                           m_axis_tready,
    input  wire                           s_aclk,
    input  wire                           s_aresetn,
    input  wire [TDATA_WIDTH-1:0]         s_axis_tdata,
    input  wire [TDEST_WIDTH-1:0]         s_axis_tdest,
    input  wire [TID_WIDTH-1:0]           s_axis_tid,
    input  wire [TDATA_WIDTH/8-1:0]       s_axis_tkeep,
    input  wire                           s_axis_tlast,
    input  wire [TDATA_WIDTH/8-1:0]       s_axis_tstrb,
    input  wire [TUSER_WIDTH-1:0]         s_axis_tuser,
    input  wire                           s_axis_tvalid
);
endmodule

(* blackbox *)
module xpm_cdc_async_rst #(
    parameter DEST_SYNC_FF = 4,
    parameter INIT_SYNC_FF = 0,
    parameter RST_ACTIVE_HIGH = 0
) (
    input  wire src_arst,
    input  wire dest_clk,
    output wire dest_arst
);
endmodule
/* verilator lint_on UNUSEDPARAM */
/* verilator lint_on UNUSEDSIGNAL */
/* verilator lint_on UNDRIVEN */
