//! The bundler: which SDK libraries a build needs, where they go, and where each came from.
//! Usable without a plan (`bundle --wheel`); the build's job from a plan is
//! `ct2v_pipeline::execute::bundle_job`.

pub(crate) mod analyze;
pub mod closure;
pub mod data;
pub mod glob;
pub mod job;
pub mod layout;
pub mod manylinux;
pub mod policy;
pub(crate) mod repair;
pub mod report;
pub mod run;
pub mod runpath;

pub use policy::{Output, Policy};
