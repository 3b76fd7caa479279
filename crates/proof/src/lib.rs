//! What a built wheel does: numerics, speed, real speech (Linux and a Windows CPython under
//! wine), PyApp, a release installed as users install it.

pub mod bench;
pub mod input_file;
pub mod numerics;
pub mod pyapp;
pub mod release_install;
pub mod serve;
pub mod speech;
pub mod winpython;
