//! The fetch crate's integration tests: its public API against real archives, a misbehaving
//! loopback server and the cuBLAS loader its patch adds. One binary (one link), a module per
//! area; `common/` holds what they share (and what xtask's tests include from here). They run
//! on a Linux host.
#![cfg(unix)]

mod common;

mod archive_fuzz;
mod cublas_loader;
mod download;
