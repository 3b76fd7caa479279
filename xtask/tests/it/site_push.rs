//! The scripts the release workflow runs with its token (`.github/scripts/`), run as the
//! workflow runs them against a bare git repository standing in for GitHub and a `gh` that
//! answers as its API does: `publish-site` pushes exactly the files `pages` writes and nothing
//! in the site (or in git's own config) acts as git's config, hooks, ignore rules or
//! attributes; the token travels in a header, never in a URL, an argument or a message; what
//! GitHub answers reaches the log escaped and never as a workflow command or a flag.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::common;
use crate::workflows;

/// A bare git repository standing in for GitHub, and a `gh` that answers the Pages API as
/// GitHub does: canned JSON, or `HTTP 404` on stderr with exit 1. Every `gh` call is logged.
struct FakeGithub {
    dir: tempfile::TempDir,
}

impl FakeGithub {
    fn new(pages: Option<&str>) -> FakeGithub {
        let pages = match pages {
            Some(json) => format!("printf '%s\\n' '{json}'"),
            None => "echo 'gh: Not Found (HTTP 404)' >&2; exit 1".to_string(),
        };
        FakeGithub::answering(&pages)
    }

    /// A `gh` whose answer to the Pages API is the shell text `pages`.
    fn answering(pages: &str) -> FakeGithub {
        let dir = tempfile::tempdir().unwrap();
        common::run_ok(
            Command::new("git")
                .args(["init", "-q", "--bare"])
                .arg(dir.path().join("remote.git")),
        );
        for sub in ["bin", "home"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let remote = dir.path().join("remote.git");
        common::write_script(
            &dir.path().join("bin/gh"),
            &format!(
                "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\"; done >> \"{log}\"\necho >> \"{log}\"\ncase \"$2\" in\n  */pages) {pages} ;;\n  */branches/gh-pages) git --git-dir=\"{remote}\" rev-parse -q --verify refs/heads/gh-pages >/dev/null || {{ echo 'gh: Branch not found (HTTP 404)' >&2; exit 1; }} ;;\n  *) exit 9 ;;\nesac\n",
                log = dir.path().join("gh.log").display(),
                remote = remote.display()
            ),
        );
        FakeGithub { dir }
    }

    fn remote(&self) -> String {
        self.dir.path().join("remote.git").display().to_string()
    }

    fn script(&self, name: &str, args: &[&str]) -> Output {
        self.script_with(name, args, &[])
    }

    /// Runs `.github/scripts/<name>` with the fake `gh` first on PATH, HOME an empty folder
    /// of its own (or one a test filled) and no token unless `env` gives one.
    fn script_with(&self, name: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
        let path = format!(
            "{}:{}",
            self.dir.path().join("bin").display(),
            std::env::var("PATH").unwrap()
        );
        Command::new(common::repo_root().join(".github/scripts").join(name))
            .args(args)
            .env("PATH", path)
            .env("HOME", self.dir.path().join("home"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("GH_TOKEN")
            .envs(env.iter().copied())
            .output()
            .unwrap()
    }

    fn push(&self, site: &Path) -> Output {
        self.script(
            "publish-site",
            &[
                site.to_str().unwrap(),
                &self.remote(),
                "gh-pages",
                "pip index",
            ],
        )
    }

    fn git(&self, args: &[&str]) -> Vec<u8> {
        common::run_ok(
            Command::new("git")
                .arg("--git-dir")
                .arg(self.remote())
                .args(args),
        )
        .stdout
    }

    /// The commit gh-pages points at, if there is one.
    fn head(&self) -> Option<String> {
        let out = Command::new("git")
            .args(["--git-dir", &self.remote(), "rev-parse", "-q", "--verify"])
            .arg("refs/heads/gh-pages")
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// The files of the remote's gh-pages branch.
    fn published(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.git(&["ls-tree", "-r", "--name-only", "gh-pages"]))
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Every entry of gh-pages: its path, mode and type, and the blob's bytes.
    fn tree(&self) -> BTreeMap<String, Vec<u8>> {
        let listing = self.git(&["ls-tree", "-r", "-z", "gh-pages"]);
        listing
            .split(|&b| b == 0)
            .filter(|e| !e.is_empty())
            .map(|entry| {
                let entry = String::from_utf8(entry.to_vec()).unwrap();
                let (meta, path) = entry.split_once('\t').unwrap();
                let fields: Vec<&str> = meta.split(' ').collect();
                assert_eq!(fields[..2], ["100644", "blob"], "{path}: {meta}");
                (path.to_string(), self.git(&["cat-file", "blob", fields[2]]))
            })
            .collect()
    }

    fn gh_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("gh.log")).unwrap_or_default()
    }
}

/// A site as `pages` writes it, with bytes git's conversions would change: CR LF and a lone
/// CR, no final newline, `$Id$` (the `ident` attribute), non-ASCII.
fn good_site() -> tempfile::TempDir {
    let site = tempfile::tempdir().unwrap();
    let files: [(&str, &[u8]); 5] = [
        (
            "index.html",
            b"<!DOCTYPE html>\r\n<p>caf\xc3\xa9 $Id$</p>\r\n",
        ),
        ("whl/cpu/index.html", b"<a href=\"ctranslate2/\">\rx"),
        ("whl/cpu/ctranslate2/index.html", b"links\r\n"),
        ("whl/cu12/ct2-variant-select/index.html", b"\n\n"),
        ("whl/cu12/index.html", b""),
    ];
    for (name, bytes) in files {
        let path = site.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    site
}

/// Every regular file below `dir` by its relative path, with its bytes.
fn files_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(folder) = todo.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                todo.push(entry.path());
            } else {
                let rel = entry.path().strip_prefix(dir).unwrap().to_owned();
                files.insert(
                    rel.to_str().unwrap().to_string(),
                    std::fs::read(entry.path()).unwrap(),
                );
            }
        }
    }
    files
}

