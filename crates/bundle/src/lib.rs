//! Binaries and wheels: reading PE/ELF, bundling the libraries a wheel loads, writing wheels
//! and their checksums; the AMD GPU targets a bundle's data is filtered by
//! (`gpu_targets`).

pub mod binary;
pub mod bundler;
pub mod checksums;
pub mod gpu_targets;
pub mod kpack;
pub mod wheel;
