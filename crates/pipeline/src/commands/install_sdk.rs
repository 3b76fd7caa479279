//! `install-sdk`.
