//! `pin` against a hostile PEP 503 index and `bump --from-tag` against a hostile GitHub, on
//! loopback servers scripted per request (`common::server`).
//!
//! Exit codes. `pin` goes on past an input it cannot pin and exits 1 when any failed: what an
//! index serves is not the user's input (the variant files are right; the server is what
//! failed them), as for a download that fails. `bump --from-tag` exits 1 when the server does
//! not answer as GitHub's API does (not JSON, too large, fields missing or malformed, a
//! redirect loop): trying again, or another mirror, may work. It exits 2 when the answers are
//! well-formed and describe a tag the tool will not take (a submodule off github.com, a path
//! leaving the tree, a `.gitmodules` git would not read, submodules nested in a loop or past
//! the bounds): the same answers come again, so the tag (or `--source`) is what must change.
//! Either way nothing is written.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::server::{Reply, Server};
use crate::common::{Run, Scratch};
use crate::fetch_pin::{amd_index_serving, one_target_scratch, pin_rocm_484, pinned_files, sha256};
use crate::github_tag_source::{assert_nothing_bumped, bump_485_from_tag};

/// The rocm-sdk-core project page, as the variant file names it, and where the loopback
/// index serves it.
const CORE_PAGE: &str = "https://stable.repo.amd.com/rocm/whl-next/rocm-sdk-core/";
const CORE_PAGE_PATH: &str = "/amd/rocm/whl-next/rocm-sdk-core/";
const CORE_WHEEL: &str = "rocm_sdk_core-10.0.0-py3-none-win_amd64.whl";
const VERSION_FILE: &str = "variants/ctranslate2/4.8.4.toml";

/// `pin` of rocm 4.8.4 (one GPU target) against the loopback AMD index of `fetch_pin`, its
/// rocm-sdk-core page answered by `page` (given the core wheel's sha256). The index also
/// serves the core wheel as `https://files.example.org/core/…`, another host.
fn pin_with_core_page(page: impl Fn(&str) -> Reply + Send + Sync + 'static) -> (Run, Scratch) {
    let scratch = one_target_scratch();
    let cache = tempfile::tempdir().unwrap();
    let (server, mut mirrors, core, _) = amd_index_serving(None, |archive| archive);
    let sha = sha256(&core);
    server.route(CORE_PAGE_PATH, move |_, _| page(&sha));
    mirrors.extend([
        "--mirror".to_string(),
        format!("https://files.example.org/={}/amd/rocm/", server.base()),
        "--retries".to_string(),
        "0".to_string(),
    ]);
    let run = pin_rocm_484(&scratch, cache.path().to_str().unwrap(), &mirrors);
    (run, scratch)
}

fn html(body: String) -> Reply {
    Reply::ok(Arc::new(body.into_bytes())).header("Content-Type", "text/html")
}

/// Neither the rocm-sdk-core table nor the lock got a pin for the core wheel.
fn assert_core_unpinned(scratch: &Scratch) {
    assert_eq!(core_url(scratch), None);
    let lock =
        std::fs::read_to_string(scratch.path().join("variants/pins.lock")).unwrap_or_default();
    assert!(
        !lock.contains(CORE_PAGE) && !lock.contains(CORE_WHEEL),
        "{lock}"
    );
}

/// `pin` exited 1, every needle in its message, and pinned nothing for the core wheel.
fn assert_pin_refused(run: &Run, scratch: &Scratch, needles: &[&str]) {
    assert_eq!(run.code, 1, "{}", output(run));
    for needle in needles {
        assert!(
            run.stderr.contains(needle),
            "`{needle}` in:\n{}",
            run.stderr
        );
    }
    assert_core_unpinned(scratch);
}

/// The `url` pin wrote into the rocm-sdk-core table, if it wrote one.
fn core_url(scratch: &Scratch) -> Option<String> {
    let text = std::fs::read_to_string(scratch.path().join(VERSION_FILE)).unwrap();
    let table = text
        .split("inputs.rocm-sdk-core]\n")
        .nth(1)?
        .split("\n[")
        .next()?;
    let line = table.lines().find(|l| l.starts_with("url = "))?;
    Some(
        line.trim_start_matches("url = ")
            .trim_matches('"')
            .to_string(),
    )
}

fn output(run: &Run) -> String {
    format!("{}{}", run.stdout, run.stderr)
}

