// A functional simulation of the ecrt board top with the models of xilinx_sim_models.v (Icarus
// Verilog; hdl/tests/board.rs). The host, through the XDMA model, reads the accelerator's
// identification registers over AXI4-Lite, writes a register and reads it back, sends a request
// frame on H2C (no key is loaded) and receives its error result on C2H, then reads the job
// counters. Every value crosses the board top's clock-domain crossings (or its wires, when the
// accelerator shares axi_aclk). The expected values come as macros from the test, which takes them
// from the interface and the manifest. Prints PASS, or a FAIL line per mismatch.
`timescale 1ns / 1ps
module tb_board;
    localparam BITS = `ECRT_XDMA_DATA_BITS;

    reg sys_clk = 1'b0;
    always #5 sys_clk = ~sys_clk;
    reg sys_rst_n = 1'b0;
    wire [`ECRT_XDMA_LANES-1:0] txp, txn;
    wire [3:0] led;
    ecrt_board_top dut (
        .sys_clk_p(sys_clk),
        .sys_clk_n(~sys_clk),
        .sys_rst_n(sys_rst_n),
        .pci_exp_txp(txp),
        .pci_exp_txn(txn),
        .pci_exp_rxp({`ECRT_XDMA_LANES{1'b0}}),
        .pci_exp_rxn({`ECRT_XDMA_LANES{1'b1}}),
        .led(led)
    );

    integer failures = 0;
    task check(input [8*32-1:0] what, input [BITS-1:0] got, input [BITS-1:0] want);
        if (got !== want) begin
            $display("FAIL: %0s is %h, expected %h", what, got, want);
            failures = failures + 1;
        end
    endtask

    reg [31:0] data;
    reg [1:0] response;
    reg [BITS-1:0] beat;
    reg last;
    integer i;
    initial begin
        #100 sys_rst_n = 1'b1;
        wait (led[0] && led[1]);  // link up, accelerator clock locked
        repeat (20) @(posedge dut.axi_aclk);

        dut.xdma.axil_read(`REG_ID, data, response);
        check("ID", data, `ID_VALUE);
        check("ID response", response, 0);
        dut.xdma.axil_read(`REG_KEY_BITS, data, response);
        check("KEY_BITS", data, `KEY_BITS);
        dut.xdma.axil_read(`REG_CORES, data, response);
        check("CORES", data, `CORES);
        dut.xdma.axil_read(`REG_STREAM_BITS, data, response);
        check("STREAM_BITS", data, BITS);
        dut.xdma.axil_write(`REG_KEY_SELECT, `KEY_SELECT_VALUE, response);
        check("KEY_SELECT write response", response, 0);
        dut.xdma.axil_read(`REG_KEY_SELECT, data, response);
        check("KEY_SELECT", data, `KEY_SELECT_VALUE);

        for (i = 0; i < `REQUEST_BEATS; i = i + 1)
            dut.xdma.h2c_send(i == 0 ? `REQUEST_HEADER : 0, i == `REQUEST_BEATS - 1);
        for (i = 0; i < `RESULT_BEATS; i = i + 1) begin
            dut.xdma.c2h_receive(beat, last);
            check("result beat", beat, i == 0 ? `RESULT_HEADER : 0);
            check("result TLAST", last, i == `RESULT_BEATS - 1);
        end

        dut.xdma.axil_read(`REG_JOBS_IN, data, response);
        check("JOBS_IN", data, 1);
        dut.xdma.axil_read(`REG_JOBS_OUT, data, response);
        check("JOBS_OUT", data, 1);
        dut.xdma.axil_read(`REG_JOBS_FAILED, data, response);
        check("JOBS_FAILED", data, 1);
        if (failures == 0) $display("PASS");
        $finish;
    end

    initial begin
        #(`TIMEOUT_NS);
        $display("FAIL: timeout");
        $finish;
    end
endmodule
