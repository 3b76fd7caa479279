//! README.md as a first-time maintainer meets it: every shell command in its code blocks runs
//! here and exits as shown, or is listed below with the reason it cannot run on this machine
//! (and where it is covered instead); the user's install command installs from a served index
//! with its dependencies, with pip and with uv; the facts the docs state agree with the code;
//! every relative link resolves.

use ct2v_support::report::Reporter;
use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::{self, Scratch, assert_exit, repo_root};
use crate::needs_network;

/// Commands of README.md that this test does not run, and why.
const NOT_RUN_HERE: &[(&str, &str)] = &[
    ("cargo test --workspace", "this test is part of it"),
    (
        "cargo xtask build --variant cpu",
        "a cold build takes 25-60 min: .ci/e2e-cpu runs it, then this test with CT2V_README_BUILT=1",
    ),
    (
        "cargo xtask fetch --variant cpu",
        "downloads about 500 MB (oneDNN, MKL); the pinned sources are fetched by tests/it/network.rs",
    ),
    (
        "cargo xtask bump --ctranslate2 4.8.5 --from-tag v4.8.5",
        "reads api.github.com, which this machine does not reach: tests/it/github_tag_source.rs runs it against a loopback GitHub",
    ),
    (
        "cargo xtask pin --variant rocm --ctranslate2 4.8.5",
        "needs the 4.8.5 file bump writes, GitHub and AMD's index: tests/it/fetch_pin.rs pins from a loopback index",
    ),
    ("git tag v4.8.5 && git push --tags", "publishes a release"),
];

/// Commands that need the cpu build `.ci/e2e-cpu` makes (run with CT2V_README_BUILT=1).
const AFTER_A_BUILD: &[&str] = &[
    "cargo xtask build --variant cpu --python 3.12 --prebuilt-native",
    "cargo xtask verify --variant cpu --transcribe",
    "cargo xtask smoke --variant cpu --frozen",
    "cargo xtask release --variants cpu --platforms linux-x86_64 --pythons 3.12 --allow-linux-tag",
    "cargo xtask verify-release target/dist/4.7.1 --install --transcribe",
];

/// The user-facing commands, run against a served release by the test below.
const USER_INSTALL: &[&str] = &[
    "pip install --extra-index-url https://OWNER.github.io/REPO/whl/cuda \"ctranslate2==4.7.1+cu12\"",
    "uv pip install --extra-index-url https://OWNER.github.io/REPO/whl/cpu \"ctranslate2==4.7.1+cpu\"",
];

/// Every command line of the README's ```sh blocks (continuations joined, comments dropped).
fn readme_commands() -> Vec<String> {
    let text = fs::read_to_string(repo_root().join("README.md")).unwrap();
    let mut commands = Vec::new();
    let mut in_block = false;
    let mut pending = String::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_block = line == "```sh";
            continue;
        }
        if !in_block {
            continue;
        }
        let code = line.split(" #").next().unwrap_or("").trim_end();
        if let Some(head) = code.strip_suffix('\\') {
            pending.push_str(head.trim_end());
            pending.push(' ');
            continue;
        }
        pending.push_str(code.trim());
        let command = pending.split_whitespace().collect::<Vec<_>>().join(" ");
        pending.clear();
        if !command.is_empty() {
            commands.push(command);
        }
    }
    commands
}

/// A command line split as a POSIX shell splits one with double quotes only.
fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in command.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

#[test]
fn every_readme_command_runs_or_says_why_not() {
    let built = std::env::var("CT2V_README_BUILT").is_ok_and(|v| v == "1");
    let mut ran = 0;
    for command in readme_commands() {
        if NOT_RUN_HERE.iter().any(|(c, _)| *c == command)
            || USER_INSTALL.contains(&command.as_str())
        {
            continue;
        }
        if AFTER_A_BUILD.contains(&command.as_str()) && !built {
            continue;
        }
        let args = words(&command);
        assert!(
            args.starts_with(&["cargo".to_string(), "xtask".to_string()]),
            "README.md runs `{command}`: add it to a list of readme.rs with the reason it does not run here"
        );
        let args: Vec<&str> = args[2..].iter().map(String::as_str).collect();
        // As a maintainer runs them: from the checkout's root (relative paths are theirs), on
        // this machine's own glibc (a build here is tagged for it).
        let mut xtask = Command::new(env!("CARGO_BIN_EXE_xtask"));
        xtask.current_dir(repo_root());
        let run = common::output_of(xtask, &args, &[], &[ct2v_support::host::GLIBC_ENV]);
        assert_eq!(
            run.code, 0,
            "README.md: `{command}` exited {}:\n{}",
            run.code, run.stderr
        );
        ran += 1;
    }
    assert!(ran >= 4, "only {ran} README commands ran");
    // The lists name only commands the README has.
    let all = readme_commands();
    for listed in NOT_RUN_HERE
        .iter()
        .map(|(c, _)| *c)
        .chain(AFTER_A_BUILD.iter().copied())
        .chain(USER_INSTALL.iter().copied())
    {
        assert!(
            all.iter().any(|c| c == listed),
            "`{listed}` is no longer in README.md: drop it from readme.rs"
        );
    }
}

