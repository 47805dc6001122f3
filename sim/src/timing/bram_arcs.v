// Block RAMs whose output register is in use, for the timing script (sim/src/timing.rs), read
// after Yosys' Xilinx cell library (+/xilinx/cells_sim.v, Yosys 0.23) with
// `read_verilog -lib -specify`. timing/bram_pack.rs gives a RAMB18E1 or RAMB36E1 these types when
// it moves the flip-flop after its read data into the RAM's DOA_REG/DOB_REG, as Vivado's synthesis
// does. The library times the read at 2454 ps with the output register unused and at 882 ps with
// it in use, but `sta` ignores those arcs' conditions and takes the longer: these modules have the
// library's ports and setup times and the 882 ps arcs alone (prjxray-db's Artix-7 BRAM_L timings,
// as the library cites them). They take no parameters: the packed cells carry none.

// DW, PW: the widths of a port's read data and parity.
`define DO_REG_ARCS(DW, PW) \
  specify \
    $setup(ADDRARDADDR, posedge CLKARDCLK, 566); \
    $setup(ADDRBWRADDR, posedge CLKBWRCLK, 566); \
    $setup(WEA, posedge CLKARDCLK, 532); \
    $setup(WEBWE, posedge CLKBWRCLK, 532); \
    $setup(REGCEAREGCE, posedge CLKARDCLK, 360); \
    $setup(RSTREGARSTREG, posedge CLKARDCLK, 342); \
    $setup(REGCEB, posedge CLKBWRCLK, 360); \
    $setup(RSTREGB, posedge CLKBWRCLK, 342); \
    $setup(DIADI, posedge CLKARDCLK, 737); \
    $setup(DIBDI, posedge CLKBWRCLK, 737); \
    $setup(DIPADIP, posedge CLKARDCLK, 737); \
    $setup(DIPBDIP, posedge CLKBWRCLK, 737); \
    (posedge CLKARDCLK => (DOADO : DW'bx)) = 882; \
    (posedge CLKARDCLK => (DOPADOP : PW'bx)) = 882; \
    (posedge CLKBWRCLK => (DOBDO : DW'bx)) = 882; \
    (posedge CLKBWRCLK => (DOPBDOP : PW'bx)) = 882; \
  endspecify

module RAMB18E1_DO_REG (
  input CLKARDCLK, CLKBWRCLK, ENARDEN, ENBWREN, REGCEAREGCE, REGCEB,
  input RSTRAMARSTRAM, RSTRAMB, RSTREGARSTREG, RSTREGB,
  input [13:0] ADDRARDADDR, ADDRBWRADDR,
  input [15:0] DIADI, DIBDI,
  input [1:0] DIPADIP, DIPBDIP,
  input [1:0] WEA,
  input [3:0] WEBWE,
  output [15:0] DOADO, DOBDO,
  output [1:0] DOPADOP, DOPBDOP
);
  `DO_REG_ARCS(16, 2)
endmodule

module RAMB36E1_DO_REG (
  output CASCADEOUTA, CASCADEOUTB,
  output [31:0] DOADO, DOBDO,
  output [3:0] DOPADOP, DOPBDOP,
  output [7:0] ECCPARITY,
  output [8:0] RDADDRECC,
  output SBITERR, DBITERR,
  input ENARDEN, CLKARDCLK, RSTRAMARSTRAM, RSTREGARSTREG, CASCADEINA, REGCEAREGCE,
  input ENBWREN, CLKBWRCLK, RSTRAMB, RSTREGB, CASCADEINB, REGCEB,
  input INJECTDBITERR, INJECTSBITERR,
  input [15:0] ADDRARDADDR, ADDRBWRADDR,
  input [31:0] DIADI, DIBDI,
  input [3:0] DIPADIP, DIPBDIP,
  input [3:0] WEA,
  input [7:0] WEBWE
);
  `DO_REG_ARCS(32, 4)
endmodule