/// Hooks of every name git runs around a commit, an index write or a push, each appending
/// its name to `marker`.
fn hooks(dir: &Path, marker: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for hook in [
        "pre-commit",
        "prepare-commit-msg",
        "commit-msg",
        "post-commit",
        "pre-push",
        "reference-transaction",
        "post-index-change",
        "pre-auto-gc",
        "post-checkout",
    ] {
        common::write_script(
            &dir.join(hook),
            &format!("#!/bin/sh\necho {hook} >> '{}'\n", marker.display()),
        );
    }
}

/// A script for `core.fsmonitor` that notes it ran.
fn fsmonitor(path: &Path, marker: &Path) {
    common::write_script(
        path,
        &format!("#!/bin/sh\necho fsmonitor >> '{}'\n", marker.display()),
    );
}

fn missing_git() -> bool {
    common::skip::missing("git", "apt-get install git")
}

/// publish-site pushes exactly the folder (plus `.nojekyll`) as the branch, replacing what it
/// held; a second run of the same folder is harmless; a folder that is not a site is exit 2
/// with nothing pushed.
#[test]
fn publish_site_replaces_the_branch_with_exactly_the_site() {
    if missing_git() {
        return;
    }
    let github = FakeGithub::new(None);
    let site = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(site.path().join("whl/cpu/ctranslate2")).unwrap();
    std::fs::write(site.path().join("index.html"), "<!DOCTYPE html>").unwrap();
    std::fs::write(site.path().join("whl/cpu/ctranslate2/index.html"), "links").unwrap();
    let site_arg = site.path().to_str().unwrap();
    let remote = github.remote();
    for _ in 0..2 {
        let out = github.push(site.path());
        assert!(out.status.success(), "{}", common::stdout_and_stderr(&out));
    }
    assert_eq!(
        github.published(),
        [".nojekyll", "index.html", "whl/cpu/ctranslate2/index.html"]
    );
    std::fs::remove_file(site.path().join("whl/cpu/ctranslate2/index.html")).unwrap();
    let out = github.push(site.path());
    assert!(out.status.success());
    assert_eq!(
        github.published(),
        [".nojekyll", "index.html"],
        "replaced, not merged"
    );

    let empty = tempfile::tempdir().unwrap();
    let out = github.push(empty.path());
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        common::stdout_and_stderr(&out)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was pushed"));
    let out = github.script("publish-site", &[site_arg, &remote, "bad..name", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(github.published(), [".nojekyll", "index.html"]);
}

/// The site `pages` really writes (a release of the cpu variant with its selector wheel, as
/// release.yml makes it) passes the rules and is pushed whole: the shapes publish-site allows
/// are the shapes `pages` writes.
#[test]
fn the_site_pages_writes_is_pushed_whole() {
    if missing_git() {
        return;
    }
    let scratch = common::Scratch::new();
    crate::release::fake_build(&scratch, "3.12");
    let dist = scratch.path().join("dist/v4.7.1");
    let run = crate::release::release(&scratch, &dist, "3.12");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let site = scratch.path().join("site");
    let run = scratch.run(&[
        "pages",
        "--release",
        dist.to_str().unwrap(),
        "--tag",
        "v4.7.1",
        "--download-base",
        "https://github.com/o/r/releases/download/",
        "--site-url",
        "https://o.github.io/r",
        "--out",
        site.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let github = FakeGithub::new(None);
    let out = github.push(&site);
    assert!(out.status.success(), "{}", common::stdout_and_stderr(&out));
    let files = files_of(&site);
    assert!(files.len() >= 5, "{files:?}");
    assert_eq!(github.tree(), files);
}

/// The pushed tree is the site's bytes exactly, whatever git's own config on the machine says
/// (`core.autocrlf`, an attributes file with `eol=crlf ident`, `core.hooksPath` with every
/// hook, `core.fsmonitor`, a template folder with hooks): none of it applies and nothing runs.
/// A second run pushes the same tree.
#[test]
fn a_site_is_pushed_byte_for_byte_whatever_gits_own_config_says() {
    if missing_git() {
        return;
    }
    let github = FakeGithub::new(None);
    let home = github.dir.path().join("home");
    let marker = github.dir.path().join("ran");
    hooks(&home.join("hooks"), &marker);
    hooks(&home.join("template/hooks"), &marker);
    fsmonitor(&home.join("fsmonitor"), &marker);
    std::fs::write(home.join("attributes"), "* text eol=crlf ident\n").unwrap();
    std::fs::write(
        home.join(".gitconfig"),
        format!(
            "[core]\n\tautocrlf = true\n\thooksPath = {h}/hooks\n\tfsmonitor = {h}/fsmonitor\n\tattributesFile = {h}/attributes\n[init]\n\ttemplateDir = {h}/template\n",
            h = home.display()
        ),
    )
    .unwrap();
    let site = good_site();
    let mut expected = files_of(site.path());
    expected.insert(".nojekyll".into(), Vec::new());
    let mut trees = Vec::new();
    for _ in 0..2 {
        let out = github.push(site.path());
        assert!(out.status.success(), "{}", common::stdout_and_stderr(&out));
        assert_eq!(github.tree(), expected);
        trees.push(github.git(&["rev-parse", "gh-pages^{tree}"]));
    }
    assert_eq!(trees[0], trees[1], "a second run pushes the same tree");
    assert!(
        !marker.exists(),
        "ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
}

/// Pushes a good site, then each hostile one: each is exit 2 naming `name` (escaped), runs
/// nothing (no hook, no fsmonitor) and leaves the branch as it was.
fn assert_refused(github: &FakeGithub, cases: Vec<(String, tempfile::TempDir)>, marker: &Path) {
    let out = github.push(good_site().path());
    assert!(out.status.success(), "{}", common::stdout_and_stderr(&out));
    let before = github.head();
    for (name, site) in cases {
        let out = github.push(site.path());
        let said = common::stdout_and_stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{name}: {said}");
        let named = format!("{}/{name}", site.path().display());
        assert!(said.contains(&named), "{name}: {said}");
        assert!(said.contains("nothing was pushed"), "{name}: {said}");
        assert!(
            said.lines().all(|l| !l.starts_with("::")),
            "{name}: a line the runner reads as a command: {said}"
        );
        assert_eq!(github.head(), before, "{name}: pushed");
        assert!(
            !marker.exists(),
            "{name}: ran {}",
            std::fs::read_to_string(marker).unwrap_or_default()
        );
    }
}

fn git_in(dir: &Path, args: &[&str]) {
    common::run_ok(
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=u", "-c", "user.email=u@x"])
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null"),
    );
}

/// A repository planted in the site: a `.git` folder at the top (with every hook, a
/// `core.fsmonitor` in its config and a history of its own), one in a subfolder (a nested
/// repository, which `git add` records as a gitlink), a `.git` file pointing at a repository
/// with hooks, at the top and below: each is exit 2 naming it, and nothing runs or is pushed.
#[test]
fn a_git_folder_or_file_anywhere_in_the_site_runs_nothing_and_pushes_nothing() {
    if missing_git() {
        return;
    }
    let github = FakeGithub::new(None);
    let marker = github.dir.path().join("ran");
    let elsewhere = github.dir.path().join("elsewhere.git");
    git_in(
        github.dir.path(),
        &["init", "-q", "--bare", "elsewhere.git"],
    );
    hooks(&elsewhere.join("hooks"), &marker);
    let planted = |at: &str| {
        let site = good_site();
        let repo = site.path().join(at);
        git_in(&repo, &["init", "-q"]);
        hooks(&repo.join(".git/hooks"), &marker);
        let monitor = site.path().join("..").join(format!(
            "{}-fsmonitor",
            site.path().file_name().unwrap().to_str().unwrap()
        ));
        fsmonitor(&monitor, &marker);
        git_in(
            &repo,
            &["config", "core.fsmonitor", monitor.to_str().unwrap()],
        );
        std::fs::write(repo.join("history.txt"), "an old secret").unwrap();
        git_in(&repo, &["add", "history.txt"]);
        git_in(&repo, &["commit", "-q", "--no-verify", "-m", "old"]);
        std::fs::remove_file(repo.join("history.txt")).unwrap();
        // Setting it up ran the planted hooks; only what publish-site runs counts.
        let _ = std::fs::remove_file(&marker);
        site
    };
    let git_file = |at: &str| {
        let site = good_site();
        std::fs::write(
            site.path().join(at).join(".git"),
            format!("gitdir: {}\n", elsewhere.display()),
        )
        .unwrap();
        site
    };
    let cases = vec![
        (".git".to_string(), planted("")),
        ("whl/cpu/.git".to_string(), planted("whl/cpu")),
        (".git".to_string(), git_file("")),
        ("whl/cu12/.git".to_string(), git_file("whl/cu12")),
    ];
    assert_refused(&github, cases, &marker);
}

/// The site's own `.gitignore` (one that drops `whl/`), `.gitattributes` (`eol=crlf ident`, a
/// filter), `.gitmodules`, at the top or below: exit 2 naming each, nothing pushed.
#[test]
fn gits_control_files_in_the_site_are_refused_by_name() {
    if missing_git() {
        return;
    }
    let github = FakeGithub::new(None);
    let cases = [
        (".gitignore", "whl/\n"),
        (
            ".gitattributes",
            "* text eol=crlf ident\n*.html filter=evil\n",
        ),
        (
            ".gitmodules",
            "[submodule \"x\"]\n\tpath = x\n\turl = ../x\n",
        ),
        ("whl/cpu/.gitignore", "*\n"),
        ("whl/.gitattributes", "* -text\n"),
    ]
    .into_iter()
    .map(|(name, text)| {
        let site = good_site();
        std::fs::write(site.path().join(name), text).unwrap();
        (name.to_string(), site)
    })
    .collect();
    assert_refused(&github, cases, &github.dir.path().join("ran"));
}

/// What is not a regular file of one link, or not a name `pages` writes: a link to a file
/// outside and one to a folder, a FIFO, a socket, a device, a hard link to a file outside, a
/// file `pages` does not write (`CNAME`, a script, upper case), and a name with a newline and
/// a workflow command in it (shown escaped): exit 2 naming each, nothing pushed.
#[test]
fn links_fifos_sockets_devices_and_hard_links_in_the_site_are_refused_by_name() {
    if missing_git() {
        return;
    }
    let github = FakeGithub::new(None);
    let secret = github.dir.path().join("secret");
    std::fs::write(&secret, "a file outside the site").unwrap();
    let with = |name: &str, make: &dyn Fn(&Path)| {
        let site = good_site();
        let path = site.path().join(name);
        let _ = std::fs::remove_file(&path);
        make(&path);
        (name.to_string(), site)
    };
    let mknod = |path: &Path, kind: &str| {
        common::run_ok(Command::new(kind).arg(path));
    };
    let mut cases = vec![
        with("whl/cpu/ctranslate2/index.html", &|p| {
            std::os::unix::fs::symlink(&secret, p).unwrap()
        }),
        with("whl/cu13", &|p| {
            std::os::unix::fs::symlink(github.dir.path(), p).unwrap()
        }),
        with("whl/cpu/index.html", &|p| mknod(p, "mkfifo")),
        with("whl/cpu/ctranslate2/index.html", &|p| {
            std::mem::forget(std::os::unix::net::UnixListener::bind(p).unwrap())
        }),
        with("whl/cu12/index.html", &|p| {
            std::fs::hard_link(&secret, p).unwrap()
        }),
        with("CNAME", &|p| std::fs::write(p, "evil.example").unwrap()),
        with("whl/cpu/run.sh", &|p| {
            std::fs::write(p, "#!/bin/sh").unwrap()
        }),
        with("whl/Cpu", &|p| std::fs::create_dir(p).unwrap()),
    ];
    // Only root makes a device node; the other forms run for everyone.
    if !common::skip::not_root("a device node in the site (mknod)") {
        cases.push(with("whl/cpu/index.html", &|p| {
            common::run_ok(Command::new("mknod").arg(p).args(["c", "1", "3"]));
        }));
    }
    let odd = good_site();
    std::fs::write(odd.path().join("whl/cpu/x\n::error::y"), "").unwrap();
    cases.push(("whl/cpu/x\\x0A::error::y".to_string(), odd));
    assert_refused(&github, cases, &github.dir.path().join("ran"));
}

/// A loopback server standing in for GitHub's git over HTTP: it keeps each request's head and
/// answers 403.
fn refusing_server() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let heads = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&heads);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            kept.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&head).into_owned());
            let _ = stream.write_all(
                b"HTTP/1.1 403 Forbidden\r\nContent-Length: 6\r\nConnection: close\r\n\r\ndenied",
            );
        }
    });
    (base, heads)
}

