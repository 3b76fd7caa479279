//! ct2-variants: builds, bundles and releases every variant of CTranslate2.
//!
//! `main.rs` only parses (`cli`), runs the command (`cmd`, one file per command) and maps errors
//! to exit codes. The library is one folder per stage, each using only the stages before it:
//! `support` → `inputs` → `package` → `variant`, `sdk` → `plan` → `build` → `release` →
//! `check`, and `cmd`/`doctor` on top (docs/ARCHITECTURE.md).

pub mod build;
pub mod check;
pub mod cli;
pub mod cmd;
pub mod doctor;
pub mod gpu_targets;
pub mod inputs;
pub mod package;
pub mod plan;
pub mod release;
pub mod sdk;
pub mod support;
pub mod variant;
