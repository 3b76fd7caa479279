//! `smoke`.
