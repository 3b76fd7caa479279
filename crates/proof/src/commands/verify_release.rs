//! `verify-release`.
