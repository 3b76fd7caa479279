//! The command line: parse, run the command (`xtask::cmd`), map errors to exit codes.

use std::process::ExitCode;

use clap::Parser;

use xtask::cli::Cli;
use xtask::inputs::download;
use xtask::support::diagnostic::{InputError, printable};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match xtask::cmd::run(cli) {
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
