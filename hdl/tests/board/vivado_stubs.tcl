# Stand-ins for the Vivado commands that vivado/build.tcl and vivado/program.tcl call, so that plain
# tclsh can run them (hdl/tests/integration/board.rs). Not Vivado: each stand-in checks its arguments and the
# files it is given, models the little the scripts read back (IP properties, clock periods, slacks),
# and logs what it did. They check that the scripts parse, call the commands they need in order,
# refer only to files that exist, and that the constraints name ports, cells, pins and nets the
# generated Verilog has.
#
#   tclsh vivado_stubs.tcl SCRIPT ARGS...
#
# Environment: ECRT_STUB_LOG, the log file (appended to); ECRT_STUB_FAIL, a command that fails;
# ECRT_STUB_WNS and ECRT_STUB_WHS, the slacks after routing (default 0.100); ECRT_STUB_JTAG, the
# devices on the JTAG chain (default xc7vx690t_0 xc7vx485t_0).

proc stub_log {line} {
    if {[info exists ::env(ECRT_STUB_LOG)]} {
        set f [open $::env(ECRT_STUB_LOG) a]
        puts $f $line
        close $f
    }
}

proc stub_check {condition message} {
    if {![uplevel 1 [list expr $condition]]} {
        error "stub: $message"
    }
}

# Fails when ECRT_STUB_FAIL names `command`; logs the call otherwise.
proc stub_enter {command arguments} {
    if {[info exists ::env(ECRT_STUB_FAIL)] && $::env(ECRT_STUB_FAIL) eq $command} {
        error "$command failed (ECRT_STUB_FAIL)"
    }
    stub_log "$command $arguments"
}

# Splits `arguments` into options (a dict; flags in `flags` take no value) and positional words.
proc stub_options {arguments flags} {
    set options [dict create]
    set positional {}
    for {set i 0} {$i < [llength $arguments]} {incr i} {
        set word [lindex $arguments $i]
        if {[string match -* $word] && ![string is double -strict $word]} {
            if {$word in $flags} {
                dict set options $word 1
            } else {
                incr i
                stub_check {$i < [llength $arguments]} "option $word needs a value"
                dict set options $word [lindex $arguments $i]
            }
        } else {
            lappend positional $word
        }
    }
    return [list $options $positional]
}

proc stub_state {key {default ""}} {
    if {[info exists ::stub($key)]} { return $::stub($key) }
    return $default
}

# The RTL read so far: module name -> text without comments.
array set ::modules {}

