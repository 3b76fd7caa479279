//! A command as data (what a plan step runs, logged and fingerprinted) and running one: output
//! appended to the step's log, lines handed to a watcher (for ninja's `[n/m]` progress), and on
//! failure the log's last lines. Also running a program only to read what it prints (a
//! version, a path): [`capture`] and [`probe`]; and [`probe_bounded`], with a timeout and an
//! output cap, for tools that may hang (a GPU tool asked for its devices). Depends on nothing else in the crate, so that
//! the plan, the executor and the wheelhouse can all use it without depending on one another.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command as Process, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

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

/// A program [`capture`] could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot run `{program}`: {source}")]
pub struct CaptureError {
    pub program: String,
    #[source]
    pub source: io::Error,
}

impl CaptureError {
    /// The program is not there (not on PATH, or no such file).
    pub fn not_found(&self) -> bool {
        self.source.kind() == io::ErrorKind::NotFound
    }
}

/// Runs `program args` directly (no shell, stdin closed) and keeps its stdout and stderr
/// (decoded lossily): for a tool asked its version or a path, or a short action whose
/// output only matters on failure. Build steps are [`CommandLine`]s run by [`run_logged`].
pub fn capture<S: AsRef<OsStr>>(
    program: impl AsRef<OsStr>,
    args: impl IntoIterator<Item = S>,
) -> Result<Captured, CaptureError> {
    capture_with_env(program, args, &[])
}

/// [`capture`] with `env` added to the environment: for a compiler that only runs inside its
/// toolchain's variables.
pub fn capture_with_env<S: AsRef<OsStr>>(
    program: impl AsRef<OsStr>,
    args: impl IntoIterator<Item = S>,
    env: &[(String, String)],
) -> Result<Captured, CaptureError> {
    let program = program.as_ref();
    let output = Process::new(program)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .map_err(|source| CaptureError {
            program: program.to_string_lossy().into_owned(),
            source,
        })?;
    Ok(Captured {
        success: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
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

/// How long [`probe_bounded`] waits for a program and how much of its output it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub timeout: Duration,
    /// Bytes kept of stdout and of stderr each; the rest is read, counted and discarded.
    pub(crate) max_output: usize,
}

impl Limits {
    /// Seconds (a decimal number) that replace [`Limits::gpu_tool`]'s timeout: for tests of
    /// tools that hang.
    pub(crate) const TIMEOUT_VAR: &'static str = "CT2V_PROBE_TIMEOUT_S";

    /// For a GPU tool asked for its devices: 10 s (or `CT2V_PROBE_TIMEOUT_S`), 1 MiB.
    pub fn gpu_tool() -> Limits {
        let timeout = std::env::var(Self::TIMEOUT_VAR)
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0 && *s < 86_400.0)
            .map_or(Duration::from_secs(10), Duration::from_secs_f64);
        Limits {
            timeout,
            max_output: 1 << 20,
        }
    }
}

/// How a [`probe_bounded`] run ended.
#[derive(Debug)]
pub enum Outcome {
    /// It exited; `held_open`: a process it left behind kept its output open (that process
    /// was stopped).
    Ran {
        success: bool,
        status: String,
        held_open: bool,
    },
    /// It did not exit within the timeout; it and what it started were stopped.
    TimedOut,
    NotStarted(io::Error),
}

/// What [`probe_bounded`] saw of a program.
#[derive(Debug)]
pub struct Probed {
    pub program: String,
    pub outcome: Outcome,
    /// What it printed, up to the cap each, decoded lossily.
    pub stdout: String,
    pub stderr: String,
    /// Bytes past the cap, read and discarded (both streams).
    pub(crate) discarded: u64,
    pub limits: Limits,
}

impl Probed {
    /// Its stdout when it exited with success within the limits.
    pub fn stdout(&self) -> Option<&str> {
        match self.outcome {
            Outcome::Ran { success: true, .. } if self.discarded == 0 => Some(&self.stdout),
            _ => None,
        }
    }

    /// What went wrong, naming the program; `None` when it ran within the limits (whatever
    /// its exit status) or is not installed.
    pub fn problem(&self) -> Option<String> {
        let program = &self.program;
        match &self.outcome {
            Outcome::NotStarted(e) if e.kind() == io::ErrorKind::NotFound => None,
            Outcome::NotStarted(e) => Some(format!("`{program}` could not be started: {e}")),
            Outcome::TimedOut => Some(format!(
                "`{program}` did not answer within {} s; it was stopped",
                seconds(self.limits.timeout)
            )),
            Outcome::Ran { .. } if self.discarded > 0 => Some(format!(
                "`{program}` printed more than {} bytes ({} more were discarded); its output \
                 was not used",
                self.limits.max_output, self.discarded
            )),
            Outcome::Ran {
                held_open: true, ..
            } => Some(format!(
                "`{program}` exited but left a process holding its output open; that process \
                 was stopped"
            )),
            Outcome::Ran { .. } => None,
        }
    }
}

/// `10`, `0.5`: a duration as a person writes it.
fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        format!("{s}")
    }
}

