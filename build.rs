//! Integration scenarios run against the fake Solr always, and against a real Solr when `SOLR_URL` is
//! set at build time: this turns that into `cfg(real_solr)`, so the real-Solr tests show as ignored
//! (not as passed) when there is none.

fn main() {
    println!("cargo::rerun-if-env-changed=SOLR_URL");
    println!("cargo::rustc-check-cfg=cfg(real_solr)");
    if std::env::var_os("SOLR_URL").is_some_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=real_solr");
    }
}
