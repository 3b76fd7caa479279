//! The command line: parse, run the command (`cmd`), map errors to exit codes.
//!
//! `cli` is the command table and its dispatch, `cmd` one file per command (its flags and one
//! call into the same name in a crate's `commands/`, handed the one `Reporter`), `flags` the
//! flag groups several commands share. The work is the workspace's crates, each using only
//! those below it: `ct2v-support` → `ct2v-fetch` → `ct2v-bundle` → `ct2v-pipeline` →
//! `ct2v-proof` and `ct2v-upkeep` (docs/ARCHITECTURE.md);
//! the integration tests (`xtask/tests`) run this binary and import those crates by name.

mod cli;
mod cmd;
mod flags;

use std::process::ExitCode;

use clap::Parser;
use clap::error::{ContextKind, ContextValue};

use ct2v_fetch::download;
use ct2v_support::diagnostic::{InputError, printable};
use ct2v_support::report::Reporter;
use ct2v_support::text_rules::{Refusal, refused};

use crate::cli::Cli;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return usage_error(err),
    };
    match cli.run(&Reporter::std()) {
        Ok(code) => code,
        Err(err) if stdout_closed(&err) => ExitCode::SUCCESS,
        Err(err) => match err.downcast_ref::<InputError>() {
            Some(input) => {
                eprint!("error: {}", printable(&input.to_string()));
                ExitCode::from(2)
            }
            None => {
                eprintln!("error: {}", printable(&download::describe(err.as_ref())));
                ExitCode::from(1)
            }
        },
    }
}

/// Whether `err` is stdout's reader having gone away (`xtask matrix | head -n1`): what the
/// reader wanted has been written, so this is no failure (as for `ls | head`).
fn stdout_closed(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// A flag's value refused by its rule (`cli::checked`) is said as all bad input is: the flag,
/// the value escaped and cut (clap would print it raw and whole), why and what to give; exit
/// 2. Anything else is clap's own message (help and the version on stdout, exit 0; an unknown
/// flag or a value not among the choices, exit 2), its values escaped as every message's are.
fn usage_error(err: clap::Error) -> ExitCode {
    let refusal = std::error::Error::source(&err).and_then(|e| e.downcast_ref::<Refusal>());
    match (
        refusal,
        err.get(ContextKind::InvalidArg),
        err.get(ContextKind::InvalidValue),
    ) {
        (Some(refusal), Some(ContextValue::String(arg)), Some(ContextValue::String(value))) => {
            // clap names the argument with its value name: `--tag <TAG>`.
            let flag = arg.split(' ').next().unwrap_or(arg);
            eprint!(
                "error: {}",
                printable(&refused(flag, value, refusal).to_string())
            );
            ExitCode::from(2)
        }
        _ if !err.use_stderr() => err.exit(),
        _ => {
            eprint!("{}", printable(&err.render().to_string()));
            ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2))
        }
    }
}
