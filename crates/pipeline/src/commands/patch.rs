//! `patch`.
