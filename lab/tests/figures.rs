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

/// Every record of docs/figures/, each report file and each report of recorded.json, reads
/// through its kind's struct (the page above could not render otherwise); a malformed one fails,
/// naming its file.
#[test]
fn every_record_reads_as_its_kind() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/figures");
    let records = ecrt_lab::figures::load(&dir).unwrap_or_else(|e| panic!("{e:#}"));
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".json") && !name.ends_with(".meta.json") && name != "recorded.json" {
            files += 1;
            assert!(records.iter().any(|r| r.path == format!("docs/figures/{name}")), "{name} was not loaded");
        }
    }
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("recorded.json")).unwrap()).unwrap();
    assert_eq!(records.len(), files + recorded["records"].as_array().unwrap().len());

    // A report file with a figure of the wrong type, then a recorded report lacking one.
    let bad = tempfile::tempdir().unwrap();
    let mut cpu: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cpu-2048.json")).unwrap()).unwrap();
    cpu["thread_scaling"] = "fast".into();
    std::fs::write(bad.path().join("cpu-2048.json"), cpu.to_string()).unwrap();
    let error = format!("{:#}", ecrt_lab::figures::load(bad.path()).unwrap_err());
    assert!(error.contains("docs/figures/cpu-2048.json") && error.contains("bench-cpu"), "{error}");
    std::fs::remove_file(bad.path().join("cpu-2048.json")).unwrap();
    // A FATE bench report whose passes are not the four fixed ones (as a --threads in a pass's name).
    let mut fate: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("fate-2048.json")).unwrap()).unwrap();
    let passes = fate["per_decryption_us"].as_object_mut().unwrap();
    let all = passes.remove("ecrt_all_threads").unwrap();
    passes.insert("ecrt_2_threads".into(), all);
    std::fs::write(bad.path().join("fate-2048.json"), fate.to_string()).unwrap();
    let error = format!("{:#}", ecrt_lab::figures::load(bad.path()).unwrap_err());
    assert!(error.contains("docs/figures/fate-2048.json") && error.contains("ecrt_all_threads"), "{error}");
    std::fs::remove_file(bad.path().join("fate-2048.json")).unwrap();
    let recorded = r#"{"records": [{"name": "old-host", "kind": "bench-xdma", "report": {"backend": "xdma"}}]}"#;
    std::fs::write(bad.path().join("recorded.json"), recorded).unwrap();
    let error = format!("{:#}", ecrt_lab::figures::load(bad.path()).unwrap_err());
    assert!(error.contains("recorded.json, old-host") && error.contains("missing field"), "{error}");
}
