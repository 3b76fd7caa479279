//! The build: the executor's step runner (`runner`) and the bundle spec a plan's bundle step
//! hands to the bundler (`bundle_spec`).

pub mod bundle_spec;
pub mod runner;

pub use runner::{BUILD_INFO, Runner};