/// With the token in GH_TOKEN, it reaches GitHub as actions/checkout sends it (an
/// `Authorization: basic` header of `x-access-token:<token>`) and appears in no argument of any
/// git command and in nothing printed, also when the push fails; a REMOTE carrying credentials
/// is exit 2 before any connection.
#[test]
fn the_token_goes_in_a_header_never_in_a_url_an_argument_or_a_message() {
    if missing_git() {
        return;
    }
    let github = FakeGithub::new(None);
    let args_log = github.dir.path().join("git-args");
    let real_git =
        String::from_utf8(common::run_ok(Command::new("sh").args(["-c", "command -v git"])).stdout)
            .unwrap();
    common::write_script(
        &github.dir.path().join("bin/git"),
        &format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            args_log.display(),
            real_git.trim()
        ),
    );
    let token = "ghs_Secret0123456789";
    let basic = String::from_utf8(
        common::run_ok(
            Command::new("sh").args(["-c", &format!("printf x-access-token:{token} | base64 -w0")]),
        )
        .stdout,
    )
    .unwrap();
    let (base, heads) = refusing_server();
    let site = good_site();
    let site_arg = site.path().to_str().unwrap();
    let remote = format!("{base}/owner/repo.git");
    let out = github.script_with(
        "publish-site",
        &[site_arg, &remote, "gh-pages", "pip index"],
        &[("GH_TOKEN", token)],
    );
    let said = common::stdout_and_stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("failed"), "{said}");
    let seen = heads.lock().unwrap().join("\n");
    assert!(
        seen.to_ascii_lowercase().contains(&format!(
            "authorization: basic {}",
            basic.to_ascii_lowercase()
        )),
        "{seen}"
    );
    let args = std::fs::read_to_string(&args_log).unwrap();
    for text in [&said, &args] {
        assert!(!text.contains(token) && !text.contains(&basic), "{text}");
    }

    heads.lock().unwrap().clear();
    let with_token = format!("{}//x-access-token:{token}@{}", "http:", &base[7..]);
    let out = github.script_with(
        "publish-site",
        &[
            site_arg,
            &format!("{with_token}/owner/repo.git"),
            "gh-pages",
            "x",
        ],
        &[("GH_TOKEN", token)],
    );
    let said = common::stdout_and_stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("GH_TOKEN") && !said.contains(token), "{said}");
    assert!(heads.lock().unwrap().is_empty(), "it connected");
}

