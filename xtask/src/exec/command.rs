//! Running one external command of a step: output appended to the step's log, lines handed
//! to a watcher (for ninja's `[n/m]` progress), and on failure the log's last lines.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};

use crate::plan::Command;

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
    command: &Command,
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
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_goes_to_the_log_and_failures_show_the_tail() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("step.log");
        let mut seen = Vec::new();
        let ok = Command::new("sh").args(["-c", "echo out; echo err >&2"]);
        run_logged(&ok, &BTreeMap::new(), &log, &mut |l| {
            seen.push(l.to_string())
        })
        .unwrap();
        assert_eq!(seen, ["out", "err"]);
        let bad = Command::new("sh").args(["-c", "echo $GREETING; exit 3"]);
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
        let cmd = Command::new("no-such-program-ct2v");
        let err = run_logged(
            &cmd,
            &BTreeMap::new(),
            &dir.path().join("l.log"),
            &mut |_| {},
        )
        .unwrap_err();
        assert!(err.to_string().contains("could not be started"), "{err}");
    }
}
