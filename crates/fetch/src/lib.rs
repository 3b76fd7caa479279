//! Getting what a build reads: the content-addressed cache, downloads, unpacking archives,
//! the wheelhouse, patches and their series; whether a download is the kind of file it
//! claims to be (`payload`); GitHub tag sources with their submodules (`github`,
//! `gitmodules`, `assemble`); what a wheel's file name says (PEP 427, `wheel_name`) and its
//! RECORD (`wheel_record`), a wheel found on a PEP 503 index page (`index_page`) and such
//! pages written (`pep503`).

pub mod assemble;
pub mod cache;
pub mod download;
pub mod github;
pub mod gitmodules;
pub mod index_page;
pub mod patch;
pub mod payload;
pub mod pep503;
pub mod unpack;
pub mod wheel_name;
pub mod wheel_record;
pub mod wheelhouse;
