//! Getting what a build reads: the content-addressed cache, downloads, pins, unpacking
//! archives, the wheelhouse, patches and their series.

pub mod cache;
pub mod download;
pub mod patch;
pub mod pin;
pub mod unpack;
pub mod wheelhouse;
