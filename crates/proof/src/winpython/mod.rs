//! A Windows wheel checked where Windows users run it, on a Linux host: python.org's
//! embeddable CPython (pinned, signatures checked) under wine, installing, importing,
//! transcribing with and freezing what we ship. On Windows itself the same commands run
//! natively (a venv of the machine's Python), and none of this is used.
//!
//! - `pins.rs`: `variants/windows/python.toml`, the pinned interpreters;
//! - `prepare.rs`: one interpreter made usable (fetched, unpacked, signatures, pip);
//! - `signature.rs`: the Authenticode check;
//! - `wine.rs`: the prefix, the accommodations wine 8 needs, bounded runs;
//! - `session.rs`: a fresh copy of one interpreter in a fresh prefix, for one check.
//!
//! All but the pins (`pins.rs`) and [`under_wine`] compile only with the `wine` feature.

#[cfg(feature = "wine")]
pub(crate) mod diagnose;
pub mod pins;
#[cfg(feature = "wine")]
pub(crate) mod prepare;
#[cfg(feature = "wine")]
mod session;
#[cfg(feature = "wine")]
pub mod signature;
#[cfg(feature = "wine")]
pub mod wine;

#[cfg(feature = "wine")]
pub(crate) use prepare::WindowsPython;
#[cfg(feature = "wine")]
pub(crate) use session::STEP_LIMIT;
#[cfg(feature = "wine")]
pub use session::Session;

use ct2v_support::diagnostic::InputError;
use ct2v_support::platform::Platform;

/// Whether a check of a `platform` wheel on this host runs under wine.
pub(crate) fn under_wine(platform: Platform) -> bool {
    platform.is_windows() && Platform::host() != Some(platform)
}

/// Whether this binary has the wine harness (the `wine` feature).
pub(crate) const HARNESS: bool = cfg!(feature = "wine");

/// The error for `what` (a check that runs under wine) in a binary built without the harness.
pub(crate) fn harness_missing(what: &str) -> InputError {
    InputError::new(format!(
        "{what} runs under wine, and this binary was built without the `wine` feature"
    ))
    .note("build it with the feature: cargo run -p xtask --features wine -- …")
}