/// pages-preflight, against each state of a repository's Pages: off on a fresh repository
/// (it creates the gh-pages branch there is then to choose, and names the exact setting),
/// publishing from GitHub Actions or another branch (names the setting), and right (passes,
/// saying where the index will be).
#[test]
fn the_pages_preflight_names_the_setting_to_change() {
    if missing_git() || common::skip::missing("jq", "apt-get install jq") {
        return;
    }
    let setting = "Source: Deploy from a branch; Branch: gh-pages, / (root)";
    let repo = "owner/repo";

    let fresh = FakeGithub::new(None);
    let out = fresh.script("pages-preflight", &[repo, &fresh.remote()]);
    let said = common::stdout_and_stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("::error title=Pages is off::") && said.contains(setting),
        "{said}"
    );
    assert!(said.contains("CT2V_PAGES=false"), "{said}");
    assert_eq!(
        fresh.published(),
        [".nojekyll", "index.html"],
        "the branch to choose"
    );
    // Run again: the branch is there, so nothing is pushed over it.
    let before = fresh.head();
    let _ = fresh.script("pages-preflight", &[repo, &fresh.remote()]);
    assert_eq!(fresh.head(), before);

    for (json, says) in [
        (
            r#"{"build_type":"workflow","source":{"branch":"main","path":"/"}}"#,
            "builds from workflow",
        ),
        (
            r#"{"build_type":"legacy","source":{"branch":"main","path":"/docs"}}"#,
            "branch main, folder /docs",
        ),
    ] {
        let github = FakeGithub::new(Some(json));
        let out = github.script("pages-preflight", &[repo, &github.remote()]);
        let said = common::stdout_and_stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(said.contains(says) && said.contains(setting), "{said}");
    }

    let right = FakeGithub::new(Some(
        r#"{"build_type":"legacy","html_url":"https://owner.github.io/repo/","source":{"branch":"gh-pages","path":"/"}}"#,
    ));
    let out = right.script("pages-preflight", &[repo, &right.remote()]);
    let said = common::stdout_and_stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("https://owner.github.io/repo/whl/<variant>/"),
        "{said}"
    );
}

