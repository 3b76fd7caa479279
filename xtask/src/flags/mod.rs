//! The flag groups several commands share (clap): which build, which wheel a check looks at,
//! how downloads behave, which matrix entries; and the value rules flags are checked by.

mod bench;
mod download_args;
mod selection;
mod speech_args;
mod wheel_args;

use ct2v_support::text_rules::Refusal;

pub use bench::*;
pub use download_args::*;
pub use selection::*;
pub use speech_args::*;
pub use wheel_args::*;

/// A flag's value checked by `rule` as clap parses it: a refused value is bad input (exit 2)
/// that `main` names with its flag, before any work.
pub fn checked(
    rule: fn(&str) -> Result<(), Refusal>,
) -> impl Fn(&str) -> Result<String, Refusal> + Clone + Send + Sync + 'static {
    move |text: &str| rule(text).map(|()| text.to_string())
}
