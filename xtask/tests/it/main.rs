//! The integration tests: one binary (one link), a module per area. `common/` holds what
//! several of them share: running the real `xtask` binary, fixtures, loopback servers, skips.
//! They run on a Linux host, which drives the Windows binary under wine too (`windows_exe`);
//! built for Windows the binary is empty (the unit tests run there, under wine).
#![cfg(unix)]

mod common;

mod amd_status;
mod architecture;
mod bad_strings;
mod bundle_audit;
mod bundle_elf;
mod bundle_real;
mod bundle_wine;
mod ci_docs;
mod cli_flags;
mod concurrency_and_faults;
mod contracts;
mod doctor;
mod download_memory;
mod fetch_pin;
mod github_tag_source;
mod gpu_data;
mod gpu_machines;
mod gpu_select;
mod hip_sdk_bundle;
mod hostile_files;
mod hostile_servers;
mod input_fuzz;
mod install_layout;
mod install_sdk;
mod network;
mod owned_outputs;
mod ownership;
mod pages;
mod partial_release;
mod patch_check;
mod patch_hostile;
mod patch_safety;
mod plan;
mod probes;
mod published_text;
mod readme;
mod release;
mod retag;
mod rocm10_bundle;
mod rocm10_coexist;
mod rocm10_hip_runtime;
mod rocm_variant;
mod seam;
mod site_push;
mod speech;
mod tag_run;
mod test_skips;
mod upstream_check;
mod variant_errors;
mod variant_values;
mod verify_release;
mod versions;
mod windows_cpu_wheel;
mod windows_exe;
// The Windows Python harness's checks, in a binary built with it (`.ci/run` turns it on).
#[cfg(feature = "wine")]
mod windows_python;
mod workflow_actions;
mod workflow_disk;
mod workflows;