/// OWNER/REPO is the only name that reaches the API path: a path that climbs or adds a query,
/// a name starting with `-`, a newline, too many or too few parts, each exit 2 naming it
/// (escaped) before `gh` is asked anything; a REMOTE carrying credentials likewise.
#[test]
fn the_pages_preflight_refuses_a_bad_repository_name_before_asking_github() {
    if missing_git() || common::skip::missing("jq", "apt-get install jq") {
        return;
    }
    for (repo, shown) in [
        ("owner/repo/../../user", "owner/repo/../../user"),
        ("owner/repo?per_page=1", "owner/repo?per_page=1"),
        ("-X/repo", "-X/repo"),
        ("owner/repo\n::add-mask::x", "owner/repo\\x0A::add-mask::x"),
        ("owner", "owner"),
        ("owner/../repo", "owner/../repo"),
    ] {
        let github = FakeGithub::new(None);
        let out = github.script("pages-preflight", &[repo, &github.remote()]);
        let said = common::stdout_and_stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{repo:?}: {said}");
        assert!(said.contains(shown), "{repo:?}: {said}");
        assert!(said.lines().all(|l| !l.starts_with("::")), "{said}");
        assert_eq!(github.gh_log(), "", "{repo:?}: asked GitHub");
    }
    let github = FakeGithub::new(None);
    let out = github.script(
        "pages-preflight",
        &[
            "owner/repo",
            "https://x-access-token:ghs_x@github.com/owner/repo.git",
        ],
    );
    let said = common::stdout_and_stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(!said.contains("ghs_x"), "{said}");
    assert_eq!(github.gh_log(), "");
}

