//! One file per command: its flags (clap) and a `run` that makes one call into the file of the
//! same name in a crate's `src/commands/`, which holds the request and all of its output.

pub mod bench;
pub mod build;
pub mod bump;
pub mod bundle;
pub mod doctor;
pub mod fetch;
pub mod install_sdk;
pub mod matrix;
pub mod pages;
pub mod patch;
pub mod pin;
pub mod plan;
pub mod release;
pub mod smoke;
pub mod upstream;
pub mod variants;
pub mod verify;
pub mod verify_release;