/// Serves a release of the official Linux wheel as `cpu` and as `cuda` (+cpu, +cu12).
fn served_release(scratch: &Scratch) -> (ct2v_proof::serve::Server, String) {
    crate::speech::stand_in_build(scratch);
    let python = ct2v_support::host::python_version(&Reporter::captured()).unwrap();
    let cpu = scratch
        .path()
        .join(format!("target/xtask/cpu/linux-x86_64/dist/py{python}"));
    let cuda = scratch
        .path()
        .join(format!("target/xtask/cuda/linux-x86_64/dist/py{python}"));
    common::copy_tree(&cpu, &cuda);
    fs::write(
        cuda.join("build-info.json"),
        r#"{"sdk": {"version": "12.8"}}"#,
    )
    .unwrap();
    let release = scratch.path().join("release");
    let run = scratch.run(&common::command_args::release(
        "cpu,cuda",
        "linux-x86_64",
        &python,
        release.to_str().unwrap(),
        &["--allow-linux-tag"],
    ));
    assert_exit(&run, 0, &[]);
    let server = ct2v_proof::serve::Server::start(&release).unwrap();
    let base = server.url("");
    (server, base)
}

/// A fresh venv; its python.
fn venv(dir: &Path) -> std::path::PathBuf {
    common::run_ok(Command::new("python3").args(["-m", "venv"]).arg(dir));
    dir.join("bin/python")
}

/// `command` of the README with the Pages URL replaced by `base`, run as a user would (pip's
/// variables of this machine left out).
fn run_user(command: &str, base: &str, venv_dir: &Path, uv: Option<&Path>) -> std::process::Output {
    let command = command.replace("https://OWNER.github.io/REPO", base);
    let words = words(&command);
    let mut cmd = match (words[0].as_str(), uv) {
        ("pip", _) => {
            let mut c = Command::new(venv_dir.join("bin/python"));
            c.args(["-m", "pip"]);
            c
        }
        ("uv", Some(uv)) => {
            let mut c = Command::new(uv);
            c.env("VIRTUAL_ENV", venv_dir);
            c
        }
        (other, _) => panic!("no runner for `{other}`"),
    };
    cmd.args(&words[1..]);
    for (key, _) in std::env::vars().filter(|(k, _)| k.starts_with("PIP_") || k.starts_with("UV_"))
    {
        cmd.env_remove(key);
    }
    cmd.output().unwrap()
}

