//! Running a plan: the executor (`executor`: steps in order, skipped when unchanged), its step
//! runner (`runner`: step dispatch), the SDK a step needs (`sdk_env`: found once, its
//! placeholders and environment filled in), the bundle job a plan's bundle step hands to the
//! bundler (`bundle_job`), a plan's inputs downloaded into the cache (`input_download`), a
//! patch series checked or applied (`patch_series`), a GPU SDK installed unattended
//! (`sdk_install`), `build-info.json` (`info`), ninja progress (`progress`) and the toolchain
//! checks (`toolchain`).

pub mod bundle_job;
pub mod copy_dlls;
pub mod executor;
pub mod info;
pub mod input_download;
pub mod jobs;
pub mod long_paths;
pub mod patch_series;
pub mod progress;
pub(crate) mod readiness;
pub mod runner;
pub(crate) mod sdk_env;
pub mod sdk_install;
pub mod toolchain;

pub(crate) use info::BUILD_INFO;
pub(crate) use runner::Runner;
