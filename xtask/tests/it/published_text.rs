//! What the tool publishes, read as its readers read it: the Pages front page's install
//! commands pasted into real shells (bash with history on, wine's cmd.exe, with and without
//! delayed expansion), whose programs are stubs that record their argv; RELEASE_NOTES.md
//! rendered by GitHub's Markdown (cmark-gfm, through PyPI's `cmarkgfm`); and names read from
//! a release (wheel names, versions, `--earlier` manifests) refused where they are read when
//! they are not what their rules allow (tags and versions given as flags: `bad_strings.rs`).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{self, Scratch, assert_exit};
use crate::pages::{ASSETS, pages_of_newer, two_releases};

/// The file a hostile name's command creates when a shell runs it.
const MARKER: &str = "PWNED";

/// The `<pre>` blocks of a page, as a reader copies them (entities decoded).
pub(crate) fn pasted_commands(page: &str) -> Vec<String> {
    page.split("<pre>")
        .skip(1)
        .map(|rest| html_unescape(rest.split("</pre>").next().unwrap()))
        .collect()
}

fn html_unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// What running pasted commands did: each program's argv (its name first, without a folder
/// or `.exe`), in order, and the files that appeared in the folder they ran in.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Ran {
    pub(crate) calls: Vec<Vec<String>>,
    pub(crate) created: BTreeSet<String>,
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
pub(crate) fn pasted_into_bash(commands: &[String]) -> Ran {
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
fn pasted_into_cmd(commands: &[String]) -> Option<[Ran; 2]> {
    if !common::mingw::available(true) {
        return None;
    }
    let stubs = tempfile::tempdir().unwrap();
    let source = stubs.path().join("stub.c");
    fs::write(&source, WINDOWS_STUB).unwrap();
    for program in ["pip.exe", "uv.exe", "app.exe"] {
        common::run_ok(
            Command::new(common::mingw::GCC)
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
    let prefix = common::mingw::Prefix::new();
    let run = |delayed: bool| {
        let sandbox = Sandbox::new();
        let mut cmd = Command::new("wine");
        cmd.arg("cmd");
        if delayed {
            cmd.arg("/v:on");
        }
        let out = cmd
            .arg("/c")
            .arg(common::mingw::windows_path(&script))
            .env("WINEPREFIX", prefix.path())
            .env("WINEDEBUG", "-all")
            .env("WINEDLLOVERRIDES", "mscoree,mshtml=")
            .env("CALLS", common::mingw::windows_path(&sandbox.path("calls")))
            .env("WINEPATH", common::mingw::windows_path(stubs.path()))
            .current_dir(sandbox.path("cwd"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", common::stdout_and_stderr(&out));
        prefix.wait_until_idle();
        sandbox.ran()
    };
    Some([run(false), run(true)])
}

/// The newer of [`two_releases`] (`v4.7.1-2`, cpu py3.11) copied into `dir`, its manifest
/// changed by `edit` (the release's other files stay: `pages` reads only the manifest).
fn release_copy(web: &Path, dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let from = web.join(ASSETS).join("v4.7.1-2");
    common::copy_tree(&from, dir);
    let path = dir.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    edit(&mut manifest);
    fs::write(&path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
    dir.to_path_buf()
}

/// The CTranslate2 wheel's row of a manifest.
fn wheel_row(manifest: &mut serde_json::Value) -> &mut serde_json::Value {
    manifest["artifacts"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|a| a["kind"] == "wheel")
        .unwrap()
}

/// The argv each command of the page must run: per CTranslate2 requirement of the wheels,
/// pip, uv and the PyApp exe, each installing it from the variant's index at `site`.
pub(crate) fn intended(requirements: &[&str], index: &str) -> Vec<Vec<String>> {
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

/// Nothing of a refused `pages` run is left: no site, no staging folder or lock beside it.
fn assert_nothing_written(site: &Path) {
    assert!(!site.exists(), "{} written", site.display());
    let lock = format!(".{}.lock", site.file_name().unwrap().to_str().unwrap());
    let leftovers: Vec<String> = fs::read_dir(site.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".pages-") || *n == lock)
        .collect();
    assert!(leftovers.is_empty(), "staging left: {leftovers:?}");
}

/// A wheel name or version a manifest gives `pages` that PEP 427 / PEP 440 do not allow
/// (shell substitutions, quotes, cmd.exe variables, history and delayed-expansion `!`, a line
/// break, an invisible character), and a `--site-url` with a cmd.exe variable, are refused
/// (exit 2, named escaped, nothing written); the front page of a real release, every
/// command pasted into bash and into cmd.exe (plain and with delayed expansion), runs
/// exactly pip, uv and the PyApp exe with the intended arguments and nothing else.
#[test]
fn every_command_of_the_front_page_runs_exactly_its_program_when_pasted_into_a_shell() {
    let scratch = Scratch::new();
    let web = scratch.path().join("web");
    two_releases(&scratch, &web);
    let base = "https://github.com/o/r/releases/download/";
    let sub = format!("$(touch {MARKER})");
    let wheel_forms = [
        format!("+cpu{sub}"),
        format!("+cpu`touch {MARKER}`"),
        format!("+cpu\"{sub}\""),
        format!("+cpu'{sub}'"),
        "+cpu%COMSPEC%".to_string(),
        "+cpu!PATH!".to_string(),
        format!("+cpu\ntouch {MARKER}\n"),
        "+cpu\u{202e}lhw.46x_68".to_string(),
        format!("+cpu;touch${{IFS}}{MARKER};"),
    ];
    let mut cases: Vec<(String, PathBuf, Vec<String>, &str)> = Vec::new();
    for (n, form) in wheel_forms.iter().enumerate() {
        let dir = release_copy(&web, &scratch.path().join(format!("hostile/{n}")), |m| {
            let row = wheel_row(m);
            let path = row["path"].as_str().unwrap().replacen("+cpu", form, 1);
            row["path"] = path.into();
        });
        cases.push((
            format!("wheel name with {form:?}"),
            dir,
            Vec::new(),
            "names no release writes",
        ));
    }
    let epoch = release_copy(&web, &scratch.path().join("hostile/epoch"), |m| {
        let row = wheel_row(m);
        let path = row["path"]
            .as_str()
            .unwrap()
            .replacen("-4.7.1", "-1!4.7.1", 1);
        row["path"] = path.into();
    });
    cases.push((
        "an epoch's `!` (PEP 440 allows it)".into(),
        epoch,
        Vec::new(),
        "which a shell reads",
    ));
    let version = release_copy(&web, &scratch.path().join("hostile/version"), |m| {
        m["version"] = format!("4.7.1{sub}").into();
    });
    cases.push((
        "a version".into(),
        version,
        Vec::new(),
        "names no release writes",
    ));
    let plain = web.join(ASSETS).join("v4.7.1-2");
    cases.push((
        "--site-url with %COMSPEC%".into(),
        plain.clone(),
        vec![
            "--site-url".into(),
            "https://o.github.io/%COMSPEC%/r".into(),
        ],
        "which a shell reads",
    ));
    for (n, (what, release, extra, needle)) in cases.iter().enumerate() {
        let site = scratch.path().join(format!("sites/{n}/site"));
        fs::create_dir_all(site.parent().unwrap()).unwrap();
        let mut args = vec![
            "pages",
            "--release",
            release.to_str().unwrap(),
            "--tag",
            "v4.7.1-2",
            "--out",
            site.to_str().unwrap(),
            "--download-base",
            base,
        ];
        args.extend(extra.iter().map(String::as_str));
        let run = scratch.run(&args);
        if run.code == 0 {
            // Say what the page does when pasted, not only that it was written.
            let page = fs::read_to_string(site.join("index.html")).unwrap();
            let commands = pasted_commands(&page);
            let bash = pasted_into_bash(&commands);
            let cmd = pasted_into_cmd(&commands);
            panic!(
                "{what}: pages wrote the page (exit 0); its commands {commands:?}\n\
                 pasted into bash ran {bash:?}\npasted into cmd.exe ran {cmd:?}"
            );
        }
        assert_exit(&run, 2, &[needle]);
        assert!(
            !run.stderr.contains(['\u{1b}', '\u{202e}']) && !run.stderr.contains("cpu\ntouch"),
            "{what}: printed raw: {}",
            run.stderr
        );
        assert_nothing_written(&site);
    }

    // The real page: every command, pasted, runs exactly what it says.
    let site = scratch.path().join("site");
    let run = pages_of_newer(
        &scratch,
        &web,
        &site,
        &[
            "--download-base",
            base,
            "--site-url",
            "https://o.github.io/r,x=y@z~w+v",
        ],
    );
    assert_exit(&run, 0, &["1 release(s)"]);
    let page = fs::read_to_string(site.join("index.html")).unwrap();
    assert!(
        page.contains("each command runs as it is in sh, bash, zsh, cmd.exe and PowerShell"),
        "the page says which shells it is written for"
    );
    let commands = pasted_commands(&page);
    let want = intended(
        &["ctranslate2==4.7.1+cpu"],
        "https://o.github.io/r,x=y@z~w+v/whl/cpu",
    );
    assert_eq!(commands.len(), want.len(), "{commands:?}");
    let bash = pasted_into_bash(&commands);
    assert_eq!(bash.calls, want, "bash: {commands:?}");
    assert!(bash.created.is_empty(), "bash: {:?}", bash.created);
    let Some(cmd) = pasted_into_cmd(&commands) else {
        return;
    };
    for (ran, how) in cmd.iter().zip(["cmd /c", "cmd /v:on /c"]) {
        assert_eq!(ran.calls, want, "{how}: {commands:?}");
        assert!(ran.created.is_empty(), "{how}: {:?}", ran.created);
    }
}

/// `html.parser`'s view of cmark-gfm's HTML for a Markdown file, rendered with raw HTML let
/// through (`CMARK_OPT_UNSAFE`), so that markup the file lets in shows: every element, every
/// link's href, and the text outside `code` and `a` (where GitHub links `@mentions`).
const RENDER: &str = r#"
import json, sys, cmarkgfm
from cmarkgfm.cmark import Options
from html.parser import HTMLParser
html = cmarkgfm.github_flavored_markdown_to_html(
    open(sys.argv[1], encoding="utf-8").read(), options=Options.CMARK_OPT_UNSAFE)
class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.hrefs, self.text, self.inside = [], [], [], []
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.hrefs += [v for k, v in attrs if k in ("href", "src")]
        if tag in ("code", "a", "pre"):
            self.inside.append(tag)
    def handle_endtag(self, tag):
        if self.inside and self.inside[-1] == tag:
            self.inside.pop()
    def handle_data(self, data):
        if not self.inside:
            self.text.append(data)
p = P()
p.feed(html)
print(json.dumps({"html": html, "tags": sorted(set(p.tags)), "hrefs": p.hrefs, "text": " ".join(p.text)}))
"#;

/// The Python that has `cmarkgfm` (`.ci/run` installs it into `target/ci-python`); `None`
/// when it is not there (skipped, said; a failure under CI=true).
fn markdown_renderer() -> Option<PathBuf> {
    let python = common::repo_root().join("target/ci-python/bin/python");
    let ok = Command::new(&python)
        .args(["-c", "import cmarkgfm"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(python);
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    common::skip::missing_in(
        "cmarkgfm (GitHub's cmark-gfm for Python)",
        "python3 -m venv target/ci-python && target/ci-python/bin/pip install cmarkgfm==2025.10.22",
        ci,
        &common::skip::record_file(),
    );
    None
}

/// What GitHub would show of a Markdown file: its elements, links and the text outside
/// code, as JSON.
fn rendered_markdown(python: &Path, file: &Path) -> serde_json::Value {
    let out = Command::new(python)
        .args(["-c", RENDER])
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::stdout_and_stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A `--from` folder and a failed entry's folder named with a heading, raw HTML, a mention, a
/// `javascript:` link, ESC and a right-to-left override, and a provenance report whose
/// package and path carry the same markup: the release's notes (and so the job summary)
/// render with no raw HTML, no mention and no link but https, its manifest and stderr hold no
/// ESC or override, and nothing published names a folder of this machine. A provenance row
/// with a control or invisible character, a path out of the wheel, or a package naming a
/// local folder is refused (exit 2) and nothing is released.
#[test]
fn names_from_a_build_reach_the_notes_the_manifest_and_stderr_as_text_only() {
    let Some(python) = markdown_renderer() else {
        return;
    };
    let scratch = Scratch::new();
    let matrix = scratch.run(&["matrix", "--json"]);
    assert_eq!(matrix.code, 0, "{}", matrix.stderr);
    let matrix: serde_json::Value = serde_json::from_str(&matrix.stdout).unwrap();
    let entry = |variant: &str| -> serde_json::Value {
        matrix["include"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| {
                e["variant"] == variant && e["platform"] == "linux-x86_64" && e["python"] == "3.12"
            })
            .cloned()
            .unwrap()
    };
    let (cpu, cuda) = (entry("cpu"), entry("cuda"));
    let hostile = "x\n# Owned @everyone <img src=x onerror=alert(1)> [click](javascript:alert(1)) \
                   <javascript:alert(2)> \u{1b}[31m\u{202e}";
    let from = scratch.path().join(format!("from {hostile}"));
    let cpu_dir = from.join(cpu["artifact"].as_str().unwrap());
    crate::release::fake_entry(&scratch, &cpu);
    crate::release::artifacts_of(&scratch, &[&cpu], &from);
    let package = "<img src=x onerror=alert(1)> @everyone [x](javascript:alert(1)) # h `b` | t";
    let provenance = |path: &str, package: &str| {
        serde_json::json!({"files": [{
            "path": path, "package": package, "sha256": "ab", "size": 1, "reason": "x"
        }]})
        .to_string()
    };
    fs::write(
        cpu_dir.join("provenance.json"),
        provenance("ctranslate2/li`b`<b>x</b>@everyone.so", package),
    )
    .unwrap();
    let failed = from.join(format!("failed-{}", cuda["artifact"].as_str().unwrap()));
    fs::create_dir_all(&failed).unwrap();
    let release = |out: &Path| {
        scratch.run(&[
            "release",
            "--variants",
            "cpu,cuda",
            "--platforms",
            "linux-x86_64",
            "--pythons",
            "3.12",
            "--from",
            from.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--partial",
        ])
    };
    let out = scratch.path().join("dist/ok");
    let run = release(&out);
    assert_exit(&run, 0, &["note: left out of this release"]);
    assert!(
        !run.stderr.contains(['\u{1b}', '\u{202e}']),
        "{}",
        run.stderr
    );

    let notes_file = out.join("RELEASE_NOTES.md");
    let notes = fs::read_to_string(&notes_file).unwrap();
    let manifest = fs::read_to_string(out.join("manifest.json")).unwrap();
    let local = scratch.path().to_str().unwrap();
    for (name, text) in [("RELEASE_NOTES.md", &notes), ("manifest.json", &manifest)] {
        assert!(!text.contains(local), "{name} names {local}:\n{text}");
        assert!(
            !text.contains(['\u{1b}', '\u{202e}']),
            "{name} holds ESC or an override:\n{text}"
        );
    }
    let shown = rendered_markdown(&python, &notes_file);
    let allowed = ["code", "h1", "h2", "li", "p", "ul"];
    for tag in shown["tags"].as_array().unwrap() {
        assert!(
            allowed.contains(&tag.as_str().unwrap()),
            "<{tag}> in the notes:\n{}",
            shown["html"]
        );
    }
    for href in shown["hrefs"].as_array().unwrap() {
        assert!(
            href.as_str().unwrap().starts_with("https://"),
            "a link to {href}:\n{}",
            shown["html"]
        );
    }
    let text = shown["text"].as_str().unwrap();
    assert!(!text.contains('@'), "a mention outside code: {text}");
    let headings = shown["html"].as_str().unwrap().matches("<h").count();
    let sections = notes.matches("\n## ").count() + 1;
    assert_eq!(headings, sections, "only the notes' own headings:\n{notes}");
    // The job summary is the notes' last section, from its heading on (release.yml).
    let summary = &notes[notes.find("## Not in this release").unwrap()..];
    assert!(summary.contains("failed-"), "{summary}");

    // Rows that cannot be published at all.
    for (n, (path, package, needle)) in [
        ("ctranslate2/lib\u{1b}[2J.so", "p", "control or invisible"),
        ("ctranslate2/lib.so", "p\u{202e}", "control or invisible"),
        (
            "ctranslate2/lib.so",
            "line\n## Owned",
            "control or invisible",
        ),
        ("/home/runner/lib.so", "p", "path `/home/runner/lib.so`"),
        ("../../lib.so", "p", "path `../../lib.so`"),
        (
            "ctranslate2/lib.so",
            "from /home/runner/work/sdk",
            "a folder of the build machine",
        ),
        (
            "ctranslate2/lib.so",
            r"C:\Users\runner\sdk",
            "a folder of the build machine",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        fs::write(cpu_dir.join("provenance.json"), provenance(path, package)).unwrap();
        let out = scratch.path().join(format!("dist/bad{n}"));
        let run = release(&out);
        assert_exit(
            &run,
            2,
            &["provenance.json: names no bundle writes", needle],
        );
        assert!(!out.exists(), "{path:?} {package:?}: released");
        assert!(
            !run.stderr.contains(['\u{1b}', '\u{202e}']),
            "{}",
            run.stderr
        );
    }
}

/// A wheel a build left whose file name PEP 427 does not allow (a shell substitution, a
/// backtick, a quote, a line break, an invisible character) stops `release` before anything
/// is written (exit 2, the name escaped): its name would be published in the manifest, the
/// notes' pip command and the index.
#[test]
fn a_built_wheel_whose_name_pep_427_refuses_stops_the_release() {
    let scratch = Scratch::new();
    let wheel = crate::release::fake_build(&scratch, "3.11");
    let name = wheel.file_name().unwrap().to_str().unwrap().to_string();
    let mut at = wheel.clone();
    for (n, form) in [
        format!("$(touch {MARKER})"),
        format!("`touch {MARKER}`"),
        "\"x".to_string(),
        "'x".to_string(),
        "\n## x".to_string(),
        "\u{202e}x".to_string(),
    ]
    .iter()
    .enumerate()
    {
        let renamed = wheel.with_file_name(name.replacen(".whl", &format!("{form}.whl"), 1));
        fs::rename(&at, &renamed).unwrap();
        at = renamed;
        let out = scratch.path().join(format!("dist/{n}"));
        let run = crate::release::release(&scratch, &out, "3.11");
        assert_exit(&run, 2, &["is not named as PEP 427 names a wheel"]);
        assert!(!out.exists(), "{form:?}: released");
        assert!(
            !run.stderr.contains(['\u{1b}', '\u{202e}']),
            "{}",
            run.stderr
        );
        assert!(!scratch.path().join(MARKER).exists());
    }
}

/// `pages --earlier` over four earlier releases and this one renders every release (each
/// wheel in the index, each tag in the front page's table); one hostile wheel name in the
/// third earlier release stops it (exit 2) naming that release's manifest, and nothing is
/// written.
#[test]
fn an_earlier_chain_of_releases_renders_whole_or_is_refused_naming_the_release() {
    let scratch = Scratch::new();
    let web = scratch.path().join("web");
    two_releases(&scratch, &web);
    let base = "https://github.com/o/r/releases/download/";
    let newer: serde_json::Value =
        serde_json::from_slice(&fs::read(web.join(ASSETS).join("v4.7.1-2/manifest.json")).unwrap())
            .unwrap();
    let earlier = scratch.path().join("earlier");
    let tags = ["v4.4.0", "v4.5.0", "v4.6.0", "v4.7.0"];
    let write_chain = |hostile: Option<&str>| {
        for tag in tags {
            let version = &tag[1..];
            let mut manifest = newer.clone();
            manifest["version"] = version.into();
            for a in manifest["artifacts"].as_array_mut().unwrap() {
                let path = a["path"].as_str().unwrap().replace("4.7.1", version);
                a["path"] = path.into();
                a["sha256"] = format!("{:0>64}", version.replace('.', "")).into();
            }
            if tag == "v4.6.0"
                && let Some(form) = hostile
            {
                let row = wheel_row(&mut manifest);
                let path = row["path"].as_str().unwrap().replacen("+cpu", form, 1);
                row["path"] = path.into();
            }
            fs::create_dir_all(earlier.join(tag)).unwrap();
            fs::write(
                earlier.join(tag).join("manifest.json"),
                serde_json::to_string_pretty(&manifest).unwrap(),
            )
            .unwrap();
        }
    };
    write_chain(None);
    let site = scratch.path().join("site");
    let args = [
        "--earlier",
        earlier.to_str().unwrap(),
        "--download-base",
        base,
    ];
    let run = pages_of_newer(&scratch, &web, &site, &args);
    assert_exit(
        &run,
        0,
        &["5 release(s): v4.4.0, v4.5.0, v4.6.0, v4.7.0, v4.7.1-2"],
    );
    let index = fs::read_to_string(site.join("whl/cpu/ctranslate2/index.html")).unwrap();
    for version in ["4.4.0", "4.5.0", "4.6.0", "4.7.0", "4.7.1"] {
        assert!(
            index.contains(&format!("ctranslate2-{version}%2Bcpu-cp311")),
            "{version}: {index}"
        );
    }
    let front = fs::read_to_string(site.join("index.html")).unwrap();
    for tag in tags.iter().chain(&["v4.7.1-2"]) {
        assert!(front.contains(&format!("<tr><td>{tag}</td>")), "{tag}");
    }

    for form in [
        "+cpu$(touch${IFS}PWNED)",
        "+cpu`id`",
        "+cpu\u{202e}",
        "+cpu\"x",
    ] {
        write_chain(Some(form));
        let site = scratch.path().join("site2");
        let run = pages_of_newer(&scratch, &web, &site, &args);
        let manifest = earlier.join("v4.6.0/manifest.json");
        assert_exit(
            &run,
            2,
            &[
                manifest.to_str().unwrap(),
                "names no release writes",
                "wheel `",
            ],
        );
        for other in ["v4.4.0", "v4.5.0", "v4.7.0"] {
            assert!(
                !run.stderr.contains(&format!("{other}/manifest.json")),
                "{form}: only v4.6.0 is named: {}",
                run.stderr
            );
        }
        assert!(!run.stderr.contains('\u{202e}'), "{}", run.stderr);
        assert_nothing_written(&site);
    }
}
