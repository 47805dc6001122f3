# VC707 (xc7vx485t-ffg1761-2) constraints for the ecrt board top (ecrt_board_top.v, written by
# `ecrt rtl --board vc707`). Read by vivado/build.tcl together with the generated ecrt_timing.xdc,
# which holds what depends on the accelerator's configuration (its clock and the clock-domain
# crossings: see the last section).
#
# Sources. The board document is the VC707 Evaluation Board User Guide (UG885). UG885 itself was
# not at hand when this file was written: each pin below is the one public VC707 PCIe Gen2 x8
# designs constrain (PCIe block PCIE_X1Y0, reference clock AB8/AB7 at IBUFDS_GTE2_X1Y5, PERST# AV35;
# several independent designs agree, one of them a Xilinx pcie_7x example derivative). Check them
# against UG885 ("PCI Express Endpoint Connectivity", "User LEDs") before the first build.
#
# The eight PCIe lanes (pci_exp_txp/txn/rxp/rxn) need no pins here: the XDMA IP's own constraints
# place its GTX channels for the PCIe block chosen in build.tcl (ecrt(pcie_block) = X1Y0 in
# params.tcl) and Vivado derives the package pins from them.

## Configuration: the VC707's configuration banks are at 1.8 V, CFGBVS tied to GND (UG885; as in
## the public designs).
set_property CONFIG_VOLTAGE 1.8 [current_design]
set_property CFGBVS GND [current_design]
set_property BITSTREAM.GENERAL.COMPRESS TRUE [current_design]

## PCIe reference clock: 100 MHz from the edge connector (UG885 "PCI Express Endpoint Connectivity")
## into the GTX MGTREFCLK pair on pins AB8 (P) / AB7 (N), the reference-clock buffer at
## IBUFDS_GTE2_X1Y5 (both as public VC707 designs set them together).
set_property PACKAGE_PIN AB8 [get_ports sys_clk_p]
set_property PACKAGE_PIN AB7 [get_ports sys_clk_n]
set_property LOC IBUFDS_GTE2_X1Y5 [get_cells refclk_ibuf]
create_clock -name sys_clk -period 10.000 [get_ports sys_clk_p]

## PCIe PERST# from the edge connector (UG885 "PCI Express Endpoint Connectivity"): pin AV35, a 1.8 V
## bank, with the FPGA's pull-up so that the board comes out of reset when no host drives it.
## Asynchronous to every clock: the XDMA IP synchronizes it.
set_property PACKAGE_PIN AV35 [get_ports sys_rst_n]
set_property IOSTANDARD LVCMOS18 [get_ports sys_rst_n]
set_property PULLUP true [get_ports sys_rst_n]
set_false_path -from [get_ports sys_rst_n]

## User LEDs GPIO_LED_0..3 (UG885 "User LEDs"; the pins public VC707 designs use):
## link up, accelerator clock locked, axi_aclk heartbeat, accelerator clock heartbeat.
set_property PACKAGE_PIN AM39 [get_ports {led[0]}]
set_property PACKAGE_PIN AN39 [get_ports {led[1]}]
set_property PACKAGE_PIN AR37 [get_ports {led[2]}]
set_property PACKAGE_PIN AT37 [get_ports {led[3]}]
set_property IOSTANDARD LVCMOS18 [get_ports {led[*]}]
set_property SLEW SLOW [get_ports {led[*]}]
set_property DRIVE 4 [get_ports {led[*]}]
set_false_path -to [get_ports {led[*]}]

## The accelerator clock and the clock-domain crossings: in ecrt_timing.xdc, generated with the board
## top because they depend on the configuration (--clock-mhz). With the MMCM (any clock other than
## XDMA's 250 MHz axi_aclk) it names the MMCM output accel_clk (create_generated_clock) and bounds
## every path between accel_clk and axi_aclk with set_max_delay -datapath_only; the crossings
## themselves are XPM FIFOs and an XPM reset synchronizer, which bring their own constraints.
