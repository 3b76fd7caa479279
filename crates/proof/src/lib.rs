//! What a built wheel does: numerics, speed, real speech (natively, and with the `wine`
//! feature in a Windows CPython under wine), PyApp, a release installed as users install it.
//! Each check is written once over an [`interpreter::Interpreter`] (`checks/`).

pub mod checks;
pub mod commands;
pub(crate) mod input_file;
pub(crate) mod interpreter;
pub mod numerics;
pub(crate) mod plan_outputs;
#[cfg(feature = "wine")]
pub mod pyapp;
pub(crate) mod release_install;
pub mod serve;
pub mod speech;
pub mod winpython;
