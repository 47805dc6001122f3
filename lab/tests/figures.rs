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

/// README's table of figures is the figures page's summary, between its markers.
#[test]
fn readme_figures_are_current() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let table = ecrt_lab::figures::render_readme_summary(&root.join("docs/figures")).expect("the records render");
    let path = root.join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let begin = "<!-- figures summary: generated from docs/figures/ (lab/src/figures.rs), do not edit -->\n";
    let start = readme.find(begin).expect("README's begin marker") + begin.len();
    let stop = readme.find("<!-- /figures summary -->").expect("README's end marker");
    if std::env::var_os("ECRT_UPDATE_DOCS").is_some() {
        std::fs::write(&path, format!("{}{table}{}", &readme[..start], &readme[stop..])).unwrap();
        return;
    }
    assert!(
        readme[start..stop] == table,
        "README's figures are not the records' summary: regenerate them with \
         `ECRT_UPDATE_DOCS=1 cargo test -p ecrt-lab --test figures`"
    );
}
