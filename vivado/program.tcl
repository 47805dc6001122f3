# ecrt: loads the bitstream that build.tcl wrote into the board's FPGA over JTAG:
#
#   vivado -mode batch -source vivado/program.tcl -tclargs DIR [HW_SERVER_URL]
#
# DIR is the directory written by `ecrt rtl --board` and built by build.tcl; HW_SERVER_URL defaults
# to localhost:3121 (a local hw_server, started by Vivado if needed). Exits with status 1 when a step
# fails. The host sees the new PCIe endpoint only after a rescan or a warm reboot: docs/bitstream.md.

proc ecrt_fail {message} {
    puts stderr "ecrt program: ERROR: $message"
    exit 1
}

proc ecrt_step {name script} {
    puts "ecrt program: $name"
    if {[catch {uplevel 1 $script} result]} {
        ecrt_fail "$name: $result"
    }
}

if {[llength $argv] < 1 || [llength $argv] > 2} {
    ecrt_fail "usage: vivado -mode batch -source program.tcl -tclargs <directory> \[hw_server url\]"
}
set dir [file normalize [lindex $argv 0]]
set url [expr {[llength $argv] == 2 ? [lindex $argv 1] : "localhost:3121"}]
if {![file isfile [file join $dir params.tcl]]} {
    ecrt_fail "$dir/params.tcl is missing: write the directory with `ecrt rtl --board <board> --out $dir`"
}
source [file join $dir params.tcl]
set bitstream [file join $dir vivado $ecrt(bitstream)]
if {![file isfile $bitstream]} {
    ecrt_fail "$bitstream is missing: build it with vivado/build.tcl first"
}
# The JTAG device name is the part without package and speed grade: xc7vx690t_0.
set device_name [lindex [split $ecrt(part) -] 0]

ecrt_step "connect to the hw_server at $url" {
    if {[llength [info commands open_hw_manager]]} { open_hw_manager } else { open_hw }
    connect_hw_server -url $url
    open_hw_target
}

ecrt_step "program $device_name with $bitstream" {
    set device [lindex [get_hw_devices ${device_name}*] 0]
    if {$device eq ""} {
        error "no $device_name on the JTAG chain (devices: [get_hw_devices])"
    }
    current_hw_device $device
    refresh_hw_device -update_hw_probes false $device
    set_property PROGRAM.FILE $bitstream $device
    program_hw_devices $device
    refresh_hw_device $device
}

ecrt_step "disconnect" {
    close_hw_target
    disconnect_hw_server
}
puts "ecrt program: $ecrt(board) programmed; rescan the PCIe bus (docs/bitstream.md)"
exit 0