/// How long the pipes may stay open after the program exits: long enough to drain what it
/// wrote, short because only something it left behind could still write.
const HELD_OPEN_GRACE: Duration = Duration::from_millis(500);

/// Runs `program args` (no shell, stdin closed) in a process group of its own and reads what
/// it prints within `limits`: a tool that hangs, leaves a child holding its output, detaches
/// one or prints without end is stopped with everything it started, and this returns without
/// waiting for its pipes to close. For GPU tools: a hung driver must not hang the caller.
pub fn probe_bounded<S: AsRef<OsStr>>(
    program: impl AsRef<OsStr>,
    args: impl IntoIterator<Item = S>,
    limits: Limits,
) -> Probed {
    let name = program.as_ref().to_string_lossy().into_owned();
    let mut command = Process::new(program.as_ref());
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    tree::own_group(&mut command);
    let deadline = Instant::now() + limits.timeout;
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return Probed {
                program: name,
                outcome: Outcome::NotStarted(e),
                stdout: String::new(),
                stderr: String::new(),
                discarded: 0,
                limits,
            };
        }
    };
    let pipes: Vec<String> = [tree::pipe_id(&child.stdout), tree::pipe_id(&child.stderr)]
        .into_iter()
        .flatten()
        .collect();
    let out = Capped::start(child.stdout.take(), limits.max_output);
    let err = Capped::start(child.stderr.take(), limits.max_output);
    let outcome = match wait_until(&mut child, deadline) {
        None => {
            tree::stop(&mut child, &pipes);
            Outcome::TimedOut
        }
        Some(status) => {
            let drained = Instant::now() + HELD_OPEN_GRACE;
            let out_closed = out.wait_eof(drained);
            let held_open = !(err.wait_eof(drained) && out_closed);
            if held_open {
                tree::stop(&mut child, &pipes);
            }
            Outcome::Ran {
                success: status.success(),
                status: status.to_string(),
                held_open,
            }
        }
    };
    let (stdout, discarded_out) = out.taken();
    let (stderr, discarded_err) = err.taken();
    Probed {
        program: name,
        outcome,
        stdout,
        stderr,
        discarded: discarded_out + discarded_err,
        limits,
    }
}

/// The exit status of `child` if it exits before `deadline`.
fn wait_until(child: &mut std::process::Child, deadline: Instant) -> Option<ExitStatus> {
    let mut pause = Duration::from_millis(2);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

#[derive(Default)]
struct CappedState {
    kept: Vec<u8>,
    discarded: u64,
    eof: bool,
}

/// One pipe read on a thread of its own, its first bytes kept; the thread is left behind if
/// the pipe never closes (a process out of reach still holds it).
struct Capped {
    state: Arc<(Mutex<CappedState>, Condvar)>,
}

impl Capped {
    fn start(pipe: Option<impl io::Read + Send + 'static>, cap: usize) -> Capped {
        let state = Arc::new((Mutex::new(CappedState::default()), Condvar::new()));
        let Some(mut pipe) = pipe else {
            state.0.lock().unwrap_or_else(|e| e.into_inner()).eof = true;
            return Capped { state };
        };
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = match pipe.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                let mut s = shared.0.lock().unwrap_or_else(|e| e.into_inner());
                let room = cap.saturating_sub(s.kept.len()).min(n);
                s.kept.extend_from_slice(&buf[..room]);
                s.discarded += (n - room) as u64;
            }
            shared.0.lock().unwrap_or_else(|e| e.into_inner()).eof = true;
            shared.1.notify_all();
        });
        Capped { state }
    }

    /// Whether the pipe closed by `deadline`.
    fn wait_eof(&self, deadline: Instant) -> bool {
        let (lock, closed) = &*self.state;
        let mut s = lock.lock().unwrap_or_else(|e| e.into_inner());
        while !s.eof {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            s = match closed.wait_timeout(s, deadline - now) {
                Ok((s, _)) => s,
                Err(e) => e.into_inner().0,
            };
        }
        true
    }

    /// What was read so far, decoded lossily, and the bytes discarded.
    fn taken(&self) -> (String, u64) {
        let s = self.state.0.lock().unwrap_or_else(|e| e.into_inner());
        (String::from_utf8_lossy(&s.kept).into_owned(), s.discarded)
    }
}