/// Relative links, absolute paths, https links to another host (scheme-relative too) and
/// links written with HTML's character references are taken as a browser resolves them.
#[test]
fn pin_resolves_relative_absolute_other_host_and_escaped_links_as_a_browser_does() {
    for (href, url) in [
        (
            format!("../../core/{CORE_WHEEL}"),
            format!("https://stable.repo.amd.com/rocm/core/{CORE_WHEEL}"),
        ),
        (
            format!("/rocm/core/{CORE_WHEEL}"),
            format!("https://stable.repo.amd.com/rocm/core/{CORE_WHEEL}"),
        ),
        (
            format!("https://files.example.org/core/{CORE_WHEEL}"),
            format!("https://files.example.org/core/{CORE_WHEEL}"),
        ),
        (
            format!("//files.example.org/core/{CORE_WHEEL}"),
            format!("https://files.example.org/core/{CORE_WHEEL}"),
        ),
        (
            format!("..&#x2F;..&#47;core&#x2f;{CORE_WHEEL}"),
            format!("https://stable.repo.amd.com/rocm/core/{CORE_WHEEL}"),
        ),
    ] {
        let page = href.clone();
        let (run, scratch) = pin_with_core_page(move |sha| {
            html(format!(
                "<!DOCTYPE html><html><body>\n\
                 <a href=\"{page}#sha256={sha}\" data-requires-python=\"&gt;=3.9\">{CORE_WHEEL}</a>\n\
                 </body></html>\n"
            ))
        });
        assert_eq!(run.code, 0, "{href}:\n{}", output(&run));
        assert_eq!(core_url(&scratch).as_deref(), Some(url.as_str()), "{href}");
    }
}

/// The core wheel linked where a wheel is not taken from: `pin` names the page and the link,
/// exits 1 and writes no pin for it.
#[test]
fn pin_refuses_a_wheel_linked_outside_https_naming_the_page_and_the_link() {
    for (href, why) in [
        (
            format!("javascript:alert(1)//{CORE_WHEEL}"),
            "`javascript:` is not a download",
        ),
        (
            format!("file:///srv/{CORE_WHEEL}"),
            "`file:` is not a download",
        ),
        (
            format!("data:application/zip;base64,UEsFBg==/{CORE_WHEEL}"),
            "`data:` is not a download",
        ),
        (
            format!("http://files.example.org/core/{CORE_WHEEL}"),
            "plain http to another host",
        ),
        (
            format!("../../core/{CORE_WHEEL}#sha256=0123"),
            "`#sha256=` is not 64 hex digits",
        ),
    ] {
        let page = href.clone();
        let (run, scratch) =
            pin_with_core_page(move |_| html(format!("<a href=\"{page}\">{CORE_WHEEL}</a>")));
        assert_eq!(run.code, 1, "{href}:\n{}", output(&run));
        let line = run
            .stderr
            .lines()
            .find(|l| l.starts_with("error: input `rocm-sdk-core`"))
            .unwrap_or_else(|| panic!("{href}: no error for rocm-sdk-core:\n{}", run.stderr));
        for needle in [CORE_PAGE, href.as_str(), why] {
            assert!(line.contains(needle), "`{needle}` not in: {line}");
        }
        assert_core_unpinned(&scratch);
    }
}

/// One file linked twice with other digests, or only files of another project named like
/// the wanted one, pin nothing; the message says which links clash.
#[test]
fn pin_refuses_two_digests_for_one_file_and_links_to_another_project() {
    let (a, b) = ("ab".repeat(32), "cd".repeat(32));
    let (run, scratch) = pin_with_core_page(move |_| {
        html(format!(
            "<a href=\"../../core/{CORE_WHEEL}#sha256={a}\">{CORE_WHEEL}</a>\n\
             <a href=\"../../core/{CORE_WHEEL}#sha256={b}\">{CORE_WHEEL}</a>\n"
        ))
    });
    assert_pin_refused(
        &run,
        &scratch,
        &[
            CORE_PAGE,
            "links several rocm-sdk-core 10.0.0 wheels",
            &"ab".repeat(32),
            &"cd".repeat(32),
        ],
    );

    let (run, scratch) = pin_with_core_page(move |sha| {
        html(format!(
            "<a href=\"../../core/rocm_sdk_kore-10.0.0-py3-none-win_amd64.whl#sha256={sha}\">\
             {CORE_WHEEL}</a>"
        ))
    });
    assert_eq!(run.code, 1, "{}", output(&run));
    assert!(
        run.stderr.contains(&format!(
            "{CORE_PAGE} links no rocm-sdk-core 10.0.0 wheel for windows-x86_64 \
             (files there: rocm_sdk_kore-10.0.0-py3-none-win_amd64.whl)"
        )),
        "{}",
        run.stderr
    );
    assert_core_unpinned(&scratch);
}

