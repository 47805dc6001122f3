# ecrt: the non-project batch flow, from a directory written by `ecrt rtl --board <board> --out DIR`
# to a bitstream and its reports:
#
#   vivado -mode batch -source vivado/build.tcl -tclargs DIR
#
# (`ecrt rtl` copies this script into DIR, so `-source DIR/build.tcl` works as well.) DIR/params.tcl,
# generated from the accelerator's manifest, gives the part, the files, the clocks and the XDMA
# settings. Steps: the XDMA IP xdma_0, synthesis, opt_design, place_design, phys_opt_design,
# route_design, reports, write_bitstream; everything goes to DIR/vivado/. The build exits with
# status 1 when a step fails, when the accelerator clock Vivado derived differs from params.tcl, and
# when the setup (WNS) or hold (WHS) slack after routing is negative.

proc ecrt_fail {message} {
    puts stderr "ecrt build: ERROR: $message"
    exit 1
}

# Runs `script` in the caller's scope as the step `name`; any Tcl error fails the build.
proc ecrt_step {name script} {
    puts "ecrt build: $name"
    if {[catch {uplevel 1 $script} result]} {
        ecrt_fail "$name: $result"
    }
}

if {[llength $argv] != 1} {
    ecrt_fail "usage: vivado -mode batch -source build.tcl -tclargs <directory written by `ecrt rtl --board`>"
}
set dir [file normalize [lindex $argv 0]]
if {![file isfile [file join $dir params.tcl]]} {
    ecrt_fail "$dir/params.tcl is missing: write the directory with `ecrt rtl --board <board> --out $dir`"
}
source [file join $dir params.tcl]
set out [file join $dir vivado]
file mkdir $out
puts "ecrt build: $ecrt(board), $ecrt(key_bits)-bit keys, $ecrt(cores) core(s), accelerator at $ecrt(accel_clock_mhz) MHz"

ecrt_step "in-memory project for $ecrt(part)" {
    create_project -in_memory -part $ecrt(part)
    set_property target_language Verilog [current_project]
    # The board top's crossings are XPM macros (UG974): xpm_fifo_axis, xpm_cdc_async_rst.
    set_property XPM_LIBRARIES {XPM_CDC XPM_MEMORY XPM_FIFO} [current_project]
}

# The XDMA IP (PG195) in AXI4-Stream mode: one H2C and one C2H channel, the AXI4-Lite master on a
# 4 KiB BAR at AXI address 0 (the register block decodes 12 bits), one user interrupt (unused).
ecrt_step "XDMA IP xdma_0: PCIe $ecrt(link_speed) $ecrt(link_width), AXI4-Stream $ecrt(axi_data_width) at $ecrt(user_clock_mhz) MHz" {
    set ip_dir [file join $out ip]
    file mkdir $ip_dir
    create_ip -name xdma -vendor xilinx.com -library ip -module_name xdma_0 -dir $ip_dir
    set xdma [get_ips xdma_0]
    set xdma_config [list \
        CONFIG.mode_selection Advanced \
        CONFIG.pcie_blk_locn $ecrt(pcie_block) \
        CONFIG.pl_link_cap_max_link_speed $ecrt(link_speed) \
        CONFIG.pl_link_cap_max_link_width $ecrt(link_width) \
        CONFIG.ref_clk_freq $ecrt(refclk_mhz)_MHz \
        CONFIG.axi_data_width $ecrt(axi_data_width) \
        CONFIG.axisten_freq $ecrt(user_clock_mhz) \
        CONFIG.xdma_axi_intf_mm AXI_Stream \
        CONFIG.xdma_rnum_chnl 1 \
        CONFIG.xdma_wnum_chnl 1 \
        CONFIG.axilite_master_en true \
        CONFIG.axilite_master_size $ecrt(axilite_bar_kib) \
        CONFIG.axilite_master_scale Kilobytes \
        CONFIG.pciebar2axibar_axil_master 0x00000000 \
        CONFIG.xdma_num_usr_irq 1 \
        CONFIG.cfg_mgmt_if false \
        CONFIG.pf0_device_id $ecrt(device_id) \
    ]
    set_property -dict $xdma_config $xdma
    # The IP adjusts values it does not accept for the part: make sure each one took.
    foreach {key value} $xdma_config {
        set got [get_property $key $xdma]
        if {![string equal -nocase $got $value]} {
            error "$key is '$got' after configuration, not '$value'"
        }
    }
    generate_target all $xdma
    synth_ip $xdma
}

ecrt_step "read the RTL and the constraints" {
    foreach file $ecrt(verilog) {
        read_verilog [file join $dir $file]
    }
    foreach file $ecrt(xdc) {
        read_xdc [file join $dir $file]
    }
}

ecrt_step "synth_design -top $ecrt(top)" {
    synth_design -top $ecrt(top) -part $ecrt(part)
    write_checkpoint -force [file join $out post_synth.dcp]
    report_utilization -file [file join $out utilization_synth.rpt]
}

# The accelerator clock Vivado derived (from the MMCM's settings, or axi_aclk itself) must be the
# clock params.tcl (the manifest's clock_mhz) asks for.
ecrt_step "check the accelerator clock: $ecrt(accel_period_ns) ns" {
    if {$ecrt(accel_clock) eq "mmcm"} {
        set accel_clock [get_clocks accel_clk]
    } else {
        set accel_clock [get_clocks -of_objects [get_nets axi_aclk]]
    }
    if {[llength $accel_clock] != 1} {
        error "expected one accelerator clock, found '$accel_clock'"
    }
    set period [get_property PERIOD $accel_clock]
    if {abs($period - $ecrt(accel_period_ns)) > 0.001} {
        error "the accelerator clock's period is $period ns, params.tcl says $ecrt(accel_period_ns) ns"
    }
}

ecrt_step "opt_design" { opt_design }
ecrt_step "place_design" { place_design }
ecrt_step "phys_opt_design" { phys_opt_design }
ecrt_step "route_design" {
    route_design
    write_checkpoint -force [file join $out post_route.dcp]
}

ecrt_step "reports" {
    report_utilization -file [file join $out utilization.rpt]
    report_utilization -hierarchical -file [file join $out utilization_hierarchical.rpt]
    report_timing_summary -max_paths 20 -report_unconstrained -file [file join $out timing_summary.rpt]
    report_clock_interaction -file [file join $out clock_interaction.rpt]
    report_cdc -file [file join $out cdc.rpt]
    report_drc -file [file join $out drc.rpt]
}

ecrt_step "check the timing after routing" {
    set setup_path [get_timing_paths -delay_type max -max_paths 1 -nworst 1]
    set hold_path [get_timing_paths -delay_type min -max_paths 1 -nworst 1]
    if {$setup_path eq "" || $hold_path eq ""} {
        error "no timed paths: are the clocks constrained?"
    }
    set wns [get_property SLACK $setup_path]
    set whs [get_property SLACK $hold_path]
    puts "ecrt build: WNS $wns ns, WHS $whs ns"
}
if {$wns < 0 || $whs < 0} {
    ecrt_fail "timing not met after routing: WNS $wns ns, WHS $whs ns (see [file join $out timing_summary.rpt])"
}

ecrt_step "write_bitstream" {
    write_bitstream -force [file join $out $ecrt(bitstream)]
}
puts "ecrt build: wrote [file join $out $ecrt(bitstream)]; load it with vivado/program.tcl (docs/bitstream.md)"
exit 0
