//! Builds c-blosc2 from the sources the `blosc2-src` crate ships, against
//! the one zstd (zstd-sys), lz4 (lz4-sys) and deflate (flate2) the rest of
//! the program links: c-blosc2's own bundled copies of those libraries are
//! never compiled, so each codec's symbols are defined once.
//!
//! `blosc2-src` is only a build dependency, for its sources; its own
//! library (built without zstd or zlib) is never linked. Its directory is
//! where cargo unpacked it (a build of any member downloads it, being this
//! crate's build dependency), or failing that what `cargo metadata` says.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The release whose file layout this script knows (pinned in Cargo.toml).
const BLOSC2_SRC: &str = "blosc2-src";

/// Its version, as pinned in Cargo.toml.
const BLOSC2_SRC_VERSION: &str = "0.1.4";

/// The c-blosc2 directory of the `blosc2-src` package: where cargo unpacks
/// registry packages (`$CARGO_HOME/registry/src/<index>/<name>-<version>`),
/// else wherever `cargo metadata` says (a vendored or patched source).
fn blosc2_sources() -> PathBuf {
    let home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")));
    let unpacked = format!("{BLOSC2_SRC}-{BLOSC2_SRC_VERSION}");
    if let Some(Ok(indexes)) = home.map(|h| std::fs::read_dir(h.join("registry").join("src"))) {
        let mut found: Vec<PathBuf> = indexes
            .filter_map(|e| e.ok())
            .map(|e| e.path().join(&unpacked).join("c-blosc2"))
            .filter(|p| p.join("blosc").is_dir())
            .collect();
        found.sort();
        if let Some(p) = found.into_iter().next() {
            return p;
        }
    }
    from_metadata()
}

fn from_metadata() -> PathBuf {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap()).join("Cargo.toml");
    let target = env::var("TARGET").unwrap();
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--filter-platform",
        ])
        .arg(&target)
        .arg("--manifest-path")
        .arg(&manifest)
        .output()
        .expect("running cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cargo metadata JSON");
    let pkg = meta["packages"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == BLOSC2_SRC))
        .expect("blosc2-src among the packages");
    let path = Path::new(pkg["manifest_path"].as_str().expect("its manifest path"));
    path.parent().unwrap().join("c-blosc2")
}

fn c_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    files
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=csrc");
    let src = blosc2_sources();
    // Set by the `links` build scripts of the crates this one depends on.
    let zstd = env::var("DEP_ZSTD_INCLUDE").expect("zstd-sys exports its include directory");
    let lz4 = env::var("DEP_LZ4_INCLUDE").expect("lz4-sys exports its include directory");

    let mut build = cc::Build::new();
    build
        .files(c_files(&src.join("blosc")))
        .file("csrc/glue.c")
        .include(src.join("include"))
        .include(src.join("blosc"))
        // Our zlib.h first: c-blosc2's two zlib calls, answered in Rust.
        .include("csrc/zlib")
        .include(&zstd)
        .include(&lz4)
        .define("HAVE_LZ4", None)
        .define("HAVE_ZSTD", None)
        .define("HAVE_ZLIB", None)
        .opt_level(3)
        .warnings(false);
    if env::var("CARGO_CFG_TARGET_FEATURE").is_ok_and(|f| f.split(',').any(|x| x == "sse2")) {
        build.define("SHUFFLE_SSE2_ENABLED", "1").flag("-msse2");
    }
    if env::var("CARGO_CFG_TARGET_FEATURE").is_ok_and(|f| f.split(',').any(|x| x == "avx2")) {
        build.define("SHUFFLE_AVX2_ENABLED", "1").flag("-mavx2");
    }
    build.compile("arca_blosc2");
}
