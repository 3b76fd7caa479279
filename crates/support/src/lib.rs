//! What every stage uses and that knows nothing of CTranslate2: errors for people
//! (`diagnostic`), safe file-system moves, paths, processes, the host, the workspace.

pub mod contracts;
pub mod diagnostic;
pub mod digest;
pub mod fsx;
pub mod host;
pub mod longpaths;
pub mod markdown;
pub mod out_folder;
pub mod out_lock;
pub mod owned_output;
pub mod paths;
pub mod platform;
pub mod process;
pub mod regular_file;
pub mod report;
pub mod safe_path;
pub mod staging;
pub mod text_rules;
pub mod units;
pub mod workspace;