/// What GitHub's API answers (an error text, the Pages source's branch, folder and URL)
/// reaches the log escaped: a newline in it never starts a line the runner would read as a
/// workflow command (`::add-mask::`, `::stop-commands::`), and `%0A` is not decoded into one.
#[test]
fn the_pages_preflight_shows_what_github_answers_escaped() {
    if missing_git() || common::skip::missing("jq", "apt-get install jq") {
        return;
    }
    let injected = r"\n::add-mask::ghs_x\n::stop-commands::stop\n%0A::warning::y\u001b[31m";
    let failing = FakeGithub::answering(&format!(
        "printf 'gh: Server Error (HTTP 500){}' >&2; exit 1",
        injected.replace(r"\u001b", r"\033").replace('%', "%%")
    ));
    let wrong = FakeGithub::new(Some(&format!(
        r#"{{"build_type":"legacy","source":{{"branch":"main{injected}","path":"/{injected}"}}}}"#
    )));
    let right = FakeGithub::new(Some(&format!(
        r#"{{"build_type":"legacy","html_url":"https://owner.github.io/repo/{injected}","source":{{"branch":"gh-pages","path":"/"}}}}"#
    )));
    for (github, code) in [(failing, 1), (wrong, 1), (right, 0)] {
        let out = github.script("pages-preflight", &["owner/repo", &github.remote()]);
        let said = common::stdout_and_stderr(&out);
        assert_eq!(out.status.code(), Some(code), "{said}");
        assert!(said.contains(r"\x0A::add-mask::ghs_x"), "{said}");
        assert!(said.contains("%250A") || code == 0, "{said}");
        assert!(!said.contains('\u{1b}'), "{said}");
        for line in said.lines() {
            assert!(
                !line.starts_with("::") || line.starts_with("::error title="),
                "a workflow command from GitHub's answer: {line}\n{said}"
            );
        }
    }
}

