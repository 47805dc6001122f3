//! Marks builds on a machine with an XDMA device (`/dev/xdma*`), so that the board tests run
//! there and are ignored elsewhere.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(xdma_board)");
    println!("cargo::rerun-if-changed=/dev");
    let has_board = std::fs::read_dir("/dev")
        .map(|entries| entries.flatten().any(|e| e.file_name().to_string_lossy().starts_with("xdma")))
        .unwrap_or(false);
    if has_board {
        println!("cargo::rustc-cfg=xdma_board");
    }
}
