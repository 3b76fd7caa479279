//! `verify-release` against a release folder tampered with after `release` wrote it: every
//! change to the pip index or the folder's contents is found, named with its file and line.

use std::fs;
use std::path::Path;

use crate::common::{Scratch, assert_exit};
use crate::release::{fake_build, release};

const PAGE: &str = "whl/cpu/ctranslate2/index.html";

/// A release of the cpu Linux py3.11 fake build, and a copy of it per tampering case.
fn released() -> (Scratch, std::path::PathBuf) {
    let scratch = Scratch::new();
    fake_build(&scratch, "3.11");
    let out = scratch.path().join("target/dist/4.7.1");
    let run = release(&scratch, &out, "3.11");
    assert_eq!(run.code, 0, "{}", run.stderr);
    (scratch, out)
}

fn copy_of(scratch: &Scratch, out: &Path, name: &str) -> std::path::PathBuf {
    let copy = scratch.path().join("tampered").join(name);
    crate::common::copy_tree(out, &copy);
    copy
}

#[test]
fn every_tampered_index_or_extra_file_fails_and_is_named() {
    let (scratch, out) = released();
    let verify = |dir: &Path| scratch.run(&["verify-release", dir.to_str().unwrap()]);
    assert_exit(&verify(&out), 0, &["agrees"]);
    let page = fs::read_to_string(out.join(PAGE)).unwrap();
    let link_line = page.lines().position(|l| l.contains("<a href=")).unwrap() + 1;
    type Edit = fn(&str) -> String;
    let cases: &[(&str, Edit, &str)] = &[
        (
            "a link elsewhere without a hash",
            |p| {
                p.replacen(
                    "<a href=\"",
                    "<a href=\"https://evil.example/x.whl\" data-x=\"",
                    1,
                )
            },
            "line",
        ),
        (
            "single quotes",
            |p| {
                p.replace("<a href=\"", "<a href='")
                    .replacen("\">", "'>", 1)
            },
            "line",
        ),
        (
            "a script injected",
            |p| p.replace("</body>", "<script>alert(1)</script></body>"),
            "line",
        ),
        (
            "the page replaced",
            |_| "<html><body><a href=\"x.whl\">x.whl</a></body></html>\n".into(),
            "line 1",
        ),
        (
            "a hash changed",
            |p| p.replacen("#sha256=", "#sha256=00", 1),
            "line",
        ),
    ];
    for (what, edit, needle) in cases {
        let dir = copy_of(&scratch, &out, "page");
        fs::write(dir.join(PAGE), edit(&page)).unwrap();
        let run = verify(&dir);
        assert_exit(&run, 1, &[PAGE, needle]);
        if *what == "a link elsewhere without a hash" {
            assert!(
                run.stderr.contains(&format!("line {link_line}")),
                "{what}: {}",
                run.stderr
            );
        }
        fs::remove_dir_all(&dir).unwrap();
    }
    // Added pages, folders and files.
    let dir = copy_of(&scratch, &out, "extra");
    fs::create_dir_all(dir.join("whl/evil/ctranslate2")).unwrap();
    fs::write(
        dir.join("whl/evil/ctranslate2/index.html"),
        "<a href=\"x\">x</a>",
    )
    .unwrap();
    fs::write(dir.join("whl/cpu/ctranslate2/other.whl"), "x").unwrap();
    fs::create_dir_all(dir.join("more")).unwrap();
    fs::write(
        dir.join("ctranslate2-9.9.9+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"),
        "x",
    )
    .unwrap();
    let run = verify(&dir);
    assert_exit(
        &run,
        1,
        &[
            "whl/evil/ctranslate2/index.html: not written by release",
            "whl/cpu/ctranslate2/other.whl: not written by release",
            "more: not a file release writes (a folder)",
            "ctranslate2-9.9.9+cpu-cp311-cp311-manylinux_2_28_x86_64.whl is not in SHA256SUMS",
        ],
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_in_a_release_folder_is_refused_not_waited_for() {
    let (scratch, out) = released();
    let dir = copy_of(&scratch, &out, "fifo");
    let fifo = dir.join("notes.fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    fs::remove_file(dir.join("manifest.json")).unwrap();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(dir.join("manifest.json"))
            .status()
            .unwrap()
            .success()
    );
    let started = std::time::Instant::now();
    let run = scratch.run(&["verify-release", dir.to_str().unwrap()]);
    assert!(started.elapsed().as_secs() < 20, "it waited on a FIFO");
    assert_exit(
        &run,
        1,
        &[
            "notes.fifo: not a file release writes (a special file)",
            "manifest.json is not a regular file",
        ],
    );
}

#[test]
fn an_index_base_url_that_would_break_the_html_is_refused() {
    let scratch = Scratch::new();
    fake_build(&scratch, "3.11");
    for bad in [
        "https://x/\"><script>/",
        "https://x/a b/",
        "ftp://x/",
        "v4.7.1/",
    ] {
        let out = scratch.path().join("target/dist/bad");
        let run = scratch.run(&[
            "release",
            "--variants",
            "cpu",
            "--platforms",
            "linux-x86_64",
            "--pythons",
            "3.11",
            "--out",
            out.to_str().unwrap(),
            "--index-base-url",
            bad,
        ]);
        assert_exit(&run, 2, &["--index-base-url", "is not allowed"]);
        assert!(!out.exists(), "{bad}: nothing written");
    }
}