/// Every step of every workflow and action, named by where it is.
fn every_step() -> Vec<(String, Value)> {
    let mut all = Vec::new();
    for (file, workflow) in workflows::workflows() {
        for (job, body) in workflows::jobs(&workflow) {
            for step in workflows::steps(body) {
                all.push((format!("{file} {job}"), step.clone()));
            }
        }
    }
    for action in ["build-setup", "tool"] {
        let path = format!(".github/actions/{action}/action.yml");
        for step in workflows::yaml(&path)["runs"]["steps"].as_array().unwrap() {
            all.push((path.clone(), step.clone()));
        }
    }
    all
}

/// The token is held only by the steps that use it: no checkout leaves it in `.git/config`
/// for every later step, action and build script to read (`persist-credentials: false`), no
/// `run:` puts it (or any token) into a URL or an argument, and the steps given it in their
/// environment run `gh` and the scripts of `.github/scripts/`, not the tool, with no `${{ }}`
/// expanded into their shell text.
#[test]
fn the_token_is_held_only_where_it_is_used_and_never_put_in_a_url() {
    let (mut checkouts, mut holders) = (0, 0);
    for (at, step) in every_step() {
        if step["uses"]
            .as_str()
            .is_some_and(|u| u.starts_with("actions/checkout@"))
        {
            checkouts += 1;
            assert_eq!(step["with"]["persist-credentials"], false, "{at}: {step}");
        }
        let run = workflows::run_of(&step);
        for leak in [
            "x-access-token",
            "GH_TOKEN",
            "GITHUB_TOKEN",
            "github.token",
            "secrets.",
        ] {
            assert!(!run.contains(leak), "{at}: `{leak}` in {run}");
        }
        if step["env"]["GH_TOKEN"].is_string() || step["env"]["GITHUB_TOKEN"].is_string() {
            holders += 1;
            assert!(
                !run.contains("${{") && !run.contains("xtask "),
                "{at}: {run}"
            );
        }
    }
    assert!(checkouts >= 9, "{checkouts}");
    assert_eq!(
        holders, 6,
        "the preflight, this release's manifest, the earlier manifests, the two publishes and main's native libraries"
    );
}

