//! A command as data (what a plan step runs, logged and fingerprinted) and running one: output
//! appended to the step's log, lines handed to a watcher (for ninja's `[n/m]` progress), and on
//! failure the log's last lines. Also running a program only to read what it prints (a
//! version, a path, its GPUs): [`capture`] and [`probe`], through the one bounded runner
//! ([`probe_bounded`]: a timeout, an output cap, its process group stopped). Depends on
//! nothing else in the crate, so that the plan, the executor and the wheelhouse can all use
//! it without depending on one another.

mod bounded;

pub use bounded::{Limits, Outcome, Probed, probe_bounded, probe_bounded_with_env, probe_each};

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};

use serde::Serialize;

/// A program, its arguments and its working folder, as data: shown, logged and fingerprinted
/// before (and whether or not) it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandLine {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: Option<String>,
}

impl CommandLine {
    pub fn new(program: impl Into<String>) -> CommandLine {
        CommandLine {
            program: program.into(),
            args: Vec::new(),
            cwd: None,
        }
    }

    pub fn arg(mut self, arg: impl Into<String>) -> CommandLine {
        self.args.push(arg.into());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> CommandLine {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The command as a shell line (for reading, not for running).
    pub fn shell_line(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:+,@%{}<>".contains(&b));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

#[derive(Debug, thiserror::Error)]
#[error("`{program}` {status}\n--- last lines of {log} ---\n{tail}")]
pub struct CommandFailed {
    pub program: String,
    pub status: String,
    pub log: PathBuf,
    pub tail: String,
}

/// How many log lines a failure shows.
const TAIL_LINES: usize = 25;

/// Runs `command` with `env` added, stdout and stderr both appended to `log`; `watch` sees
/// every line as it comes.
pub fn run_logged(
    command: &CommandLine,
    env: &BTreeMap<String, String>,
    log: &Path,
    watch: &mut dyn FnMut(&str),
) -> Result<(), CommandFailed> {
    let fail = |status: String, tail: String| CommandFailed {
        program: command.program.clone(),
        status,
        log: log.to_path_buf(),
        tail,
    };
    let mut file = crate::regular_file::open(log, crate::regular_file::Mode::Append)
        .map_err(|e| fail(format!("cannot open its log: {e}"), String::new()))?;
    let _ = writeln!(file, "$ {}", command.shell_line());
    let mut process = Process::new(&command.program);
    process.args(&command.args).envs(env);
    if let Some(cwd) = &command.cwd {
        process.current_dir(cwd);
    }
    // One pipe for both streams keeps their lines in order in the log.
    let (reader, writer) =
        std::io::pipe().map_err(|e| fail(format!("cannot make a pipe: {e}"), String::new()))?;
    let writer_err = writer
        .try_clone()
        .map_err(|e| fail(format!("cannot make a pipe: {e}"), String::new()))?;
    process
        .stdout(writer)
        .stderr(writer_err)
        .stdin(Stdio::null());
    let mut child = process.spawn().map_err(|e| {
        fail(
            format!("could not be started: {e} (is it installed and on PATH?)"),
            String::new(),
        )
    })?;
    drop(process);
    let mut tail: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    for line in BufReader::new(reader).lines() {
        let Ok(line) = line else { break };
        let _ = writeln!(file, "{line}");
        watch(&line);
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
    let status = child
        .wait()
        .map_err(|e| fail(format!("could not be waited for: {e}"), String::new()))?;
    if status.success() {
        Ok(())
    } else {
        let _ = writeln!(file, "[exit: {status}]");
        Err(fail(
            format!("failed ({status})"),
            tail.into_iter().collect::<Vec<_>>().join("\n"),
        ))
    }
}

/// What a program printed, run by [`capture`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// It exited with status 0.
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// A program [`capture`] could not use: it could not be started, or it was stopped at its
/// time limit, or it printed more than the cap.
#[derive(Debug, thiserror::Error)]
#[error("{said}")]
pub struct CaptureError {
    pub program: String,
    /// What went wrong, naming the program.
    said: String,
    not_found: bool,
}

impl CaptureError {
    /// The program is not there (not on PATH, or no such file).
    pub fn not_found(&self) -> bool {
        self.not_found
    }
}

/// Runs `program args` directly (no shell, stdin closed) through [`probe_bounded`] with
/// [`Limits::probe`] and keeps its stdout and stderr (decoded lossily): for a tool asked its
/// version or a path. Build steps are [`CommandLine`]s run by [`run_logged`].
pub fn capture<S: AsRef<OsStr>>(
    program: impl AsRef<OsStr>,
    args: impl IntoIterator<Item = S>,
) -> Result<Captured, CaptureError> {
    capture_within(program, args, &[], Limits::probe())
}

/// [`capture`] with `env` added to the environment: for a compiler that only runs inside its
/// toolchain's variables.
pub fn capture_with_env<S: AsRef<OsStr>>(
    program: impl AsRef<OsStr>,
    args: impl IntoIterator<Item = S>,
    env: &[(String, String)],
) -> Result<Captured, CaptureError> {
    capture_within(program, args, env, Limits::probe())
}

/// [`capture_with_env`] within `limits` (a short action that is real work, given longer).
pub fn capture_within<S: AsRef<OsStr>>(
    program: impl AsRef<OsStr>,
    args: impl IntoIterator<Item = S>,
    env: &[(String, String)],
    limits: Limits,
) -> Result<Captured, CaptureError> {
    let probed = probe_bounded_with_env(program, args, env, limits);
    let refused = |said: String, not_found: bool| CaptureError {
        program: probed.program.clone(),
        said,
        not_found,
    };
    match &probed.outcome {
        Outcome::NotStarted(e) => Err(refused(
            format!("cannot run `{}`: {e}", probed.program),
            e.kind() == io::ErrorKind::NotFound,
        )),
        // What it printed before it exited was read whole (a process it left holding the
        // output was stopped).
        Outcome::Ran { success, .. } if probed.read_whole() => Ok(Captured {
            success: *success,
            stdout: probed.stdout.clone(),
            stderr: probed.stderr.clone(),
        }),
        _ => Err(refused(probed.problem().unwrap_or_default(), false)),
    }
}

/// The stdout of `program args` when it can be started and succeeds, else `None`: a fact
/// about the machine that may be missing.
pub fn probe<S: AsRef<OsStr>>(
    program: impl AsRef<OsStr>,
    args: impl IntoIterator<Item = S>,
) -> Option<String> {
    capture(program, args)
        .ok()
        .filter(|c| c.success)
        .map(|c| c.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use std::time::{Duration, Instant};

    #[test]
    fn shell_line_quotes_only_what_needs_it() {
        let cmd = CommandLine::new("cmake").args(["-DX=a b", "-DY=ON", "-DZ=gfx1030;gfx1100"]);
        assert_eq!(
            cmd.shell_line(),
            "cmake '-DX=a b' -DY=ON '-DZ=gfx1030;gfx1100'"
        );
    }

    #[cfg(unix)]
    #[test]
    fn output_goes_to_the_log_and_failures_show_the_tail() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("step.log");
        let mut seen = Vec::new();
        let ok = CommandLine::new("sh").args(["-c", "echo out; echo err >&2"]);
        run_logged(&ok, &BTreeMap::new(), &log, &mut |l| {
            seen.push(l.to_string())
        })
        .unwrap();
        assert_eq!(seen, ["out", "err"]);
        let bad = CommandLine::new("sh").args(["-c", "echo $GREETING; exit 3"]);
        let env = BTreeMap::from([("GREETING".to_string(), "hello".to_string())]);
        let err = run_logged(&bad, &env, &log, &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("failed (exit status: 3)"), "{err}");
        assert_eq!(err.tail, "hello");
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(
            text.contains("$ sh -c 'echo out; echo err >&2'\nout\nerr\n"),
            "{text}"
        );
    }

    #[test]
    fn a_missing_program_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let cmd = CommandLine::new("no-such-program-ct2v");
        let err = run_logged(
            &cmd,
            &BTreeMap::new(),
            &dir.path().join("l.log"),
            &mut |_| {},
        )
        .unwrap_err();
        assert!(err.to_string().contains("could not be started"), "{err}");
    }

    /// `capture` and `probe` ask through the bounded runner: a program that exits leaving a
    /// child holding its output is not waited on (that child is stopped), and one that floods
    /// stderr is cut at the cap and refused, saying so, not read into memory whole.
    #[cfg(unix)]
    #[test]
    fn capture_and_probe_are_bounded() {
        let started = Instant::now();
        let held = capture("sh", ["-c", "echo 1.2; sleep 600 &"]).unwrap();
        assert_eq!((held.success, held.stdout.as_str()), (true, "1.2\n"));
        assert_eq!(
            probe("sh", ["-c", "echo 1.2; sleep 600 &"]).as_deref(),
            Some("1.2\n")
        );
        let flood = capture("sh", ["-c", "echo 1.2; head -c 3000000 /dev/zero >&2"]).unwrap_err();
        assert!(!flood.not_found());
        assert!(
            flood
                .to_string()
                .starts_with("`sh` printed more than 1048576 bytes ("),
            "{flood}"
        );
        assert_eq!(
            probe("sh", ["-c", "echo 1.2; head -c 3000000 /dev/zero >&2"]),
            None
        );
        assert!(started.elapsed() < Duration::from_secs(5), "{started:?}");
    }

    /// The same with a program that does not answer: stopped at the limits given.
    #[cfg(unix)]
    #[test]
    fn capture_within_stops_a_program_that_hangs() {
        let started = Instant::now();
        let limits = Limits::within(Duration::from_millis(500));
        let err = capture_within("sh", ["-c", "sleep 600"], &[], limits).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`sh` did not answer within 0.5 s; it was stopped"
        );
        let env = [("CT2V_PROBE_GREETING".to_string(), "hello".to_string())];
        let said = capture_within("sh", ["-c", "echo $CT2V_PROBE_GREETING"], &env, limits);
        assert_eq!(said.unwrap().stdout, "hello\n");
        assert!(started.elapsed() < Duration::from_secs(5), "{started:?}");
    }

    /// Where, outside test code, a program is started other than through [`capture`],
    /// [`probe`], [`probe_bounded`] (the bounded runner) or [`run_logged`] (the executor of
    /// build steps), with how many [`STARTS`] marks it holds and why: each is real work, not
    /// a question. A start anywhere else, or another one in these files, fails until it goes
    /// through the runner or is named here with its reason.
    const STARTS_PROGRAMS: [(&str, usize, &str); 5] = [
        (
            "crates/support/src/process.rs",
            2,
            "run_logged: the executor of build steps (an alias of Command, then its start)",
        ),
        (
            "crates/support/src/process/bounded.rs",
            4,
            "the bounded runner itself, and taskkill stopping a probed tree on Windows",
        ),
        (
            "crates/pipeline/src/execute/sdk_install.rs",
            3,
            "an SDK installer: real work, with its own time limit and log",
        ),
        (
            "crates/proof/src/speech/transcriber.rs",
            3,
            "the speech check's transcriber: real work",
        ),
        (
            "crates/proof/src/winpython/wine.rs",
            5,
            "wineserver -k stopping a prefix; mingw-w64 building the ProcessPrng stand-in",
        ),
    ];

    /// What starts a program: a `Command` made, aliased or imported by path, or its output
    /// or child taken.
    const STARTS: [&str; 5] = [
        "Command::new(",
        "process::Command",
        "Command as ",
        ".output()",
        ".spawn()",
    ];

    /// Rust files of `dir` and below, without test code: files of a `tests` folder or named
    /// `tests.rs`, and a file's `#[cfg(test)] mod …` onwards (test modules come last).
    fn non_test_sources(dir: &Path, found: &mut Vec<(PathBuf, String)>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() && name != "tests" {
                non_test_sources(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") && name != "tests.rs" {
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("#[cfg(test)]\nmod ").next().unwrap_or("");
                found.push((path, code.to_string()));
            }
        }
    }

    /// How often `mark` is in `code` as itself (`process::Command`, not `process::CommandLine`).
    fn marks(code: &str, mark: &str) -> usize {
        code.match_indices(mark)
            .filter(|(at, _)| {
                let ident = |c: char| c.is_alphanumeric() || c == '_';
                let next = code[at + mark.len()..].chars().next();
                !(mark.ends_with(ident) && next.is_some_and(ident))
            })
            .count()
    }

    #[test]
    fn every_program_run_to_learn_something_goes_through_the_bounded_runner() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut sources = Vec::new();
        for dir in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
            non_test_sources(&dir.path().join("src"), &mut sources);
        }
        non_test_sources(&root.join("xtask/src"), &mut sources);
        assert!(sources.len() > 100, "{} files", sources.len());
        let mut starts: BTreeMap<String, usize> = BTreeMap::new();
        for (path, code) in &sources {
            let n: usize = STARTS.iter().map(|s| marks(code, s)).sum();
            if n > 0 {
                let relative = path.strip_prefix(&root).unwrap_or(path);
                starts.insert(relative.to_string_lossy().replace('\\', "/"), n);
            }
        }
        let allowed: BTreeMap<String, usize> = STARTS_PROGRAMS
            .iter()
            .map(|(file, n, _)| (file.to_string(), *n))
            .collect();
        assert_eq!(
            starts, allowed,
            "a program is started outside the bounded runner: ask it through \
             ct2v_support::process::{{capture, probe, probe_bounded}}, or, if it is real work, \
             name it in STARTS_PROGRAMS with why"
        );
    }

    #[cfg(unix)]
    #[test]
    fn capture_keeps_both_streams_and_names_a_missing_program() {
        let both = capture("sh", ["-c", "echo out; echo err >&2; exit 4"]).unwrap();
        assert_eq!(
            both,
            Captured {
                success: false,
                stdout: "out\n".into(),
                stderr: "err\n".into(),
            }
        );
        // Arguments are passed as they are: no shell splits or expands them.
        assert_eq!(
            probe("printf", ["%s|", "a b", "$HOME"]).as_deref(),
            Some("a b|$HOME|")
        );
        assert_eq!(probe("sh", ["-c", "exit 1"]), None);
        let err = capture("no-such-program-ct2v", ["--version"]).unwrap_err();
        assert!(err.not_found(), "{err}");
        assert!(
            err.to_string()
                .starts_with("cannot run `no-such-program-ct2v`: "),
            "{err}"
        );
        assert_eq!(probe("no-such-program-ct2v", ["--version"]), None);
    }

    /// The same under Windows' `cmd`: CRLF output is read as lines without `\r`.
    #[cfg(windows)]
    #[test]
    fn windows_output_goes_to_the_log_and_failures_show_the_tail() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("step.log");
        let mut seen = Vec::new();
        let ok = CommandLine::new("cmd").args(["/C", "echo out& echo err>&2"]);
        run_logged(&ok, &BTreeMap::new(), &log, &mut |l| {
            seen.push(l.to_string())
        })
        .unwrap();
        assert_eq!(seen, ["out", "err"]);
        let bad = CommandLine::new("cmd").args(["/C", "echo %GREETING%& exit 3"]);
        let env = BTreeMap::from([("GREETING".to_string(), "hello".to_string())]);
        let err = run_logged(&bad, &env, &log, &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("failed (exit code: 3)"), "{err}");
        assert_eq!(err.tail, "hello");
        let both = capture("cmd", ["/C", "echo out& exit 4"]).unwrap();
        assert!(!both.success);
        assert_eq!(both.stdout.trim_end(), "out");
        let err = capture("no-such-program-ct2v", ["x"]).unwrap_err();
        assert_eq!(err.program, "no-such-program-ct2v");
    }
}
