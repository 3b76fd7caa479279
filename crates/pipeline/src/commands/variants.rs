//! `variants`.