/// Names a page gives, with control characters in them, reach the terminal escaped.
#[test]
fn names_from_a_page_reach_the_terminal_escaped() {
    for href in [
        "evil\u{1b}]0;owned\u{7}-1.0-py3-none-any.whl".to_string(),
        "rocm_sdk_core-10.0.0-py3%1B[31m-none-win_amd64.whl".to_string(),
    ] {
        let page = href.clone();
        let (run, _scratch) =
            pin_with_core_page(move |_| html(format!("<a href=\"{page}\">x</a>")));
        assert_eq!(run.code, 1, "{}", output(&run));
        assert!(
            !output(&run).contains('\u{1b}') && !output(&run).contains('\u{7}'),
            "{:?}",
            run.stderr
        );
        assert!(
            run.stderr.contains("\\u{1b}"),
            "the name is shown, escaped: {}",
            run.stderr
        );
    }
}

/// A page that is not UTF-8 is refused, naming the page and where: a link read from other
/// bytes would be another URL.
#[test]
fn a_page_that_is_not_utf8_is_refused_naming_the_page() {
    let (run, scratch) = pin_with_core_page(move |sha| {
        let mut body = format!("<a href=\"../../core/{CORE_WHEEL}#sha256={sha}\">").into_bytes();
        body.extend(b"caf\xe9</a>");
        Reply::ok(Arc::new(body))
    });
    assert_pin_refused(&run, &scratch, &[CORE_PAGE, "is not UTF-8"]);
}

/// 10,000 links are read in bounded time; a page that never ends is cut at the cap.
#[test]
fn a_page_of_ten_thousand_links_is_read_and_an_endless_page_is_cut_at_the_cap() {
    let started = Instant::now();
    let (run, scratch) = pin_with_core_page(move |sha| {
        let mut page: String = (0..10_000)
            .map(|i| {
                format!(
                    "<a href=\"../../core/rocm_sdk_core-9.{i}.0-py3-none-win_amd64.whl\">x</a>\n"
                )
            })
            .collect();
        page.push_str(&format!(
            "<a href=\"../../core/{CORE_WHEEL}#sha256={sha}\">x</a>\n"
        ));
        html(page)
    });
    assert_eq!(run.code, 0, "{}", output(&run));
    assert!(core_url(&scratch).is_some());
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );

    let endless = Arc::new(b"<a href=\"x\">x</a>\n".repeat((33 << 20) / 18));
    let (run, scratch) = pin_with_core_page(move |_| Reply::ok(endless.clone()));
    assert_pin_refused(&run, &scratch, &[CORE_PAGE, "larger than 32.0 MiB"]);
}

