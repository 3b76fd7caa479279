//! Binaries and wheels: reading PE/ELF, bundling the libraries a wheel loads, writing wheels
//! and their checksums.

pub mod binary;
pub mod bundle;
pub mod checksums;
pub mod wheel;
