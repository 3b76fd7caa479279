//! ct2-variants: builds, bundles and releases every variant of CTranslate2.
//!
//! `main.rs` only parses (`cli`), runs the command (`cmd`, one file per command) and maps errors
//! to exit codes; everything lives here, one module per job.

pub mod bench;
pub mod binary;
pub mod build;
pub mod bump;
pub mod bundle;
pub mod cache;
pub mod checksums;
pub mod cli;
pub mod cmd;
pub mod copy_dlls;
pub mod diagnostic;
pub mod doctor;
pub mod download;
pub mod exec;
pub mod fetch;
pub mod fsx;
pub mod gfx;
pub mod host;
pub mod longpaths;
pub mod matrix;
pub mod numerics;
pub mod out_folder;
pub mod pages;
pub mod patch;
pub mod patches;
pub mod paths;
pub mod pep503;
pub mod pin;
pub mod plan;
pub mod platform;
pub mod process;
pub mod pyapp;
pub mod release;
pub mod release_install;
pub mod safe_path;
pub mod sdk;
pub mod serve;
pub mod speech;
pub mod staging;
pub mod units;
pub mod unpack;
pub mod variant;
pub mod wheel;
pub mod wheel_name;
pub mod wheelhouse;
pub mod winpython;
pub mod workspace;
