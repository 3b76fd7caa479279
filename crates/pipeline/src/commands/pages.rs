//! `pages`.
