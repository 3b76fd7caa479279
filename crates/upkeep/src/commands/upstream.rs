//! `upstream`.
