//! `plan`.
