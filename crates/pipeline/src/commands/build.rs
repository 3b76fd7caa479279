//! `build`.
