//! Runs the real `xtask` binary, as `cargo xtask` would.

pub mod command_args;
pub mod community_rocblas;
pub mod github_api;
pub mod github_markdown;
pub mod network;
pub mod pasted;
pub mod rocm;
pub mod rocm10;
pub mod source_scan;
pub mod wheel;
pub mod windows_exe;
pub mod winwheels;

// The helpers these tests share with the library tests of the crate that owns them, one copy
// included from there (a part of one only those tests use).
#[allow(dead_code)]
#[path = "../../../../crates/fetch/tests/it/common/fuzz.rs"]
pub mod fuzz;
#[path = "../../../../crates/fetch/tests/it/common/mingw.rs"]
pub mod mingw;
#[path = "../../../../crates/fetch/tests/it/common/run.rs"]
mod run;
#[path = "../../../../crates/fetch/tests/it/common/server.rs"]
pub mod server;
#[path = "../../../../crates/fetch/tests/it/common/skip.rs"]
pub mod skip;

pub use run::{installed, run_ok, stdout_and_stderr};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A FIFO made at `at` with `mkfifo`, for the tests of what the tool never waits on.
#[cfg(unix)]
pub fn mkfifo(at: &Path) {
    let status = Command::new("mkfifo").arg(at).status().unwrap();
    assert!(status.success(), "mkfifo {}", at.display());
}

/// Every `.rs` file below `dir`, in no particular order.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn xtask_in(root: &Path, args: &[&str]) -> Run {
    xtask_with_env(root, args, &[], &[])
}

/// `xtask_in` with environment variables set (`env`) and removed (`removed`).
pub fn xtask_with_env(root: &Path, args: &[&str], env: &[(&str, &str)], removed: &[&str]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_xtask"));
    command.arg("--root").arg(root);
    output_of(command, args, env, removed)
}

/// The environment the tests give every run of xtask: no cache folder from the caller, glibc
/// 2.28 as the host's.
pub fn test_env(command: &mut Command) -> &mut Command {
    command
        .env_remove("CT2V_CACHE_DIR")
        .env("CT2V_HOST_GLIBC", "2.28")
}

/// The xtask binary set to run `args` in `root` in [`test_env`], not started.
pub fn xtask_command(root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_xtask"));
    command.arg("--root").arg(root).args(args);
    test_env(&mut command);
    command
}

/// Runs `command` (an xtask binary with its first arguments) with `args` in [`test_env`].
pub fn output_of(
    mut command: Command,
    args: &[&str],
    env: &[(&str, &str)],
    removed: &[&str],
) -> Run {
    test_env(command.args(args));
    for var in removed {
        command.env_remove(var);
    }
    command.envs(env.iter().copied());
    let output: Output = command.output().expect("the xtask binary runs");
    let run = Run {
        code: exit_code(output.status),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    };
    assert!(
        !run.stderr.contains("panicked"),
        "xtask panicked on {args:?}:\n{}",
        run.stderr
    );
    run
}

/// The exit code, or 128 + the signal that ended the process (as a shell reports it), so that
/// a failure names the signal.
pub fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(-1)
}

pub fn assert_exit(run: &Run, code: i32, needles: &[&str]) {
    assert_eq!(
        run.code, code,
        "exit {code} expected; stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    for needle in needles {
        assert!(
            run.stderr.contains(needle),
            "`{needle}` not in:\n{}",
            run.stderr
        );
    }
}

pub fn xtask(args: &[&str]) -> Run {
    xtask_in(&repo_root(), args)
}

/// The argument list of `plan` for one matrix entry, plus `extra` flags.
pub fn plan_args<'a>(
    variant: &'a str,
    platform: &'a str,
    python: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let no_cache = ["--compiler-cache", "off"];
    command_args::job(
        "plan",
        variant,
        platform,
        python,
        &[&no_cache[..], extra].concat(),
    )
}

/// `fetch` of the cpu variant for one platform (Python 3.12) into `cache`, plus `extra`.
pub fn fetch_cpu_args<'a>(cache: &'a str, platform: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "--cache-dir",
        cache,
        "fetch",
        "--variant",
        "cpu",
        "--platform",
        platform,
        "--python",
        "3.12",
        "--no-wheels",
    ];
    args.extend_from_slice(extra);
    args
}

/// The arguments of a plan step's first command.
pub fn args_of(step: &serde_json::Value) -> Vec<String> {
    step["commands"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

/// The step `id` of a plan's JSON (`plan --json`).
pub fn plan_step<'a>(plan: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no step `{id}`"))
}

/// Writes `text` to `path` as an executable script (a stand-in for a tool on PATH).
pub fn write_script(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// A scratch copy of the checkout's variant files, patches and pinned tool lists, to break on purpose.
pub struct Scratch {
    /// Kept for its lifetime: the folder goes when the scratch does.
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch::under("")
    }

    /// The scratch checkout in the folder `name` of a temporary folder (a long name makes a
    /// long root).
    pub fn under(name: &str) -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        // `join("")` would add a trailing separator.
        let root = match name {
            "" => dir.path().to_path_buf(),
            _ => dir.path().join(name),
        };
        for sub in [
            "variants",
            "patches",
            "wheels",
            "crates/bundle/python",
            "crates/pipeline/python",
            "crates/proof/python",
            "scripts/wine",
        ] {
            copy_tree(&repo_root().join(sub), &root.join(sub));
        }
        Scratch { _dir: dir, root }
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Replaces `from` (which must occur exactly once) in a file of the scratch copy.
    pub fn edit(&self, file: &str, from: &str, to: &str) {
        let path = self.path().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches(from).count(), 1, "`{from}` once in {file}");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    }

    pub fn run(&self, args: &[&str]) -> Run {
        xtask_in(self.path(), args)
    }
}

/// The `key` of every object in a JSON array (`plan["steps"]`, `plan["inputs"]`…), as text.
pub fn field_of_each<'a>(array: &'a serde_json::Value, key: &str) -> Vec<&'a str> {
    array
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o[key].as_str().unwrap())
        .collect()
}

/// The variants a matrix (`matrix --json`) builds, each once.
pub fn variants_of(matrix: &serde_json::Value) -> std::collections::BTreeSet<&str> {
    field_of_each(&matrix["include"], "variant")
        .into_iter()
        .collect()
}

/// A folder served over HTTP on a free loopback port by Python's http.server (what a static
/// host does with it), stopped when dropped.
pub struct HttpDir {
    pub port: u16,
    child: std::process::Child,
}

impl HttpDir {
    pub fn serve(dir: &Path) -> HttpDir {
        let mut child = Command::new("python3")
            .args([
                "-u",
                "-m",
                "http.server",
                "0",
                "--bind",
                "127.0.0.1",
                "--directory",
            ])
            .arg(dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut first = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut first,
        )
        .unwrap();
        let port = first
            .split("port ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {first:?}"));
        HttpDir { port, child }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for HttpDir {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
