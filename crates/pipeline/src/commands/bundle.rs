//! `bundle`.
