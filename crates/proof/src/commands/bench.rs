//! `bench`.
