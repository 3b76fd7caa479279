//! What the bundle crate's tests share: real PE and ELF files (`binaries`, also included by
//! the library's unit tests), and the fetch crate's fuzz harness and skips, included from
//! there (one copy).

pub mod binaries;
// These tests use part of each shared helper; the other includers use the rest.
#[allow(dead_code)]
#[path = "../../../../fetch/tests/it/common/fuzz.rs"]
pub mod fuzz;
#[allow(dead_code)]
#[path = "../../../../fetch/tests/it/common/run.rs"]
mod run;
#[allow(dead_code)]
#[path = "../../../../fetch/tests/it/common/skip.rs"]
pub mod skip;

pub use run::installed;
