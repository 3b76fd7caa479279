//! Versions, tags and URLs that end up in a file, a link, a path or a command are checked
//! before any work: a hostile value is exit 2 naming its flag (the value escaped and cut),
//! and nothing is written; the values the project really uses (PEP 440 local versions,
//! https, loopback http) still pass.

use std::fs;
use std::path::Path;

use crate::common::command_args::{cpu_job, release_cpu};
use crate::common::{self, Run, Scratch};
use crate::release::{fake_build, release};

/// Values every version flag refuses (a long one is added where they are used).
const BAD_VERSIONS: &[&str] = &[
    "4.7.1\nx",
    "4.7.1\u{1b}[2J",
    "",
    "4.7.1 beta",
    "../../X",
    "latest",
    "4.7.1+Rocm10",
    "4.7.1\u{202e}",
    "4.7.1\u{200b}",
];

/// Values every tag flag refuses (given as `--flag=VALUE`, so that `-v4` is a value).
const BAD_TAGS: &[&str] = &[
    "v4.7.1\nx",
    "v4.7.1\u{1b}[2J",
    "",
    "v4..7",
    "v4~1",
    "v 4",
    "v4.7.1.lock",
    "-v4",
    "v4:1",
    "v4/",
    // Git's refname rules allow these; shown, they reorder or hide the text around them.
    "v1\u{202e}1.4v",
    "v4.7.1\u{200b}",
    "\u{2066}v4.7.1\u{2069}",
    "\u{feff}v4.7.1",
];

/// What a terminal must never get raw from a refused value: ESC, a bidi override or isolate,
/// a zero-width character, a byte-order mark.
const HIDDEN: &[char] = &[
    '\u{1b}', '\u{202e}', '\u{200b}', '\u{2066}', '\u{2069}', '\u{feff}',
];

/// Values every URL flag refuses.
const BAD_URLS: &[&str] = &[
    "https://x/\n/",
    "https://x/\u{1b}[2J/",
    "",
    "file:///x/",
    "javascript:alert(1)//",
    "http://example.com/",
    "ftp://host/",
    "https://user:pw@host/",
    "https://host/a b/",
    "https://host/$(id)/",
    "https://host/?q=/",
];

fn long(prefix: &str) -> String {
    format!("{prefix}{}", "1".repeat(5_000))
}

/// `run` refused `value` of `flag` as bad input before any work: exit 2, the flag named with
/// the value escaped and cut, and `out` absent or empty.
fn refused(run: &Run, flag: &str, value: &str, out: &Path) {
    common::assert_exit(run, 2, &[&format!("{flag} `"), "is not allowed"]);
    assert!(
        !run.stderr.contains(HIDDEN) && run.stderr.len() < 1_000,
        "{flag} {value:?}: the value is escaped and cut: {}",
        run.stderr
    );
    let written = fs::read_dir(out).map_or(0, |entries| entries.count());
    assert_eq!(written, 0, "{flag} {value:?}: nothing written");
}