/// A probed program's process tree: started as a group of its own, stopped whole.
mod tree {
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    #[cfg(unix)]
    pub(crate) fn own_group(command: &mut Command) {
        std::os::unix::process::CommandExt::process_group(command, 0);
    }

    #[cfg(not(unix))]
    pub(crate) fn own_group(_: &mut Command) {}

    /// `pipe:[inode]`, what `/proc/<pid>/fd/<n>` of every process holding the pipe reads.
    #[cfg(target_os = "linux")]
    pub(crate) fn pipe_id<P: std::os::fd::AsRawFd>(pipe: &Option<P>) -> Option<String> {
        let fd = pipe.as_ref()?.as_raw_fd();
        let link = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
        Some(link.to_string_lossy().into_owned())
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn pipe_id<P>(_: &Option<P>) -> Option<String> {
        None
    }

    /// Kills the program, its process group and (Linux) any process still holding one of its
    /// `pipes` (one that left the group with `setsid`), then reaps the program if it goes
    /// within a second: one stuck in the kernel (a hung driver call) is not waited for.
    pub(super) fn stop(child: &mut Child, pipes: &[String]) {
        kill_group(child);
        let _ = child.kill();
        kill_holders(pipes);
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[cfg(unix)]
    fn kill_group(child: &Child) {
        let Ok(group) = i32::try_from(child.id()) else {
            return;
        };
        // SAFETY: kill(2) with a negative pid signals the group `own_group` gave the child.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
    }

    /// `taskkill /T` walks the tree from the program, so it runs before the program is killed.
    #[cfg(windows)]
    fn kill_group(child: &Child) {
        let taskkill = Command::new("taskkill")
            .args(["/T", "/F", "/PID", &child.id().to_string()])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if let Ok(mut taskkill) = taskkill {
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline && !matches!(taskkill.try_wait(), Ok(Some(_))) {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = taskkill.kill();
        }
    }

    #[cfg(not(any(unix, windows)))]
    fn kill_group(_: &Child) {}

    #[cfg(target_os = "linux")]
    fn kill_holders(pipes: &[String]) {
        if pipes.is_empty() {
            return;
        }
        let me = std::process::id();
        let Ok(procs) = std::fs::read_dir("/proc") else {
            return;
        };
        for entry in procs.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
                continue;
            };
            let holds = fds.flatten().any(|fd| {
                std::fs::read_link(fd.path())
                    .is_ok_and(|l| pipes.iter().any(|p| l.as_os_str() == p.as_str()))
            });
            if holds
                && pid != me
                && let Ok(pid) = i32::try_from(pid)
            {
                // SAFETY: kill(2) of a process that holds this program's output pipe.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn kill_holders(_: &[String]) {}
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[cfg(unix)]
    #[test]
    fn probe_bounded_stops_what_hangs_floods_or_lingers_and_says_so() {
        let limits = Limits {
            timeout: Duration::from_millis(500),
            max_output: 16,
        };
        let started = Instant::now();
        let slept = probe_bounded("sh", ["-c", "sleep 30; echo late"], limits);
        assert!(matches!(slept.outcome, Outcome::TimedOut), "{slept:?}");
        assert_eq!(slept.stdout(), None);
        let said = slept.problem().unwrap();
        assert_eq!(said, "`sh` did not answer within 0.5 s; it was stopped");
        let held = probe_bounded("sh", ["-c", "echo ok; sleep 30 &"], limits);
        assert!(
            matches!(
                held.outcome,
                Outcome::Ran {
                    held_open: true,
                    ..
                }
            ),
            "{held:?}"
        );
        assert_eq!(held.stdout(), Some("ok\n"));
        assert!(
            held.problem()
                .unwrap()
                .contains("left a process holding its output open")
        );
        let flood = probe_bounded("sh", ["-c", "head -c 100 /dev/zero"], limits);
        assert_eq!((flood.stdout.len(), flood.discarded), (16, 84));
        assert_eq!(flood.stdout(), None);
        assert!(
            flood
                .problem()
                .unwrap()
                .contains("printed more than 16 bytes (84 more were discarded)")
        );
        assert!(started.elapsed() < Duration::from_secs(5), "{started:?}");
        let fine = probe_bounded("printf", ["%s|", "a b"], limits);
        assert_eq!((fine.stdout(), fine.problem()), (Some("a b|"), None));
        let failed = probe_bounded("sh", ["-c", "exit 3"], limits);
        assert_eq!((failed.stdout(), failed.problem()), (None, None));
        let missing = probe_bounded("no-such-program-ct2v", ["x"], limits);
        assert!(matches!(missing.outcome, Outcome::NotStarted(_)));
        assert_eq!(missing.problem(), None);
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