/// A page that is missing, fails, or redirects in a loop: exit 1 naming it, at once.
#[test]
fn a_missing_failing_or_looping_page_fails_naming_it() {
    for (reply, needle) in [
        (Reply::status(404), "answered 404"),
        (Reply::status(500), "answered HTTP 500"),
        (
            Reply::status(302).header("Location", CORE_PAGE_PATH),
            "more than 10 redirects",
        ),
        (
            Reply::status(302).header("Location", "file:///etc/passwd"),
            "redirected to file:///etc/passwd",
        ),
    ] {
        let started = Instant::now();
        let (run, scratch) = pin_with_core_page(move |_| reply.clone());
        assert_eq!(run.code, 1, "{}", output(&run));
        let line = run
            .stderr
            .lines()
            .find(|l| l.starts_with("error: input `rocm-sdk-core`"))
            .unwrap_or_else(|| panic!("no error for rocm-sdk-core:\n{}", run.stderr));
        assert!(line.contains(needle), "`{needle}` not in: {line}");
        assert_core_unpinned(&scratch);
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}

// --- bump --from-tag against a hostile GitHub -------------------------------------------

const REPO: &str = "OpenNMT/CTranslate2";
const TAG_COMMIT: &str = "4850000000000000000000000000000000000485";

fn commit(n: usize) -> String {
    format!("{n:040x}")
}

/// The path of an API answer on the loopback server (reached through a bare `--mirror`).
fn api(path: &str) -> String {
    format!("/api.github.com/repos/{path}")
}

fn json(text: String) -> Reply {
    Reply::ok(Arc::new(text.into_bytes())).header("Content-Type", "application/json")
}

/// The contents API's answer for a file.
fn file_answer(text: &str) -> Reply {
    json(crate::common::github_api::file_answer(text))
}

/// The contents API's answer for a gitlink.
fn gitlink(sha: &str) -> Reply {
    json(format!("{{\"type\": \"submodule\", \"sha\": \"{sha}\"}}"))
}

/// A loopback GitHub whose tag v4.8.5 of OpenNMT/CTranslate2 has `gitmodules` and a gitlink
/// at every path it lists (commit 1, 2, …, in order); the submodules have no `.gitmodules`.
fn github_with(gitmodules: &str, paths: &[&str]) -> Server {
    let server = Server::start();
    server.route(&api(&format!("{REPO}/commits/v4.8.5")), |_, _| {
        json(format!("{{\"sha\": \"{TAG_COMMIT}\"}}"))
    });
    let text = gitmodules.to_string();
    server.route(
        &api(&format!("{REPO}/contents/.gitmodules?ref={TAG_COMMIT}")),
        move |_, _| file_answer(&text),
    );
    for (i, path) in paths.iter().enumerate() {
        let sha = commit(i + 1);
        server.route(
            &api(&format!("{REPO}/contents/{path}?ref={TAG_COMMIT}")),
            move |_, _| gitlink(&sha),
        );
    }
    server
}

/// `bump --ctranslate2 4.8.5 --from-tag v4.8.5` through the loopback GitHub.
fn bump(scratch: &Scratch, server: &Server, retries: &str) -> Run {
    bump_485_from_tag(scratch, &server.base(), &["--retries", retries])
}

/// `bump` refused with `code`, every needle in its message, and nothing written.
fn assert_refused(scratch: &Scratch, run: &Run, code: i32, needles: &[&str]) {
    assert_eq!(run.code, code, "exit {code} expected:\n{}", output(run));
    for needle in needles {
        assert!(
            run.stderr.contains(needle),
            "`{needle}` not in:\n{}",
            run.stderr
        );
    }
    assert!(!run.stderr.contains('\u{1b}'), "{:?}", run.stderr);
    assert_nothing_bumped(scratch, "4.8.5");
}

/// The version file `bump` wrote.
fn written(scratch: &Scratch) -> String {
    std::fs::read_to_string(scratch.path().join("variants/ctranslate2/4.8.5.toml"))
        .unwrap_or_else(|e| panic!("no version file: {e}"))
}

/// Answers that are not what GitHub's API answers: exit 1 naming the URL, nothing written.
#[test]
fn malformed_or_huge_api_answers_fail_with_exit_1_naming_the_url() {
    let scratch = Scratch::new();
    let before = pinned_files(&scratch);
    let commits = api(&format!("{REPO}/commits/v4.8.5"));
    let huge = Arc::new(format!("{{\"sha\": \"{}\"}}", "0".repeat(5 << 20)).into_bytes());
    let deep = Arc::new(format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).into_bytes());
    let cases: Vec<(Reply, &str)> = vec![
        (json("{\"sha\": \"4850".to_string()), "did not answer JSON"),
        (Reply::ok(huge), "larger than"),
        (Reply::ok(deep), "did not answer JSON"),
        (json("[1, 2]".to_string()), "not a 40-hex commit"),
        (
            json("{\"sha\": \"v4.8.5\"}".to_string()),
            "not a 40-hex commit",
        ),
    ];
    for (reply, needle) in cases {
        let server = github_with("", &[]);
        server.route(&commits, move |_, _| reply.clone());
        let run = bump(&scratch, &server, "0");
        assert_refused(&scratch, &run, 1, &["/commits/v4.8.5", needle]);
    }
    let gitmodules = api(&format!("{REPO}/contents/.gitmodules?ref={TAG_COMMIT}"));
    for (reply, needle) in [
        (json("{\"type\": \"file\"}".to_string()), "has no `content`"),
        (
            json("{\"type\": \"file\", \"encoding\": \"none\", \"content\": \"\"}".to_string()),
            "`encoding` is \"none\"",
        ),
        (
            json("{\"type\": \"file\", \"encoding\": \"base64\", \"content\": \"*\"}".to_string()),
            "not base64",
        ),
    ] {
        let server = github_with("", &[]);
        server.route(&gitmodules, move |_, _| reply.clone());
        let run = bump(&scratch, &server, "0");
        assert_refused(&scratch, &run, 1, &["contents/.gitmodules", needle]);
    }
    assert!(pinned_files(&scratch) == before, "nothing changed");
}

