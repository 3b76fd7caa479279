//! What the fetch crate's tests share. xtask's integration tests (and the bundle crate's)
//! include these files by path, one copy for all: they use only `std` and `ct2v_support`, and
//! reach their siblings through `super`, which each includer provides.

// These tests use part of each shared helper; xtask's tests use the rest.
#[allow(dead_code)]
pub mod fuzz;
#[allow(dead_code)]
pub mod mingw;
mod run;
pub mod server;
#[allow(dead_code)]
pub mod skip;

pub use run::{installed, run_ok, stdout_and_stderr};

pub fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