#[test]
fn release_refuses_a_bad_version_or_index_base_url_and_writes_nothing() {
    let scratch = Scratch::new();
    fake_build(&scratch, "3.12");
    let out = scratch.path().join("dist/bad");
    let release_with = |flag: &str, value: &str| {
        let flag = format!("{flag}={value}");
        scratch.run(&release_cpu(out.to_str().unwrap(), "3.12", &[&flag]))
    };
    let long_version = long("4.7.");
    for version in BAD_VERSIONS.iter().copied().chain([long_version.as_str()]) {
        refused(
            &release_with("--version", version),
            "--version",
            version,
            &out,
        );
    }
    let long_url = long("https://x/");
    let no_slash = "https://github.com/o/r/releases/download/v4.7.1";
    for url in BAD_URLS
        .iter()
        .copied()
        .chain([long_url.as_str(), no_slash])
    {
        let run = release_with("--index-base-url", url);
        refused(&run, "--index-base-url", url, &out);
    }

    for (version, base) in [
        ("4.7.1+rocm10.rdna2", "http://127.0.0.1:8080/dl/"),
        (
            "4.7.1-2",
            "https://github.com/o/r/releases/download/v4.7.1-2/",
        ),
        ("4.7.1.post1", "http://[::1]:9/x/"),
    ] {
        let out = scratch.path().join("dist").join(version);
        let extra = ["--version", version, "--index-base-url", base];
        let run = scratch.run(&release_cpu(out.to_str().unwrap(), "3.12", &extra));
        common::assert_exit(&run, 0, &[]);
        let manifest: serde_json::Value =
            serde_json::from_slice(&fs::read(out.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(manifest["version"], version);
        let page = fs::read_to_string(out.join("whl/cpu/ctranslate2/index.html")).unwrap();
        assert!(
            page.contains(&format!("href=\"{base}ctranslate2-")),
            "{page}"
        );
    }
}

#[test]
fn pages_refuses_a_bad_tag_download_base_site_url_or_earlier_folder_and_writes_nothing() {
    let scratch = Scratch::new();
    fake_build(&scratch, "3.12");
    let dist = scratch.path().join("dist/4.7.1");
    common::assert_exit(&release(&scratch, &dist, "3.12"), 0, &[]);
    let site = scratch.path().join("site");
    let pages = |extra: &[&str]| {
        let mut args = vec![
            "pages",
            "--release",
            dist.to_str().unwrap(),
            "--out",
            site.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        scratch.run(&args)
    };
    let base = "https://github.com/o/r/releases/download/";
    let long_tag = long("v");
    for tag in BAD_TAGS.iter().copied().chain([long_tag.as_str()]) {
        let run = pages(&[&format!("--tag={tag}"), "--download-base", base]);
        refused(&run, "--tag", tag, &site);
    }
    let long_url = long("https://x/");
    let no_slash = "https://github.com/o/r/releases/download";
    for url in BAD_URLS.iter().copied().chain([long_url.as_str()]) {
        let run = pages(&["--tag", "v4.7.1", "--download-base", url]);
        refused(&run, "--download-base", url, &site);
        let run = pages(&[
            "--tag",
            "v4.7.1",
            "--download-base",
            base,
            "--site-url",
            url,
        ]);
        refused(&run, "--site-url", url, &site);
    }
    let run = pages(&["--tag", "v4.7.1", "--download-base", no_slash]);
    refused(&run, "--download-base", no_slash, &site);

    // An earlier release's folder is named by its tag, which its links carry.
    let earlier = scratch.path().join("earlier");
    for tag in [
        "v4..7",
        "v 4",
        "v4\u{1b}[2J",
        "-v4",
        "v4.lock",
        ".v4",
        "v1\u{202e}1.4v",
        "v4\u{200b}",
    ] {
        let folder = earlier.join(tag);
        fs::create_dir_all(&folder).unwrap();
        fs::copy(dist.join("manifest.json"), folder.join("manifest.json")).unwrap();
        let run = pages(&[
            "--tag",
            "v4.7.1",
            "--download-base",
            base,
            "--earlier",
            earlier.to_str().unwrap(),
        ]);
        common::assert_exit(&run, 2, &["is not a release's tag", "--earlier"]);
        assert!(!run.stderr.contains(HIDDEN), "{}", run.stderr);
        assert!(!site.exists(), "{tag:?}: nothing written");
        fs::remove_dir_all(&folder).unwrap();
    }

    for (tag, base, site_url) in [
        (
            "v4.7.1-2",
            "http://127.0.0.1:8080/dl/",
            "http://localhost:8000/site",
        ),
        ("v4.7.1+rocm10.rdna2", base, "https://o.github.io/r/"),
    ] {
        let run = pages(&[
            "--tag",
            tag,
            "--download-base",
            base,
            "--site-url",
            site_url,
        ]);
        common::assert_exit(&run, 0, &[]);
        let page = fs::read_to_string(site.join("whl/cpu/ctranslate2/index.html")).unwrap();
        let segment = tag.replace('+', "%2B");
        assert!(
            page.contains(&format!("href=\"{base}{segment}/ctranslate2-")),
            "{page}"
        );
        fs::remove_dir_all(&site).unwrap();
    }
}

#[test]
fn bump_refuses_a_bad_tag_or_source_url_before_writing_anything() {
    let scratch = Scratch::new();
    let file = scratch.path().join("variants/ctranslate2/4.8.9.toml");
    let patches = scratch.path().join("patches/ctranslate2-4.8.9");
    let bump = |flag: &str, value: &str| {
        // A closed loopback port stands for GitHub: what passes the flags fails at once.
        scratch.run(&[
            "bump",
            "--ctranslate2",
            "4.8.9",
            "--no-pin",
            "--mirror",
            "http://127.0.0.1:9/",
            "--retries",
            "0",
            &format!("{flag}={value}"),
        ])
    };
    let long_tag = long("v");
    for tag in BAD_TAGS.iter().copied().chain([long_tag.as_str()]) {
        refused(&bump("--from-tag", tag), "--from-tag", tag, &patches);
        assert!(!file.exists(), "{tag:?}: nothing written");
    }
    let crate_url = "static.crates.io/crates/ct2rs/ct2rs-0.10.3.crate";
    for url in [
        format!("https://user:pw@{crate_url}"),
        format!("https://{crate_url}\u{1b}[2J.crate"),
        format!("https://{crate_url} .crate"),
    ] {
        let run = bump("--source", &url);
        common::assert_exit(&run, 2, &["--source", "is not allowed"]);
        assert!(!run.stderr.contains('\u{1b}'), "{}", run.stderr);
        assert!(
            !file.exists() && !patches.exists(),
            "{url:?}: nothing written"
        );
    }
}

/// A variant file's URL reaches the release's manifest and notes: the same rule as the flags'.
#[test]
fn a_variant_url_with_credentials_control_characters_or_spaces_is_refused() {
    let scratch = Scratch::new();
    let file = scratch.path().join("variants/ctranslate2/4.7.1.toml");
    let text = fs::read_to_string(&file).unwrap();
    let url = "https://static.crates.io/crates/ct2rs/ct2rs-0.9.17.crate";
    assert_eq!(text.matches(url).count(), 1);
    for (bad, why) in [
        (
            "https://user:pw@static.crates.io/crates/ct2rs/ct2rs-0.9.17.crate",
            "user name or password",
        ),
        (
            "https://static.crates.io/crates/ct2rs/ct2rs-0.9.17\\u001b[2J.crate",
            "control character",
        ),
        (
            "https://static.crates.io/crates/ct2rs/ct2rs 0.9.17.crate",
            "whitespace",
        ),
    ] {
        fs::write(&file, text.replace(url, bad)).unwrap();
        let run = scratch.run(&cpu_job("plan", &[]));
        common::assert_exit(&run, 2, &["4.7.1.toml", why]);
        assert!(!run.stderr.contains('\u{1b}'), "{}", run.stderr);
    }
}

/// `--ctranslate2` names a data file (and `bump`'s new one, and the matrix's entries): every
/// command that takes one refuses a value that is not numbers and dots, naming the flag.
#[test]
fn every_ctranslate2_flag_refuses_what_is_not_a_version_naming_the_flag() {
    let long_version = long("4.");
    let commands: [&[&str]; 12] = [
        &["plan", "--variant", "cpu"],
        &["build", "--variant", "cpu", "--dry-run"],
        &["fetch", "--variant", "cpu", "--offline"],
        &["pin", "--variant", "cpu", "--offline"],
        &["patch", "--check", "--variant", "cpu", "--offline"],
        &["bundle", "--variant", "cpu"],
        &["verify", "--variant", "cpu"],
        &["doctor", "--variant", "cpu"],
        &["release", "--variants", "cpu"],
        &["upstream", "--offline"],
        &["matrix", "--json"],
        &["bump", "--no-pin", "--ctranslate2", "4.8.9"],
    ];
    for value in ["4.8.4\u{1b}[2J", "4.8.4\n", "../../x", "", &long_version] {
        for command in commands {
            let flag = if command[0] == "bump" {
                "--from"
            } else {
                "--ctranslate2"
            };
            let mut args = command.to_vec();
            let given = format!("{flag}={value}");
            args.push(&given);
            let run = common::xtask(&args);
            common::assert_exit(
                &run,
                2,
                &[&format!("{flag} `"), "is not a CTranslate2 version"],
            );
            assert!(
                !run.stderr.contains('\u{1b}') && run.stderr.len() < 1_000,
                "{args:?}: {}",
                run.stderr
            );
        }
    }
    let run = common::xtask(&["bump", "--no-pin", "--ctranslate2=4.8.9\u{1b}[2J"]);
    common::assert_exit(&run, 2, &["--ctranslate2 `4.8.9\\u{1b}[2J`"]);
}

/// What clap refuses itself (a value not among a flag's choices, an unknown flag) is exit 2,
/// and ESC or a CR from a script never reaches the terminal raw (clap drops an ANSI sequence
/// when it renders; the rest is escaped).
#[test]
fn clap_refusals_print_the_value_escaped() {
    for args in [
        &["plan", "--variant", "cpu", "--platform", "linux\u{1b}[2J\r"][..],
        &["plan", "--variant", "cpu", "--no-such\u{1b}[2J"][..],
    ] {
        let run = common::xtask(args);
        common::assert_exit(&run, 2, &["error:"]);
        assert!(
            !run.stderr.contains(['\u{1b}', '\r']),
            "{args:?}: {}",
            run.stderr
        );
    }
}