/// A redirect loop (a tag renamed into itself) or a redirect to `file:` ends at once, even
/// with retries left: retrying cannot change it.
#[test]
fn redirect_loops_and_refused_redirects_end_at_once() {
    let scratch = Scratch::new();
    let commits = api(&format!("{REPO}/commits/v4.8.5"));
    for (location, needle) in [
        (commits.clone(), "more than 10 redirects"),
        (
            "file:///etc/passwd".to_string(),
            "redirected to file:///etc/passwd",
        ),
    ] {
        let server = github_with("", &[]);
        server.route(&commits, move |_, _| {
            Reply::status(301).header("Location", &location)
        });
        let started = Instant::now();
        let run = bump(&scratch, &server, "4");
        assert_refused(&scratch, &run, 1, &["/commits/v4.8.5", needle]);
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "retried: {:?}",
            started.elapsed()
        );
    }
}

/// Submodules that come back to a commit above them, nest past the bound or number past it
/// are refused (exit 2) naming where; each stays a few requests.
#[test]
fn gitlink_cycles_and_too_deep_or_wide_submodule_trees_are_refused() {
    let scratch = Scratch::new();
    // OpenNMT/CTranslate2 → google/a (commit 1) → google/b (commit 2) → google/a (commit 1).
    let server = github_with(
        "[submodule \"a\"]\n\tpath = third_party/a\n\turl = https://github.com/google/a.git\n",
        &["third_party/a"],
    );
    let (one, two) = (commit(1), commit(2));
    let gitmodules_of =
        |repo: &str, sha: &str| api(&format!("{repo}/contents/.gitmodules?ref={sha}"));
    server.route(&gitmodules_of("google/a", &one), |_, _| {
        file_answer("[submodule \"b\"]\n\tpath = b\n\turl = https://github.com/google/b\n")
    });
    let to_one = one.clone();
    server.route(
        &api(&format!("google/a/contents/b?ref={one}")),
        move |_, _| gitlink(&two),
    );
    server.route(&gitmodules_of("google/b", &commit(2)), |_, _| {
        file_answer("[submodule \"a\"]\n\tpath = a\n\turl = ../a.git\n")
    });
    server.route(
        &api(&format!("google/b/contents/a?ref={}", commit(2))),
        move |_, _| gitlink(&to_one),
    );
    let run = bump(&scratch, &server, "0");
    assert_refused(
        &scratch,
        &run,
        2,
        &["third_party/a/b/a", "google/a", &commit(1), "cycle"],
    );
    assert!(server.hits(&gitmodules_of("google/a", &one)).len() == 1);

    // Every repository lists two new submodules: a tree that never ends.
    let server = github_with(
        "[submodule \"a\"]\n\tpath = a\n\turl = https://github.com/deep/r0\n",
        &["a"],
    );
    let next = std::sync::atomic::AtomicUsize::new(100);
    server.fallback(move |hit, _| {
        let n = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if hit.path.contains("/contents/.gitmodules") {
            file_answer(&format!(
                "[submodule \"a\"]\n\tpath = a\n\turl = https://github.com/deep/r{n}\n\
                 [submodule \"b\"]\n\tpath = b\n\turl = https://github.com/deep/s{n}\n"
            ))
        } else if hit.path.contains("/contents/") {
            gitlink(&commit(n))
        } else {
            Reply::status(404)
        }
    });
    let run = bump(&scratch, &server, "0");
    assert_refused(&scratch, &run, 2, &["nested more than 8 deep"]);

    let wide: String = (0..101)
        .map(|i| {
            format!("[submodule \"m{i}\"]\n\tpath = m{i}\n\turl = https://github.com/wide/m{i}\n")
        })
        .collect();
    let paths: Vec<String> = (0..101).map(|i| format!("m{i}")).collect();
    let server = github_with(&wide, &paths.iter().map(String::as_str).collect::<Vec<_>>());
    let run = bump(&scratch, &server, "0");
    assert_refused(&scratch, &run, 2, &["more than 100 submodules"]);
}

