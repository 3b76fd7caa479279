//! SHA256SUMS over about 2 GiB of artifacts: `checksums::write` (parallel across files)
//! against `sha256sum` over the same files, in the same run. Run with
//! `cargo bench --bench checksums`.

mod common;

use std::process::Command;

use common::{best_of, print_header, row, run_quiet};

const FILES: usize = 8;
const FILE_SIZE: usize = 256 << 20;

fn main() {
    let dir = tempfile::Builder::new()
        .prefix("bench-checksums-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut names = Vec::new();
    for i in 0..FILES {
        let mut data = Vec::with_capacity(FILE_SIZE);
        while data.len() < FILE_SIZE {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            data.extend_from_slice(&state.to_le_bytes());
        }
        let name = format!("artifact-{i}.whl");
        std::fs::write(dir.path().join(&name), &data).unwrap();
        names.push(name);
    }
    let jobs = ct2v_bundle::checksums::default_jobs();
    print_header();
    let (ours, theirs) = best_of(
        || {
            ct2v_bundle::checksums::write(dir.path(), jobs).unwrap();
        },
        || {
            run_quiet(
                Command::new("sha256sum")
                    .args(&names)
                    .current_dir(dir.path()),
            );
        },
    );
    row(
        &format!("SHA256SUMS of {FILES} files, 2 GiB ({jobs} threads; page cache warm)"),
        ours,
        "sha256sum",
        theirs,
    );
    let per_core = theirs.as_secs_f64() / (ours.as_secs_f64() * jobs as f64);
    println!("per core: {per_core:.2}× sha256sum's speed");
}
