//! `fetch`.
