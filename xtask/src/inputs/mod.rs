//! Getting what a build reads: the content-addressed cache, downloads, pins, unpacking
//! archives, the wheelhouse, patches and their series; whether a download is the kind of file
//! it claims to be (`payload`); GitHub tag sources with their submodules (`github`,
//! `gitmodules`, `assemble`).

pub mod assemble;
pub mod cache;
pub mod download;
pub mod github;
pub mod gitmodules;
pub mod patch;
pub mod payload;
pub mod pin;
pub mod unpack;
pub mod wheelhouse;
