//! The bundle crate's integration tests: its PE and ELF readers against tens of thousands of
//! damaged real binaries. `common/` holds the fixtures (shared with xtask's tests). They run
//! on a Linux host.
#![cfg(unix)]

mod common;

mod binary_fuzz;