proc stub_parse_verilog {file} {
    set f [open $file]
    set text [read $f]
    close $f
    regsub -all {//[^\n]*} $text "" text
    # (Split on endmodule: a Tcl RE takes its greediness from its first quantifier.)
    foreach chunk [split [string map {endmodule \x01} $text] \x01] {
        if {[regexp -indices {\mmodule\s+([A-Za-z_][\w$]*)} $chunk whole name]} {
            set ::modules([string range $chunk {*}$name]) [string range $chunk [lindex $whole 1]+1 end]
        }
    }
}

set ::verilog_keywords {module input output inout wire reg integer assign always initial begin end if else
    case casez casex endcase default for while repeat function endfunction task endtask generate
    endgenerate localparam parameter posedge negedge or and not}

# (type, instance) pairs of module `name`.
proc stub_instances {name} {
    set found {}
    set pattern {([A-Za-z_][\w$]*)\s+(?:#\s*\((?:[^()]|\([^()]*\))*\)\s*)?([A-Za-z_][\w$]*)\s*\(}
    foreach {whole type instance} [regexp -all -inline $pattern $::modules($name)] {
        if {$type ni $::verilog_keywords} {
            lappend found $type $instance
        }
    }
    return $found
}

# The module type of the instance at `path` (a/b/c) below the top, or "" if there is none.
proc stub_instance_type {path} {
    set type [stub_state top]
    foreach part [split $path /] {
        if {![info exists ::modules($type)]} { return "" }
        set next ""
        foreach {t i} [stub_instances $type] {
            if {$i eq $part} { set next $t }
        }
        if {$next eq ""} { return "" }
        set type $next
    }
    return $type
}

# The ports of the top module, bus bits expanded: led[0] led[1] ...
proc stub_top_ports {} {
    set ports {}
    set pattern {(?:input|output)\s+wire\s+(?:\[(\d+):(\d+)\]\s*)?([A-Za-z_]\w*)}
    foreach {whole msb lsb name} [regexp -all -inline $pattern $::modules([stub_state top])] {
        if {$msb eq ""} {
            lappend ports $name
        } else {
            for {set i $lsb} {$i <= $msb} {incr i} { lappend ports "$name\[$i\]" }
        }
    }
    return $ports
}

# A parameter of the instance at `path`: `.NAME(value)`.
proc stub_instance_parameter {path name} {
    set parent [join [lrange [split $path /] 0 end-1] /]
    set parent_type [expr {$parent eq "" ? [stub_state top] : [stub_instance_type $parent]}]
    set instance [lindex [split $path /] end]
    set pattern "#\\s*\\(((?:\[^()\]|\\(\[^()\]*\\))*)\\)\\s*$instance\\s*\\("
    stub_check {[regexp $pattern $::modules($parent_type) whole parameters]} "$path has no parameters"
    stub_check {[regexp "\\.$name\\s*\\(\\s*(\[^)\\s\]+)\\s*\\)" $parameters whole value]} "$path has no $name"
    return $value
}

# ---- Project, IP, files ------------------------------------------------------------------------

proc create_project {args} {
    stub_enter create_project $args
    lassign [stub_options $args {-in_memory -force}] options positional
    stub_check {[dict exists $options -in_memory] || [llength $positional] == 2} "create_project: a name and a directory, or -in_memory"
    stub_check {[dict exists $options -part]} "create_project: -part"
    set ::stub(part) [dict get $options -part]
    stub_check {[regexp {^xc7v[x0-9]+t-ffg1761-2$} $::stub(part)]} "create_project: unexpected part $::stub(part)"
}

proc current_project {args} { return project_1 }
proc current_design {args} { return design_1 }

# The XDMA properties build.tcl may set, with their allowed values ("" = any).
array set ::xdma_values {
    CONFIG.mode_selection {Basic Advanced}
    CONFIG.pcie_blk_locn {X0Y0 X0Y1 X0Y2 X1Y0 X1Y1 X1Y2}
    CONFIG.pl_link_cap_max_link_speed {2.5_GT/s 5.0_GT/s 8.0_GT/s}
    CONFIG.pl_link_cap_max_link_width {X1 X2 X4 X8 X16}
    CONFIG.ref_clk_freq {100_MHz 125_MHz 250_MHz}
    CONFIG.axi_data_width {64_bit 128_bit 256_bit 512_bit}
    CONFIG.axisten_freq {62.5 125 250}
    CONFIG.xdma_axi_intf_mm {AXI_Memory_Mapped AXI_Stream}
    CONFIG.xdma_rnum_chnl {1 2 3 4}
    CONFIG.xdma_wnum_chnl {1 2 3 4}
    CONFIG.axilite_master_en {true false}
    CONFIG.axilite_master_size {}
    CONFIG.axilite_master_scale {Kilobytes Megabytes Gigabytes}
    CONFIG.pciebar2axibar_axil_master {}
    CONFIG.xdma_num_usr_irq {1 2 4 8 16}
    CONFIG.cfg_mgmt_if {true false}
    CONFIG.pf0_device_id {}
}

proc create_ip {args} {
    stub_enter create_ip $args
    lassign [stub_options $args {-force}] options positional
    foreach {option value} {-name xdma -vendor xilinx.com -library ip} {
        stub_check {[dict exists $options $option] && [dict get $options $option] eq $value} "create_ip: $option $value"
    }
    stub_check {[dict exists $options -module_name]} "create_ip: -module_name"
    if {[dict exists $options -dir]} {
        stub_check {[file isdirectory [dict get $options -dir]]} "create_ip: -dir [dict get $options -dir] does not exist"
    }
    stub_check {[stub_state part] ne ""} "create_ip before create_project"
    lappend ::stub(ips) [dict get $options -module_name]
    return [dict get $options -module_name]
}

proc get_ips {args} {
    set name [lindex $args end]
    stub_check {$name in [stub_state ips]} "get_ips: no IP $name"
    return $name
}

proc stub_set {object key value} {
    if {$object in [stub_state ips]} {
        stub_check {[info exists ::xdma_values($key)]} "set_property: $key is not an XDMA property build.tcl should set"
        set allowed $::xdma_values($key)
        stub_check {$allowed eq "" || $value in $allowed} "set_property: $key $value is not one of {$allowed}"
    }
    set ::props($object,$key) $value
}

proc set_property {args} {
    if {[lindex $args 0] eq "-dict"} {
        set pairs [lindex $args 1]
        set objects [lrange $args 2 end]
        stub_check {[llength $pairs] % 2 == 0} "set_property -dict: an odd list"
    } else {
        set pairs [lrange $args 0 1]
        set objects [lrange $args 2 end]
    }
    stub_check {[llength $objects] > 0 && [join $objects] ne ""} "set_property $pairs: no objects"
    foreach object [join $objects] {
        foreach {key value} $pairs { stub_set $object $key $value }
    }
}

proc generate_target {args} {
    stub_enter generate_target $args
    stub_check {[llength $args] == 2} "generate_target: a target and an IP"
    stub_check {[lindex $args 1] in [stub_state ips]} "generate_target: no IP [lindex $args 1]"
}

proc synth_ip {args} {
    stub_enter synth_ip $args
    stub_check {[lindex $args end] in [stub_state ips]} "synth_ip: no IP [lindex $args end]"
    lappend ::stub(synthesized_ips) [lindex $args end]
}

proc read_verilog {args} {
    stub_enter read_verilog $args
    foreach file $args {
        stub_check {[file isfile $file]} "read_verilog: $file does not exist"
        stub_parse_verilog $file
    }
}

proc read_xdc {args} {
    stub_enter read_xdc $args
    set file [lindex $args end]
    stub_check {[file isfile $file]} "read_xdc: $file does not exist"
    lappend ::stub(xdc) $file
}

# ---- Synthesis and implementation --------------------------------------------------------------

proc synth_design {args} {
    stub_enter synth_design $args
    lassign [stub_options $args {}] options positional
    stub_check {[dict exists $options -top]} "synth_design: -top"
    set top [dict get $options -top]
    stub_check {[info exists ::modules($top)]} "synth_design: no module $top in the Verilog read"
    stub_check {![dict exists $options -part] || [dict get $options -part] eq [stub_state part]} "synth_design: another part"
    set ::stub(top) $top
    foreach ip [stub_state ips] {
        stub_check {$ip in [stub_state synthesized_ips]} "synth_design: IP $ip not synthesized"
        stub_check {[stub_instance_type [stub_ip_instance $ip]] eq $ip} "synth_design: no instance of $ip"
    }
    # Every module instantiated is read, or a Xilinx primitive, XPM macro or IP.
    foreach name [array names ::modules] {
        foreach {type instance} [stub_instances $name] {
            set known [expr {[info exists ::modules($type)] || $type in [stub_state ips]
                || $type in {IBUFDS_GTE2 BUFG MMCME2_BASE xpm_fifo_axis xpm_cdc_async_rst}}]
            stub_check {$known} "synth_design: $name instantiates an unknown module $type"
        }
    }
    # The constraints apply to the synthesized netlist.
    foreach file [stub_state xdc] { stub_apply_xdc $file }
    set ::stub(stage) synthesized
}

proc stub_ip_instance {ip} {
    foreach {type instance} [stub_instances [stub_state top]] {
        if {$type eq $ip} { return $instance }
    }
    return ""
}

proc stub_stage {command needs next} {
    stub_enter $command ""
    stub_check {[stub_state stage] eq $needs} "$command after [stub_state stage], not after $needs"
    set ::stub(stage) $next
}
proc opt_design {args} { stub_stage opt_design synthesized optimized }
proc place_design {args} { stub_stage place_design optimized placed }
proc phys_opt_design {args} { stub_stage phys_opt_design placed placed }
proc route_design {args} { stub_stage route_design placed routed }

proc stub_write_file {command arguments} {
    stub_enter $command $arguments
    lassign [stub_options $arguments {-force -hierarchical -report_unconstrained}] options positional
    set file [expr {[dict exists $options -file] ? [dict get $options -file] : [lindex $positional end]}]
    stub_check {$file ne ""} "$command: no file"
    stub_check {[file isdirectory [file dirname $file]]} "$command: [file dirname $file] does not exist"
    set f [open $file w]
    puts $f "stub $command"
    close $f
}
proc write_checkpoint {args} { stub_write_file write_checkpoint $args }
foreach command {report_utilization report_timing_summary report_clock_interaction report_cdc report_drc} {
    proc $command {args} "stub_write_file $command \$args"
}
proc write_bitstream {args} {
    stub_check {[stub_state stage] eq "routed"} "write_bitstream before route_design"
    stub_write_file write_bitstream $args
}

proc get_timing_paths {args} {
    stub_check {[stub_state stage] eq "routed"} "get_timing_paths before route_design"
    lassign [stub_options $args {}] options positional
    return "path_[dict get $options -delay_type]"
}

# ---- Netlist objects and clocks ----------------------------------------------------------------

proc get_nets {args} {
    set name [lindex $args end]
    stub_check {[regexp "\\m$name\\M" $::modules([stub_state top])]} "get_nets: no net $name in [stub_state top]"
    return "net:$name"
}

proc get_clocks {args} {
    lassign [stub_options $args {-quiet}] options positional
    if {[dict exists $options -of_objects]} {
        set object [dict get $options -of_objects]
        # XDMA drives axi_aclk at its AXI4-Stream frequency.
        stub_check {$object eq "net:axi_aclk"} "get_clocks -of_objects: only axi_aclk is modelled, not $object"
        set xdma [lindex [stub_state ips] 0]
        set ::clock_period(axi_aclk) [expr {1000.0 / $::props($xdma,CONFIG.axisten_freq)}]
        return axi_aclk
    }
    set name [lindex $positional 0]
    if {[info exists ::clock_period($name)]} { return $name }
    return ""
}

proc get_property {key object} {
    if {$key eq "SLACK"} {
        set which [expr {$object eq "path_max" ? "WNS" : "WHS"}]
        return [expr {[info exists ::env(ECRT_STUB_$which)] ? $::env(ECRT_STUB_$which) : 0.100}]
    }
    if {$key eq "PERIOD"} {
        stub_check {[info exists ::clock_period($object)]} "get_property PERIOD: no clock $object"
        return [format %.3f $::clock_period($object)]
    }
    stub_check {[info exists ::props($object,$key)]} "get_property: $key of $object was never set"
    return $::props($object,$key)
}

# Evaluates an XDC file against the synthesized design: each object it names must exist.
proc stub_apply_xdc {file} {
    set xdc [interp create]
    foreach command {set_property create_clock create_generated_clock set_false_path set_max_delay
                     get_ports get_cells get_pins get_nets get_clocks current_design} {
        $xdc alias $command stub_xdc_$command
    }
    set f [open $file]
    set text [read $f]
    close $f
    if {[catch {$xdc eval $text} message]} {
        interp delete $xdc
        error "$file: $message"
    }
    interp delete $xdc
}

proc stub_xdc_current_design {} { return design_1 }
proc stub_xdc_set_property {args} {
    stub_check {[llength $args] == 3 && [lindex $args 2] ne ""} "XDC set_property $args: no object"
}
proc stub_xdc_get_ports {pattern} {
    set escaped [string map {[ \\[ ] \\]} $pattern]
    set found [lsearch -all -inline -glob [stub_top_ports] $escaped]
    stub_check {[llength $found] > 0} "XDC get_ports $pattern: no such port of [stub_state top]"
    return [lmap p $found {string cat port: $p}]
}
proc stub_xdc_get_cells {path} {
    stub_check {[stub_instance_type $path] ne ""} "XDC get_cells $path: no such cell"
    return "cell:$path"
}
# Pins of the primitives the constraints name.
array set ::primitive_pins {
    MMCME2_BASE {CLKIN1 CLKFBIN CLKOUT0 CLKFBOUT LOCKED}
}
proc stub_xdc_get_pins {path} {
    set cell [join [lrange [split $path /] 0 end-1] /]
    set type [stub_instance_type $cell]
    stub_check {$type ne ""} "XDC get_pins $path: no cell $cell"
    stub_check {[info exists ::primitive_pins($type)] && [lindex [split $path /] end] in $::primitive_pins($type)} "XDC get_pins $path: no such pin of $type"
    return "pin:$path"
}
proc stub_xdc_get_nets {name} { return [get_nets $name] }
proc stub_xdc_get_clocks {args} {
    set clock [get_clocks {*}$args]
    stub_check {$clock ne ""} "XDC get_clocks $args: no such clock"
    return $clock
}
proc stub_xdc_create_clock {args} {
    lassign [stub_options $args {-add}] options positional
    stub_check {[dict exists $options -name] && [dict exists $options -period]} "create_clock: -name and -period"
    stub_check {[string match port:* [lindex $positional 0]]} "create_clock: on a port"
    set ::clock_period([dict get $options -name]) [dict get $options -period]
    stub_log "clock [dict get $options -name] [dict get $options -period]"
}
# A generated clock on an MMCM output: Vivado derives its period from the MMCM's settings.
proc stub_xdc_create_generated_clock {args} {
    lassign [stub_options $args {}] options positional
    set pin [lindex $positional 0]
    stub_check {[regexp {^pin:(.*)/CLKOUT0$} $pin whole mmcm]} "create_generated_clock: only on an MMCM's CLKOUT0"
    set period [expr {[stub_instance_parameter $mmcm CLKIN1_PERIOD] * [stub_instance_parameter $mmcm DIVCLK_DIVIDE]
        * [stub_instance_parameter $mmcm CLKOUT0_DIVIDE_F] / [stub_instance_parameter $mmcm CLKFBOUT_MULT_F]}]
    set ::clock_period([dict get $options -name]) $period
    stub_log "clock [dict get $options -name] [format %.3f $period]"
}
proc stub_xdc_set_false_path {args} {
    lassign [stub_options $args {}] options positional
    stub_check {[dict exists $options -from] || [dict exists $options -to]} "set_false_path: -from or -to"
}
proc stub_xdc_set_max_delay {args} {
    lassign [stub_options $args {-datapath_only}] options positional
    stub_check {[dict exists $options -from] && [dict exists $options -to]} "set_max_delay: -from and -to"
    stub_check {[string is double -strict [lindex $positional 0]] && [lindex $positional 0] > 0} "set_max_delay: a positive delay"
    stub_log "max_delay [dict get $options -from] [dict get $options -to] [lindex $positional 0]"
}

# ---- Hardware manager (program.tcl) ------------------------------------------------------------

proc open_hw_manager {args} { stub_enter open_hw_manager $args; set ::stub(hw) open }
proc connect_hw_server {args} {
    stub_enter connect_hw_server $args
    stub_check {[stub_state hw] eq "open"} "connect_hw_server before open_hw_manager"
    set ::stub(hw) connected
}
proc open_hw_target {args} {
    stub_enter open_hw_target $args
    stub_check {[stub_state hw] eq "connected"} "open_hw_target before connect_hw_server"
    set ::stub(hw) target
}
proc get_hw_devices {args} {
    stub_check {[stub_state hw] eq "target"} "get_hw_devices before open_hw_target"
    set chain [expr {[info exists ::env(ECRT_STUB_JTAG)] ? $::env(ECRT_STUB_JTAG) : "xc7vx690t_0 xc7vx485t_0"}]
    if {[llength $args] == 0} { return $chain }
    return [lsearch -all -inline -glob $chain [lindex $args 0]]
}
proc current_hw_device {device} { stub_enter current_hw_device $device; set ::stub(device) $device }
proc refresh_hw_device {args} { stub_enter refresh_hw_device $args }
proc program_hw_devices {device} {
    stub_enter program_hw_devices $device
    stub_check {[info exists ::props($device,PROGRAM.FILE)]} "program_hw_devices: PROGRAM.FILE not set"
    stub_check {[file isfile $::props($device,PROGRAM.FILE)]} "program_hw_devices: $::props($device,PROGRAM.FILE) does not exist"
}
proc close_hw_target {args} { stub_enter close_hw_target $args }
proc disconnect_hw_server {args} { stub_enter disconnect_hw_server $args }

# ---- Run the script ----------------------------------------------------------------------------

set script [lindex $argv 0]
set argv [lrange $argv 1 end]
set argc [llength $argv]
set argv0 $script
source $script
