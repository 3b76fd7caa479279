//! `verify`.
