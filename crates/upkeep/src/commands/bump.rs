//! `bump`.
