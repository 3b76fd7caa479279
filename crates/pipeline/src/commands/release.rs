//! `release`.
