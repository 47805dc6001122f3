//! docs/figures.md is what `ecrt_lab::figures::render` makes of the records in docs/figures/;
//! `ECRT_UPDATE_DOCS=1` rewrites it.

use std::path::PathBuf;

#[test]
fn figures_page_is_current() {
    let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs");
    let text = ecrt_lab::figures::render(&docs.join("figures")).expect("the records render");
    let path = docs.join("figures.md");
    if std::env::var_os("ECRT_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "{} is not what figures::render makes of docs/figures/: regenerate it with \
         `ECRT_UPDATE_DOCS=1 cargo test -p ecrt-lab --test figures`",
        path.display()
    );
}
