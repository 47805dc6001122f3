# Prints the ecrt(...) values that a params.tcl sets, one `key=value` a line (hdl/tests/integration/board.rs).
source [lindex $argv 0]
foreach key [lsort [array names ecrt]] {
    puts "$key=$ecrt($key)"
}
