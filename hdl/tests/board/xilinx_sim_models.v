// Behavioural models of the Xilinx IP, primitives and XPM macros that the ecrt board top
// instantiates, for a functional simulation of the top in Icarus Verilog (hdl/tests/board.rs,
// tb_board.v). Not the real ones, and never given to Vivado: just enough behaviour to move data
// through the top, with the same ports as xilinx_stubs.v.
// - xdma_0: a 250 MHz axi_aclk, axi_aresetn released after PERST#, and tasks that play the host:
//   AXI4-Lite reads and writes, H2C beats sent, C2H beats received. Values change on the falling
//   edge and are sampled mid-cycle, so the model never races the design's rising edges.
// - MMCME2_BASE: CLKOUT0 of the period its settings give, free-running and of arbitrary phase (the
//   crossings must not care); LOCKED 50 input cycles after RST falls.
// - xpm_fifo_axis: a first-word-fall-through FIFO whose pointers cross through two flip-flops of
//   the other clock, like the real one's synchronizers; s_aresetn empties it.
// - xpm_cdc_async_rst: asserts at once, releases after DEST_SYNC_FF edges of dest_clk.
`timescale 1ns / 1ps
`ifndef ECRT_XDMA_DATA_BITS
`define ECRT_XDMA_DATA_BITS 256
`endif
`ifndef ECRT_XDMA_LANES
`define ECRT_XDMA_LANES 8
`endif

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
    output reg  [31:0]                       m_axil_awaddr = 0,
    output wire [2:0]                        m_axil_awprot,
    output reg                               m_axil_awvalid = 0,
    input  wire                              m_axil_awready,
    output reg  [31:0]                       m_axil_wdata = 0,
    output reg  [3:0]                        m_axil_wstrb = 0,
    output reg                               m_axil_wvalid = 0,
    input  wire                              m_axil_wready,
    input  wire                              m_axil_bvalid,
    input  wire [1:0]                        m_axil_bresp,
    output reg                               m_axil_bready = 0,
    output reg  [31:0]                       m_axil_araddr = 0,
    output wire [2:0]                        m_axil_arprot,
    output reg                               m_axil_arvalid = 0,
    input  wire                              m_axil_arready,
    input  wire [31:0]                       m_axil_rdata,
    input  wire [1:0]                        m_axil_rresp,
    input  wire                              m_axil_rvalid,
    output reg                               m_axil_rready = 0,
    input  wire [`ECRT_XDMA_DATA_BITS-1:0]   s_axis_c2h_tdata_0,
    input  wire                              s_axis_c2h_tlast_0,
    input  wire                              s_axis_c2h_tvalid_0,
    output reg                               s_axis_c2h_tready_0 = 0,
    input  wire [`ECRT_XDMA_DATA_BITS/8-1:0] s_axis_c2h_tkeep_0,
    output reg  [`ECRT_XDMA_DATA_BITS-1:0]   m_axis_h2c_tdata_0 = 0,
    output reg                               m_axis_h2c_tlast_0 = 0,
    output reg                               m_axis_h2c_tvalid_0 = 0,
    input  wire                              m_axis_h2c_tready_0,
    output wire [`ECRT_XDMA_DATA_BITS/8-1:0] m_axis_h2c_tkeep_0
);
    reg clk = 1'b0;
    always #2 clk = ~clk;
    assign axi_aclk = clk;
    reg [3:0] reset_count = 0;
    always @(posedge clk or negedge sys_rst_n)
        if (!sys_rst_n) reset_count <= 0;
        else if (reset_count != 4'hf) reset_count <= reset_count + 1;
    assign axi_aresetn = reset_count == 4'hf;
    assign user_lnk_up = axi_aresetn;
    assign pci_exp_txp = 0;
    assign pci_exp_txn = 0;
    assign usr_irq_ack = 0;
    assign msi_enable = 0;
    assign msi_vector_width = 0;
    assign m_axil_awprot = 0;
    assign m_axil_arprot = 0;
    assign m_axis_h2c_tkeep_0 = {(`ECRT_XDMA_DATA_BITS/8){1'b1}};

    // Waits until mid-cycle, when the design's outputs are settled.
    task settle;
        begin
            @(negedge clk);
            #0.5;
        end
    endtask

    task axil_write(input [31:0] address, input [31:0] data, output [1:0] response);
        reg address_taken, data_taken;
        begin
            settle;
            m_axil_awaddr = address;
            m_axil_awvalid = 1;
            m_axil_wdata = data;
            m_axil_wstrb = 4'hf;
            m_axil_wvalid = 1;
            while (m_axil_awvalid || m_axil_wvalid) begin
                #0.5;
                address_taken = m_axil_awvalid && m_axil_awready;
                data_taken = m_axil_wvalid && m_axil_wready;
                settle;
                if (address_taken) m_axil_awvalid = 0;
                if (data_taken) m_axil_wvalid = 0;
            end
            m_axil_bready = 1;
            #0.5;
            while (!m_axil_bvalid) settle;
            response = m_axil_bresp;
            settle;
            m_axil_bready = 0;
        end
    endtask

    task axil_read(input [31:0] address, output [31:0] data, output [1:0] response);
        begin
            settle;
            m_axil_araddr = address;
            m_axil_arvalid = 1;
            #0.5;
            while (!m_axil_arready) settle;
            settle;
            m_axil_arvalid = 0;
            m_axil_rready = 1;
            #0.5;
            while (!m_axil_rvalid) settle;
            data = m_axil_rdata;
            response = m_axil_rresp;
            settle;
            m_axil_rready = 0;
        end
    endtask

    task h2c_send(input [`ECRT_XDMA_DATA_BITS-1:0] data, input last);
        begin
            settle;
            m_axis_h2c_tdata_0 = data;
            m_axis_h2c_tlast_0 = last;
            m_axis_h2c_tvalid_0 = 1;
            #0.5;
            while (!m_axis_h2c_tready_0) settle;
            settle;
            m_axis_h2c_tvalid_0 = 0;
        end
    endtask

    task c2h_receive(output [`ECRT_XDMA_DATA_BITS-1:0] data, output last);
        begin
            settle;
            s_axis_c2h_tready_0 = 1;
            #0.5;
            while (!s_axis_c2h_tvalid_0) settle;
            data = s_axis_c2h_tdata_0;
            last = s_axis_c2h_tlast_0;
            settle;
            s_axis_c2h_tready_0 = 0;
        end
    endtask
endmodule

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
    assign O = I;
    assign ODIV2 = I;
endmodule

module BUFG (
    output wire O,
    input  wire I
);
    assign O = I;
endmodule

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
    localparam real PERIOD = CLKIN1_PERIOD * DIVCLK_DIVIDE * CLKOUT0_DIVIDE_F / CLKFBOUT_MULT_F;
    reg clock = 1'b0;
    initial begin
        #0.37;
        forever #(PERIOD / 2.0) clock = ~clock;
    end
    reg [5:0] lock_count = 0;
    always @(posedge CLKIN1 or posedge RST)
        if (RST) lock_count <= 0;
        else if (lock_count != 50) lock_count <= lock_count + 1;
    assign LOCKED = lock_count == 50;
    assign CLKOUT0 = clock;
    assign CLKOUT0B = ~clock;
    assign {CLKOUT1, CLKOUT1B, CLKOUT2, CLKOUT2B, CLKOUT3, CLKOUT3B, CLKOUT4, CLKOUT5, CLKOUT6} = 0;
    assign CLKFBOUT = CLKIN1;
    assign CLKFBOUTB = ~CLKIN1;
endmodule

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
    reg [TDATA_WIDTH:0] memory [0:FIFO_DEPTH-1];
    reg [31:0] written = 0, read = 0;                    // entries, each in its own clock
    reg [31:0] written_seen [0:1], read_seen [0:1];      // ... through two flip-flops of the other
    reg writing_reset = 1;
    initial begin
        written_seen[0] = 0; written_seen[1] = 0; read_seen[0] = 0; read_seen[1] = 0;
    end
    always @(posedge s_aclk or negedge s_aresetn)
        if (!s_aresetn) begin
            written <= 0;
            read_seen[0] <= 0;
            read_seen[1] <= 0;
            writing_reset <= 1;
        end else begin
            writing_reset <= 0;
            read_seen[0] <= read;
            read_seen[1] <= read_seen[0];
            if (s_axis_tvalid && s_axis_tready) begin
                memory[written % FIFO_DEPTH] <= {s_axis_tlast, s_axis_tdata};
                written <= written + 1;
            end
        end
    always @(posedge m_aclk or negedge s_aresetn)
        if (!s_aresetn) begin
            read <= 0;
            written_seen[0] <= 0;
            written_seen[1] <= 0;
        end else begin
            written_seen[0] <= written;
            written_seen[1] <= written_seen[0];
            if (m_axis_tvalid && m_axis_tready) read <= read + 1;
        end
    assign s_axis_tready = !writing_reset && written - read_seen[1] < FIFO_DEPTH;
    assign m_axis_tvalid = written_seen[1] != read;
    assign {m_axis_tlast, m_axis_tdata} = memory[read % FIFO_DEPTH];
    assign {almost_empty_axis, almost_full_axis, dbiterr_axis, sbiterr_axis, prog_empty_axis, prog_full_axis} = 0;
    assign m_axis_tdest = 0;
    assign m_axis_tid = 0;
    assign m_axis_tkeep = {(TDATA_WIDTH/8){1'b1}};
    assign m_axis_tstrb = {(TDATA_WIDTH/8){1'b1}};
    assign m_axis_tuser = 0;
    assign rd_data_count_axis = 0;
    assign wr_data_count_axis = 0;
endmodule

module xpm_cdc_async_rst #(
    parameter DEST_SYNC_FF = 4,
    parameter INIT_SYNC_FF = 0,
    parameter RST_ACTIVE_HIGH = 0
) (
    input  wire src_arst,
    input  wire dest_clk,
    output wire dest_arst
);
    localparam ASSERTED = RST_ACTIVE_HIGH ? 1'b1 : 1'b0;
    reg [DEST_SYNC_FF-1:0] stages = {DEST_SYNC_FF{ASSERTED}};
    wire asserted = src_arst == ASSERTED;
    always @(posedge dest_clk or posedge asserted)
        if (asserted) stages <= {DEST_SYNC_FF{ASSERTED}};
        else stages <= {stages[DEST_SYNC_FF-2:0], ~ASSERTED};
    assign dest_arst = stages[DEST_SYNC_FF-1];
endmodule