/// The pip-index job's step that gathers the earlier releases' manifests, run as the workflow
/// runs it (`bash -e -o pipefail`, the repository's scripts) against a `gh` whose release list
/// holds tags a flag parser would take for flags (`--clobber`, `-Oevil`), one with a `/` and
/// one without a manifest: every tag reaches `gh` after `--`, the `/` one and the missing
/// manifest are warned about (escaped), nothing is written outside `earlier/`.
#[test]
fn earlier_release_tags_reach_gh_as_data_never_as_flags() {
    if missing_git() {
        return;
    }
    let release = workflows::yaml(&format!("{}/release.yml", workflows::WORKFLOWS));
    let step = workflows::steps(&release["jobs"]["pip-index"])
        .iter()
        .find(|s| s["env"]["GH_TOKEN"].is_string() && workflows::run_of(s).contains("earlier"))
        .expect("a step that gathers the earlier manifests");
    let work = tempfile::tempdir().unwrap();
    let bin = work.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(
        common::repo_root().join(".github"),
        work.path().join(".github"),
    )
    .unwrap();
    let log = work.path().join("gh.log");
    common::write_script(
        &bin.join("gh"),
        &format!(
            r#"#!/bin/sh
for a in "$@"; do printf '[%s]' "$a"; done >> '{log}'; echo >> '{log}'
case "$1 $2" in
  "release list") printf '%s\n' v1.0 --clobber -Oevil v2.0 a/b v0.9 ;;
  "release download")
    while [ $# -gt 0 ]; do [ "$1" = --dir ] && dir=$2; [ "$1" = v0.9 ] && exit 1; shift; done
    mkdir -p "$dir" && echo '{{}}' > "$dir/manifest.json" ;;
  *) exit 9 ;;
esac
"#,
            log = log.display()
        ),
    );
    common::write_script(&bin.join("xtask"), "#!/bin/sh\nexit 0\n");
    let out = Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c"])
        .arg(workflows::run_of(step))
        .current_dir(work.path())
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
        )
        .envs([
            ("GITHUB_REF_NAME", "v2.0"),
            ("GITHUB_REPOSITORY", "owner/repo"),
            ("GITHUB_REPOSITORY_OWNER", "owner"),
            ("GH_TOKEN", "ghs_x"),
        ])
        .output()
        .unwrap();
    let said = common::stdout_and_stderr(&out);
    assert!(out.status.success(), "{said}");
    let downloads: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("[release][download]"))
        .map(str::to_string)
        .collect();
    let expected: Vec<String> = ["v1.0", "--clobber", "-Oevil", "v0.9"]
        .iter()
        .map(|t| {
            format!("[release][download][--pattern][manifest.json][--dir][earlier/{t}][--][{t}]")
        })
        .collect();
    assert_eq!(downloads, expected, "{said}");
    assert!(
        said.contains("`a/b`") && said.contains("v0.9 has no manifest.json"),
        "{said}"
    );
    for line in said.lines().filter(|l| l.starts_with("::")) {
        assert!(
            line.starts_with("::warning title=Earlier release::"),
            "{line}"
        );
    }
    let mut written: Vec<String> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    assert_eq!(written, [".github", "bin", "earlier", "gh.log"]);
    assert!(work.path().join("earlier/-Oevil/manifest.json").is_file());
}