/// Submodule URLs off github.com, or that only look like it, are refused (exit 2) naming the
/// `.gitmodules` and the key; relative ones that stay on github.com are resolved as git does.
#[test]
fn submodule_urls_off_github_are_refused_and_relative_ones_resolved() {
    let scratch = Scratch::new();
    for url in [
        "file:///srv/git/x.git",
        "https://github.com/google/../../x",
        "ssh://evil.example/google/x.git",
        "git@evil.example:google/x.git",
        "https://github.com.evil.example/google/x",
        "https://github.com/google/x?ref=main",
        "../../../x.git",
        "./x",
        "https://evil.example/\u{1b}[2J\u{7}",
    ] {
        let server = github_with(
            &format!("[submodule \"x\"]\n\tpath = third_party/x\n\turl = {url}\n"),
            &["third_party/x"],
        );
        let run = bump(&scratch, &server, "0");
        assert_refused(
            &scratch,
            &run,
            2,
            &[
                "contents/.gitmodules",
                "submodule.x.url",
                &url.escape_debug().to_string(),
            ],
        );
    }
    for (url, repo) in [
        ("../cxxopts.git", "OpenNMT/cxxopts"),
        ("../../jarro2783/cxxopts", "jarro2783/cxxopts"),
        ("git@github.com:jarro2783/cxxopts.git", "jarro2783/cxxopts"),
        (
            "ssh://git@github.com/jarro2783/cxxopts.git",
            "jarro2783/cxxopts",
        ),
    ] {
        let scratch = Scratch::new();
        let server = github_with(
            &format!("[submodule \"x\"]\n\tpath = third_party/x\n\turl = {url}\n"),
            &["third_party/x"],
        );
        let run = bump(&scratch, &server, "0");
        let file = written(&scratch);
        assert!(
            file.contains(&format!(
                "url = \"https://github.com/{repo}/archive/{}.tar.gz\"",
                commit(1)
            )),
            "{url}:\n{}\n{file}",
            output(&run)
        );
    }
}

/// Submodule paths that leave the tree, or name one place twice, are refused (exit 2).
#[test]
fn submodule_paths_leaving_the_tree_or_given_twice_are_refused() {
    let scratch = Scratch::new();
    for (path, needle) in [
        ("../outside", "`..` leaves its folder"),
        ("/etc", "absolute"),
        ("a/../../b", "`..` leaves its folder"),
        ("C:x", "drive prefix"),
    ] {
        let server = github_with(
            &format!("[submodule \"x\"]\n\tpath = {path}\n\turl = https://github.com/o/x\n"),
            &[],
        );
        let run = bump(&scratch, &server, "0");
        assert_refused(&scratch, &run, 2, &["contents/.gitmodules", path, needle]);
    }
    let server = github_with(
        "[submodule \"x\"]\n\tpath = third_party/x\n\turl = https://github.com/o/x\n\
         [submodule \"y\"]\n\tpath = third_party/x/\n\turl = https://github.com/o/y\n",
        &["third_party/x"],
    );
    let run = bump(&scratch, &server, "0");
    assert_refused(&scratch, &run, 2, &["third_party/x", "twice"]);
}

/// `.gitmodules` is read as `git config` reads it: comments after values, quotes and escapes,
/// keys in any case, one submodule's keys over several sections; what git would refuse to
/// read is refused (exit 2) naming the line, never read some other way.
#[test]
fn gitmodules_is_read_as_git_config_reads_it() {
    let read = "# top\n[submodule \"x\"]   ; the one\n\tPath = \"third_party/x\" # c\n\
                [core]\n\tpath = elsewhere\n\
                [submodule \"x\"]\n\tURL = https://github.com/o/x.git ; not this\n";
    let scratch = Scratch::new();
    let server = github_with(read, &["third_party/x"]);
    let run = bump(&scratch, &server, "0");
    let file = written(&scratch);
    assert!(
        file.contains("[source.submodules.\"third_party/x\"]")
            && file.contains(&format!(
                "https://github.com/o/x/archive/{}.tar.gz",
                commit(1)
            )),
        "{}\n{file}",
        output(&run)
    );

    let scratch = Scratch::new();
    for (text, line) in [
        ("[submodule \"x\"]\n\tpath = \"third_party/x\n", 2),
        ("[submodule \"x\"\n\tpath = third_party/x\n", 1),
        ("[submodule \"x\"]\n\tpath = a\\qb\n", 2),
        ("[submodule \"x\"]\n\t?path = x\n", 2),
        ("path = x\n", 1),
        (
            "[submodule \"x\"]\n\tpath = a\n\tpath = b\n\turl = https://github.com/o/x\n",
            3,
        ),
        (
            "[submodule \"x\"]\n\tPATH = ../../etc\n\turl = https://github.com/o/x\n",
            2,
        ),
    ] {
        let server = github_with(text, &["third_party/x", "a", "b"]);
        let run = bump(&scratch, &server, "0");
        let at = format!(".gitmodules line {line}");
        assert_refused(&scratch, &run, 2, &["contents/.gitmodules", &at]);
    }
}
