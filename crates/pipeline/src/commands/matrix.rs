//! `matrix`.