fn installed_version(python: &Path) -> String {
    let out = common::run_ok(Command::new(python).args([
        "-c",
        "import importlib.metadata as m, ctranslate2, numpy; print(m.version('ctranslate2'))",
    ]));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn the_documented_install_installs_with_its_dependencies_with_pip_and_uv() {
    needs_network!(&["pypi.org:443", "files.pythonhosted.org:443"]);
    let scratch = Scratch::new();
    let (_server, base) = served_release(&scratch);
    for (i, command) in USER_INSTALL.iter().enumerate() {
        let dir = scratch.path().join(format!("user-{i}"));
        let python = venv(&dir);
        let uv = command.starts_with("uv ").then(|| {
            common::run_ok(Command::new(&python).args(["-m", "pip", "install", "--quiet", "uv"]));
            dir.join("bin/uv")
        });
        let out = run_user(command, &base, &dir, uv.as_deref());
        assert!(
            out.status.success(),
            "`{command}`:\n{}",
            common::stdout_and_stderr(&out)
        );
        let label = command.rsplit('+').next().unwrap().trim_end_matches('"');
        assert_eq!(
            installed_version(&python),
            format!("4.7.1+{label}"),
            "{command}"
        );
    }
}

#[test]
fn the_facts_the_docs_state_agree_with_the_code() {
    let root = repo_root();
    // The Rust version.
    let cargo = fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let version = cargo
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .expect("rust-version in Cargo.toml")
        .trim_matches('"');
    let readme = fs::read_to_string(root.join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("Rust {version} or newer")),
        "README's Rust version is not {version}"
    );
    // The inputs the Windows cpu fetch verifies (docs/windows-first-run.md).
    let run = common::xtask(&[
        "plan",
        "--variant",
        "cpu",
        "--platform",
        "windows-x86_64",
        "--python",
        "3.12",
        "--json",
    ]);
    let plan: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let names: Vec<&str> = plan["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    let first_run = fs::read_to_string(root.join("docs/windows-first-run.md")).unwrap();
    let claim = format!(
        "| fetch | {} inputs verified ({}) |",
        names.len(),
        names.join(", ")
    );
    assert!(
        first_run.contains(&claim),
        "docs/windows-first-run.md should say `{claim}`"
    );
    // What the rocm wheel carries: hiprtc is not forced in, and no doc says it is bundled.
    let rocm = fs::read_to_string(root.join("variants/rocm.toml")).unwrap();
    let force = rocm
        .lines()
        .find(|l| l.starts_with("force = "))
        .unwrap_or_default();
    assert!(!force.contains("hiprtc"), "{force}");
    let setup = fs::read_to_string(root.join("docs/gpu-setup.md")).unwrap();
    assert!(
        setup.contains("`hiprtc` is not bundled"),
        "docs/gpu-setup.md"
    );
    // No issue tracker numbers in the docs: they are not in this repository.
    for page in doc_pages() {
        let text = fs::read_to_string(&page).unwrap();
        let lower = text.to_lowercase();
        for word in ["issue ", "issues "] {
            for (at, _) in lower.match_indices(word) {
                let next = lower[at + word.len()..].chars().next().unwrap_or(' ');
                assert!(
                    !next.is_ascii_digit(),
                    "{}: an issue number",
                    page.display()
                );
            }
        }
    }
}

fn doc_pages() -> Vec<std::path::PathBuf> {
    let root = repo_root();
    let mut pages = vec![root.join("README.md"), root.join("BENCHMARKS.md")];
    for entry in fs::read_dir(root.join("docs")).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "md") {
            pages.push(entry.path());
        }
    }
    pages
}

#[test]
fn every_relative_link_of_the_docs_resolves() {
    let mut broken = Vec::new();
    for page in doc_pages() {
        let text = fs::read_to_string(&page).unwrap();
        for part in text.split("](").skip(1) {
            let target = part.split(')').next().unwrap_or_default();
            let target = target.split('#').next().unwrap_or_default();
            if target.is_empty() || target.contains("://") || target.contains(' ') {
                continue;
            }
            let path = page.parent().unwrap().join(target);
            if !path.exists() {
                broken.push(format!("{}: {target}", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// A guarantee in the docs names its tests as `` `path.rs::function` ``: each must exist as a
/// test in that file, so that a renamed or deleted test cannot leave a promise unbacked.
#[test]
fn every_test_the_docs_name_exists() {
    let root = repo_root();
    let mut missing = Vec::new();
    let mut named = 0;
    for page in doc_pages() {
        let text = fs::read_to_string(&page).unwrap();
        for quoted in text.split('`').skip(1).step_by(2) {
            let Some((file, function)) = quoted.split_once(".rs::") else {
                continue;
            };
            if file.contains(' ') || function.contains([' ', ':']) {
                continue;
            }
            named += 1;
            // `crates/<crate>/src/…` from the root; `tests/it/…` and `src/…` of xtask.
            let path = if file.starts_with("crates/") {
                root.join(format!("{file}.rs"))
            } else {
                root.join("xtask").join(format!("{file}.rs"))
            };
            let source = fs::read_to_string(&path).unwrap_or_default();
            let is_test = source
                .split("#[test]")
                .skip(1)
                .any(|after| after.trim_start().starts_with(&format!("fn {function}(")));
            if !is_test {
                missing.push(format!("{}: {quoted}", page.display()));
            }
        }
    }
    assert!(
        named >= 40,
        "only {named} tests named: is docs/reliability.md there?"
    );
    assert!(
        missing.is_empty(),
        "named but no such test:\n{}",
        missing.join("\n")
    );
}
