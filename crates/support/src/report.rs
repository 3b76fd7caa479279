//! Where a command's words go: its result on stdout, progress and warnings on stderr.
//!
//! A command (`src/commands/<name>.rs` of its crate) makes one `Reporter` and hands it down;
//! the stages below say what they do through it and print nothing themselves, so a test can
//! run a stage with [`Reporter::captured`] and read what it said. A result line that cannot be
//! written (`xtask matrix | head -n1`) is an error the binary turns into a quiet exit 0; a
//! progress line that cannot be written is dropped, never a panic.

use std::fmt::{self, Display};
use std::io::{self, IsTerminal, Write};
use std::sync::{Arc, Mutex, PoisonError};

use indicatif::ProgressDrawTarget;

/// The one sink a command's output goes through; cheap to clone (clones share the sink).
#[derive(Clone)]
pub struct Reporter {
    sink: Arc<Sink>,
}

enum Sink {
    Std,
    Captured(Mutex<Said>),
}

/// What a [`Reporter::captured`] was told: `out` is what stdout would hold, `err` stderr.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Said {
    pub out: String,
    pub err: String,
}

impl Reporter {
    /// The process's stdout and stderr.
    pub fn std() -> Reporter {
        Reporter {
            sink: Arc::new(Sink::Std),
        }
    }

    /// Keeps everything said in memory, for [`Reporter::said`].
    pub fn captured() -> Reporter {
        Reporter {
            sink: Arc::new(Sink::Captured(Mutex::default())),
        }
    }

    /// What was said so far (empty for [`Reporter::std`]).
    pub fn said(&self) -> Said {
        match &*self.sink {
            Sink::Std => Said::default(),
            Sink::Captured(said) => said_mut(said).clone(),
        }
    }

    /// One line of progress or status on stderr.
    pub fn say(&self, line: impl Display) {
        match &*self.sink {
            Sink::Std => {
                let _ = writeln!(io::stderr().lock(), "{line}");
            }
            Sink::Captured(said) => push_line(&mut said_mut(said).err, line),
        }
    }

    /// `warning: <line>` on stderr.
    pub fn warn(&self, line: impl Display) {
        self.say(format_args!("warning: {line}"));
    }

    /// One line of the command's result on stdout.
    pub fn outln(&self, line: impl Display) -> io::Result<()> {
        match &*self.sink {
            Sink::Std => writeln!(io::stdout().lock(), "{line}"),
            Sink::Captured(said) => {
                push_line(&mut said_mut(said).out, line);
                Ok(())
            }
        }
    }

    /// Part of the command's result on stdout, as written (no newline added).
    pub fn out(&self, text: impl Display) -> io::Result<()> {
        match &*self.sink {
            Sink::Std => write!(io::stdout().lock(), "{text}"),
            Sink::Captured(said) => {
                said_mut(said).out.push_str(&text.to_string());
                Ok(())
            }
        }
    }

    /// Where progress bars are drawn: stderr when it is a terminal, else `None` (then progress
    /// is said in plain lines).
    pub fn bars(&self) -> Option<ProgressDrawTarget> {
        match &*self.sink {
            Sink::Std if io::stderr().is_terminal() => Some(ProgressDrawTarget::stderr()),
            _ => None,
        }
    }
}

impl fmt::Debug for Reporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match &*self.sink {
            Sink::Std => "Reporter::std",
            Sink::Captured(_) => "Reporter::captured",
        })
    }
}

fn said_mut(said: &Mutex<Said>) -> std::sync::MutexGuard<'_, Said> {
    said.lock().unwrap_or_else(PoisonError::into_inner)
}

fn push_line(into: &mut String, line: impl Display) {
    use fmt::Write as _;
    let _ = writeln!(into, "{line}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_captured_reporter_keeps_results_and_progress_apart_and_shares_them_with_clones() {
        let reporter = Reporter::captured();
        let clone = reporter.clone();
        reporter.outln("one").unwrap();
        clone.out(format_args!("{}-{}", 2, 3)).unwrap();
        clone.say("working");
        reporter.warn(format_args!("{} left", 1));
        assert_eq!(
            reporter.said(),
            Said {
                out: "one\n2-3".into(),
                err: "working\nwarning: 1 left\n".into(),
            }
        );
        assert!(
            reporter.bars().is_none(),
            "a captured reporter draws no bars"
        );
        assert_eq!(format!("{clone:?}"), "Reporter::captured");
    }

    #[test]
    fn the_std_reporter_remembers_nothing() {
        let reporter = Reporter::std();
        reporter.say("to stderr");
        assert_eq!(reporter.said(), Said::default());
    }
}
