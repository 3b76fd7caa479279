//! ct2-variants: builds, bundles and releases every variant of CTranslate2.
//!
//! `main.rs` only parses (`cli`: the command table and its dispatch), runs the command
//! (`cmd`, one file per command: its flags and one call into the crates; `flags`: the flag
//! groups several commands share) and maps errors to exit codes. The library is the
//! workspace's crates, each using only those below it: `ct2v-support` → `ct2v-fetch` →
//! `ct2v-bundle` → `ct2v-pipeline` → `ct2v-proof` and `ct2v-upkeep` (docs/ARCHITECTURE.md);
//! they are re-exported here under the module paths they had in this crate
//! (`xtask::inputs`, `xtask::package`…), which the integration tests use.

pub mod cli;
pub mod cmd;
pub mod flags;

pub use ct2v_bundle as package;
pub use ct2v_bundle::gpu_targets;
pub use ct2v_fetch as inputs;
pub use ct2v_pipeline::{build, doctor, plan, release, sdk, variant};
pub use ct2v_proof as check;
pub use ct2v_support as support;
pub use ct2v_upkeep as upkeep;
