//! Commands as a reader pastes them into a shell: the `<pre>` blocks of a page, run by an
//! interactive bash (history expansion on) and by wine's cmd.exe (plain and with delayed
//! expansion), each program a stub that records its argv, so that a test sees exactly what
//! ran and what else happened in the folder.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use ct2v_pipeline::release::links::html_unescape;

/// The `<pre>` blocks of a page, as a reader copies them (entities decoded).
pub fn pasted_commands(page: &str) -> Vec<String> {
    page.split("<pre>")
        .skip(1)
        .map(|rest| html_unescape(rest.split("</pre>").next().unwrap()))
        .collect()
}

/// What running pasted commands did: each program's argv (its name first, without a folder
/// or `.exe`), in order, and the files that appeared in the folder they ran in.
#[derive(Debug, PartialEq, Eq)]
pub struct Ran {
    pub calls: Vec<Vec<String>>,
    pub created: BTreeSet<String>,
}

/// A folder with `bin/` (the stubs), `calls/` (one file per call, numbered in order) and
/// `cwd/` (where the shell runs, and where a side effect lands).
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["bin", "calls", "cwd"] {
            fs::create_dir(dir.path().join(sub)).unwrap();
        }
        Sandbox { dir }
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    fn ran(&self) -> Ran {
        let mut names: Vec<PathBuf> = fs::read_dir(self.path("calls"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        let calls = names
            .iter()
            .map(|f| {
                let bytes = fs::read(f).unwrap();
                let mut argv: Vec<String> = bytes
                    .split(|b| *b == 0)
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect();
                argv.pop(); // after the last NUL
                let program = argv[0].rsplit(['/', '\\']).next().unwrap().to_string();
                argv[0] = program
                    .strip_suffix(".exe")
                    .filter(|p| *p != "app")
                    .unwrap_or(&program)
                    .to_string();
                argv
            })
            .collect();
        let created = fs::read_dir(self.path("cwd"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        Ran { calls, created }
    }
}

/// `commands` pasted into an interactive bash (history expansion on, as in a terminal), with
/// `pip`, `uv` and `app.exe` stubs first on PATH.
pub fn pasted_into_bash(commands: &[String]) -> Ran {
    let sandbox = Sandbox::new();
    let stub = "#!/bin/sh\nn=0\nwhile [ -e \"$CALLS/$(printf %04d $n)\" ]; do n=$((n+1)); done\n\
                printf '%s\\0' \"${0##*/}\" \"$@\" > \"$CALLS/$(printf %04d $n)\"\n";
    for program in ["pip", "uv", "app.exe"] {
        let path = sandbox.path("bin").join(program);
        fs::write(&path, stub).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    let mut child = Command::new("bash")
        .args(["--norc", "--noprofile", "-i"])
        .env_clear()
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", sandbox.path("bin").display()),
        )
        .env("HOME", sandbox.path("cwd"))
        .env("HISTFILE", "/dev/null")
        .env("CALLS", sandbox.path("calls"))
        .env("COMSPEC", "cmd.exe")
        .current_dir(sandbox.path("cwd"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(commands.join("\n").as_bytes()).unwrap();
        stdin.write_all(b"\nexit\n").unwrap();
    }
    assert!(child.wait().unwrap().success(), "bash ran the commands");
    sandbox.ran()
}

/// A stub Windows program: writes its argv (as the C runtime splits its command line) into
/// the first free `calls\NNNN`, so calls keep their order.
const WINDOWS_STUB: &str = r#"#include <stdio.h>
#include <string.h>
#include <windows.h>
int main(int argc, char **argv) {
  char path[MAX_PATH];
  HANDLE h = INVALID_HANDLE_VALUE;
  for (int n = 0; n < 10000 && h == INVALID_HANDLE_VALUE; n++) {
    snprintf(path, sizeof path, "%s\\%04d", getenv("CALLS"), n);
    h = CreateFileA(path, GENERIC_WRITE, 0, NULL, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, NULL);
  }
  if (h == INVALID_HANDLE_VALUE) return 3;
  DWORD w;
  for (int i = 0; i < argc; i++) WriteFile(h, argv[i], (DWORD)strlen(argv[i]) + 1, &w, NULL);
  CloseHandle(h);
  return 0;
}
"#;

/// `commands` run by wine's cmd.exe as a batch file (which expands `%VAR%` as a prompt does,
/// and an undefined one to nothing, so any expansion shows in the argv), with `pip.exe`,
/// `uv.exe` and `app.exe` stubs on its PATH: once plain, once with `!VAR!` expansion on
/// (`cmd /v:on`). `None` when mingw-w64 or wine is missing (skipped, said).
pub fn pasted_into_cmd(commands: &[String]) -> Option<[Ran; 2]> {
    if !super::mingw::available(true) {
        return None;
    }
    let stubs = tempfile::tempdir().unwrap();
    let source = stubs.path().join("stub.c");
    fs::write(&source, WINDOWS_STUB).unwrap();
    for program in ["pip.exe", "uv.exe", "app.exe"] {
        super::run_ok(
            Command::new(super::mingw::GCC)
                .arg("-O2")
                .arg("-o")
                .arg(stubs.path().join(program))
                .arg(&source),
        );
    }
    let script = stubs.path().join("paste.cmd");
    let mut text = String::from("@echo off\r\n");
    for command in commands {
        text.push_str(command);
        text.push_str("\r\n");
    }
    fs::write(&script, text).unwrap();
    let prefix = super::mingw::Prefix::new();
    let run = |delayed: bool| {
        let sandbox = Sandbox::new();
        let mut cmd = Command::new("wine");
        cmd.arg("cmd");
        if delayed {
            cmd.arg("/v:on");
        }
        let out = cmd
            .arg("/c")
            .arg(super::mingw::windows_path(&script))
            .env("WINEPREFIX", prefix.path())
            .env("WINEDEBUG", "-all")
            .env("WINEDLLOVERRIDES", "mscoree,mshtml=")
            .env("CALLS", super::mingw::windows_path(&sandbox.path("calls")))
            .env("WINEPATH", super::mingw::windows_path(stubs.path()))
            .current_dir(sandbox.path("cwd"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", super::stdout_and_stderr(&out));
        prefix.wait_until_idle();
        sandbox.ran()
    };
    Some([run(false), run(true)])
}

/// The argv each command of the page must run: per CTranslate2 requirement of the wheels,
/// pip, uv and the PyApp exe, each installing it from the variant's index at `site`.
pub fn intended(requirements: &[&str], index: &str) -> Vec<Vec<String>> {
    let mut calls = Vec::new();
    for requirement in requirements {
        for program in [
            &["pip", "install"][..],
            &["uv", "pip", "install"],
            &["app.exe", "self", "pip", "install"],
        ] {
            let mut argv: Vec<String> = program.iter().map(|s| s.to_string()).collect();
            argv.extend(["--extra-index-url", index, requirement].map(String::from));
            calls.push(argv);
        }
    }
    calls
}
