//! Fetch benchmarks, each a ratio against the obvious alternative run in the same process:
//! - sha256 of a 1 GiB file: `cache::sha256_file` vs `sha256sum`;
//! - a 1 GiB download from a loopback server: `download::fetch_all` (which also hashes and
//!   verifies) vs `curl -o`;
//! - `cargo xtask fetch --variant cpu` with a warm cache (wall time of the whole process).
//!
//! Run with `cargo bench --bench fetch`; results are printed as Markdown for BENCHMARKS.md.
//! Each side runs `ROUNDS` times, alternating; the best time of each counts.

mod common;
#[path = "../../crates/fetch/tests/it/common/server.rs"]
mod server;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use common::{ROUNDS, best_of, print_header, row, run_quiet, seconds, timed};
use ct2v_fetch::cache::{self, Cache, Pin};
use ct2v_fetch::download::{self, Options, Request};
use server::Server;

const GIB: usize = 1 << 30;

fn main() {
    let scratch = tempfile::Builder::new()
        .prefix("bench-fetch-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let data = Arc::new(pseudo_random(GIB));
    let file = scratch.path().join("one-gib.bin");
    std::fs::write(&file, &*data).unwrap();

    print_header();

    let (ours, theirs) = best_of(
        || {
            cache::sha256_file(&file).unwrap();
        },
        || run_quiet(Command::new("sha256sum").arg(&file)),
    );
    row(
        "sha256 of 1 GiB (page cache warm)",
        ours,
        "sha256sum",
        theirs,
    );

    let server = Server::start();
    server.serve("/one-gib.bin", data.clone());
    let url = server.url("/one-gib.bin");
    let (sha256, size) = cache::sha256_file(&file).unwrap();
    let request = Request {
        name: "one-gib".into(),
        pin: Pin {
            url: url.clone(),
            sha256,
            size: Some(size),
            file_name: "one-gib.bin".into(),
        },
    };
    let options = Options {
        progress: false,
        ..Options::default()
    };
    let cache_dir = scratch.path().join("cache");
    let curl_out = scratch.path().join("curl.bin");
    let (ours, theirs) = best_of(
        || {
            let _ = std::fs::remove_dir_all(&cache_dir);
            download::fetch_all(
                &Cache::new(&cache_dir),
                std::slice::from_ref(&request),
                &options,
            )
            .unwrap();
        },
        || {
            let _ = std::fs::remove_file(&curl_out);
            run_quiet(
                Command::new("curl")
                    .args(["-sSf", "-o"])
                    .arg(&curl_out)
                    .arg(&url),
            );
        },
    );
    row(
        "download 1 GiB from loopback (ours also sha256-verifies)",
        ours,
        "curl -o",
        theirs,
    );

    let xtask = Path::new(env!("CARGO_BIN_EXE_xtask"));
    let fetch_cpu = || {
        run_quiet(Command::new(xtask).args(["fetch", "--variant", "cpu"]));
    };
    fetch_cpu(); // Fills the cache when it is cold (needs crates.io once).
    let warm = (0..ROUNDS).map(|_| timed(fetch_cpu)).min().expect("rounds");
    println!(
        "| `cargo xtask fetch --variant cpu`, warm cache (whole process, 2 inputs, 13.7 MiB re-verified) | {} | (target: under 1 s) | - |",
        seconds(warm)
    );
}

fn pseudo_random(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.extend_from_slice(&state.to_le_bytes());
    }
    out.truncate(len);
    out
}
