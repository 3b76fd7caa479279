//! `pages`: the pip index site over every release, as release.yml deploys it to GitHub
//! Pages, served over loopback the way GitHub serves it: the site in one folder, each
//! release's assets under `<download-base><tag>/`. Every link of the site must reach a
//! published asset with the bytes its `#sha256=` names, and pip must install an older
//! release's wheel after a newer release.

use std::fs;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::common::{self, HttpDir, Scratch, assert_exit};
use crate::release::{fake_build, release};

pub(crate) const ASSETS: &str = "gh/o/r/releases/download";

/// Two releases of the cpu variant (py3.12 as `v4.7.1`, py3.11 as `v4.7.1-2`), their
/// assets laid out as GitHub serves them below `web/`.
pub(crate) fn two_releases(scratch: &Scratch, web: &Path) {
    for (tag, python) in [("v4.7.1", "3.12"), ("v4.7.1-2", "3.11")] {
        fake_build(scratch, python);
        let out = scratch.path().join(format!("dist/{tag}"));
        let run = release(scratch, &out, python);
        assert_eq!(run.code, 0, "{}", run.stderr);
        common::copy_tree(&out, &web.join(ASSETS).join(tag));
        fs::remove_dir_all(scratch.path().join("target/xtask/cpu")).unwrap();
    }
}

/// The newer release's (`v4.7.1-2`) manifest of [`two_releases`].
pub(crate) fn newer_manifest(web: &Path) -> serde_json::Value {
    let path = web.join(ASSETS).join("v4.7.1-2/manifest.json");
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// `pages` as release.yml runs it for the second release: the earlier release's manifest
/// downloaded into `earlier/<tag>/`, the assets at `base`, the site written to `site`.
pub(crate) fn pages_after_two_releases(
    scratch: &Scratch,
    web: &Path,
    base: &str,
    site: &Path,
    extra: &[&str],
) -> common::Run {
    let earlier = scratch.path().join("earlier/v4.7.1");
    fs::create_dir_all(&earlier).unwrap();
    fs::copy(
        web.join(ASSETS).join("v4.7.1/manifest.json"),
        earlier.join("manifest.json"),
    )
    .unwrap();
    let earlier = scratch.path().join("earlier");
    let mut args = vec![
        "--earlier",
        earlier.to_str().unwrap(),
        "--download-base",
        base,
    ];
    args.extend_from_slice(extra);
    pages_of_newer(scratch, web, site, &args)
}

/// `pages` for the newer release (`v4.7.1-2`) into `site`, with `extra` flags.
pub(crate) fn pages_of_newer(
    scratch: &Scratch,
    web: &Path,
    site: &Path,
    extra: &[&str],
) -> common::Run {
    let release = web.join(ASSETS).join("v4.7.1-2");
    let mut args = vec![
        "pages",
        "--release",
        release.to_str().unwrap(),
        "--tag",
        "v4.7.1-2",
        "--out",
        site.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    scratch.run(&args)
}

fn links(page: &str) -> Vec<String> {
    page.split("href=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_string())
        .collect()
}

fn get(url: &str) -> Vec<u8> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1]).read())",
            url,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{url}: {}",
        common::stdout_and_stderr(&out)
    );
    out.stdout
}

#[test]
fn every_link_of_the_site_reaches_a_published_asset_and_old_versions_stay_installable() {
    let scratch = Scratch::new();
    let web = scratch.path().join("web");
    two_releases(&scratch, &web);
    let server = HttpDir::serve(&web);
    let site = web.join("site");
    let base = server.url(&format!("/{ASSETS}/"));
    let run = pages_after_two_releases(&scratch, &web, &base, &site, &[]);
    assert_exit(
        &run,
        0,
        &[
            "2 release(s): v4.7.1, v4.7.1-2",
            "no --site-url: the front page's install commands name the index at \
             https://OWNER.github.io/REPO/whl/<variant>",
        ],
    );
    assert!(
        run.stdout.contains("whl/cpu/  2 wheel(s)"),
        "{}",
        run.stdout
    );

    // Follow every link from the root page down, as pip and a browser would.
    let mut wheels = 0;
    let landing = String::from_utf8(get(&server.url("/site/index.html"))).unwrap();
    // The front page's links into the index (its others: the browser test below).
    for variant in links(&landing).iter().filter(|l| l.starts_with("whl/")) {
        let root = String::from_utf8(get(&server.url(&format!("/site/{variant}")))).unwrap();
        for project in links(&root) {
            let page_url = server.url(&format!("/site/{variant}{project}"));
            let page = String::from_utf8(get(&page_url)).unwrap();
            for href in links(&page) {
                let (url, sha) = href.split_once("#sha256=").expect("a #sha256=");
                assert!(
                    url.starts_with(&base),
                    "an absolute link to an asset: {url}"
                );
                let bytes = get(url);
                assert_eq!(
                    ct2v_fetch::cache::hex(&Sha256::digest(&bytes)),
                    sha,
                    "{url}"
                );
                wheels += 1;
            }
        }
    }
    // Per release: its CTranslate2 wheel, and its selector wheel in both variants' indexes.
    assert_eq!(wheels, 2 + 2, "one wheel and one selector per release");

    // pip from the site: the older release's wheel (py3.12, v4.7.1) and the newer one's.
    for python in ["3.12", "3.11"] {
        let dest = tempfile::tempdir().unwrap();
        let got = std::process::Command::new("python3")
            .args([
                "-m",
                "pip",
                "--disable-pip-version-check",
                "download",
                "--no-deps",
            ])
            .args(["--only-binary=:all:", "--platform", "manylinux_2_28_x86_64"])
            .args(["--python-version", python, "-d"])
            .arg(dest.path())
            .args([
                "--index-url",
                &server.url("/site/whl/cpu"),
                "ctranslate2==4.7.1+cpu",
            ])
            .env("PIP_FIND_LINKS", "")
            .output()
            .unwrap();
        assert!(
            got.status.success(),
            "py{python}: {}",
            common::stdout_and_stderr(&got)
        );
        assert_eq!(fs::read_dir(dest.path()).unwrap().count(), 1);
    }
}

#[test]
fn a_wheel_name_with_two_contents_across_releases_and_bad_flags_are_refused() {
    let scratch = Scratch::new();
    let web = scratch.path().join("web");
    two_releases(&scratch, &web);
    // The earlier release claims the newer release's wheel name with other bytes.
    let newer = newer_manifest(&web);
    let mut clash = newer.clone();
    for a in clash["artifacts"].as_array_mut().unwrap() {
        a["sha256"] = "00".repeat(32).into();
    }
    let earlier = scratch.path().join("earlier/v0-clash");
    fs::create_dir_all(&earlier).unwrap();
    fs::write(earlier.join("manifest.json"), clash.to_string()).unwrap();
    let site = scratch.path().join("site");
    let pages = |extra: &[&str]| pages_of_newer(&scratch, &web, &site, extra);
    let earlier_dir = scratch.path().join("earlier");
    let with_earlier = || {
        pages(&[
            "--earlier",
            earlier_dir.to_str().unwrap(),
            "--download-base",
            "https://github.com/o/r/releases/download/",
        ])
    };
    let run = with_earlier();
    assert_exit(&run, 1, &["with other bytes", "v0-clash", "v4.7.1-2"]);
    assert!(!site.join("whl").exists(), "nothing written");

    let run = pages(&[
        "--download-base",
        "https://github.com/o/r/releases/download",
    ]);
    assert_exit(&run, 2, &["must end with `/`"]);
    let run = pages(&[
        "--download-base",
        "https://github.com/o/r/releases/download/",
        "--site-url",
        "http://o.github.io/r",
    ]);
    assert_exit(
        &run,
        2,
        &[
            "--site-url `http://o.github.io/r` is not allowed",
            "https://",
        ],
    );
    fs::create_dir_all(&site).unwrap();
    fs::write(site.join("keep"), "").unwrap();
    let run = pages(&[
        "--download-base",
        "https://github.com/o/r/releases/download/",
    ]);
    assert_exit(&run, 2, &["is not empty"]);
    assert!(site.join("keep").exists());
    fs::remove_file(site.join("keep")).unwrap();
    fs::write(earlier.join("manifest.json"), "{").unwrap();
    let run = with_earlier();
    assert_exit(
        &run,
        2,
        &["v0-clash", "manifest.json: not a release manifest"],
    );

    // An earlier manifest whose names would lead the site's pages out of --out.
    let outside = scratch.path().join("outside");
    let up = "../".repeat(16);
    let escape = format!("{up}{}", outside.to_str().unwrap().trim_start_matches('/'));
    for (key, value) in [("variant", escape.as_str()), ("path", "../x.whl")] {
        let mut hostile = newer.clone();
        hostile["artifacts"][0][key] = value.into();
        fs::write(earlier.join("manifest.json"), hostile.to_string()).unwrap();
        let run = with_earlier();
        assert_exit(
            &run,
            2,
            &["v0-clash", "names no release writes", "in the manifest"],
        );
        assert!(
            !outside.exists() && !site.join("whl").exists(),
            "{key}: nothing written"
        );
    }
}

/// The DOM of `page` as headless Chromium renders it (`--dump-dom` reads it through the
/// DevTools protocol, so scripts stay on; the page has none).
pub(crate) fn rendered_dom(page: &Path) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::stdout_and_stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

/// `%2B` and the like decoded (the links name `+` as `%2B`).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], text.get(i + 1..i + 3)) {
            (b'%', Some(hex)) if u8::from_str_radix(hex, 16).is_ok() => {
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

/// Asserts that `href` of the front page reaches something: an element of the page (`#id`),
/// a file or folder index of the site (a relative link), or a published asset of a release
/// (`<base><tag>/<file>`, `file` listed in that release's manifest, or its SHA256SUMS or
/// manifest.json, and there in `assets/<tag>/`).
fn assert_reaches(href: &str, dom: &str, site: &Path, base: &str, assets: &Path) {
    if let Some(id) = href.strip_prefix('#') {
        assert!(dom.contains(&format!("id=\"{id}\"")), "{href}: no such id");
    } else if let Some(rest) = href.strip_prefix(base) {
        let (tag, file) = rest.split_once('/').expect("<tag>/<file>");
        let (tag, file) = (percent_decoded(tag), percent_decoded(file));
        let manifest: serde_json::Value =
            serde_json::from_slice(&fs::read(assets.join(&tag).join("manifest.json")).unwrap())
                .unwrap();
        let listed = common::field_of_each(&manifest["artifacts"], "path").contains(&file.as_str())
            || ["SHA256SUMS", "manifest.json"].contains(&file.as_str());
        assert!(listed, "{href}: {file} is not an asset of {tag}");
        assert!(
            assets.join(&tag).join(&file).is_file(),
            "{href}: not published"
        );
    } else {
        assert!(
            !href.contains(':'),
            "{href}: neither relative nor a release asset"
        );
        let target = site.join(percent_decoded(href));
        let found = if href.ends_with('/') {
            target.join("index.html").is_file()
        } else {
            target.is_file()
        };
        assert!(found, "{href}: {} is not in the site", target.display());
    }
}

#[test]
fn the_front_page_in_a_browser_shows_the_cards_and_each_variants_commands_and_links_only_what_exists()
 {
    if common::skip::missing("chromium", "apt-get install chromium") {
        return;
    }
    let scratch = Scratch::new();
    let web = scratch.path().join("web");
    two_releases(&scratch, &web);
    let (assets, site) = (web.join(ASSETS), scratch.path().join("site"));
    let server = HttpDir::serve(&web);
    let base = server.url(&format!("/{ASSETS}/"));
    let run = pages_after_two_releases(
        &scratch,
        &web,
        &base,
        &site,
        &["--site-url", "https://o.github.io/r/"],
    );
    assert_exit(&run, 0, &["2 release(s)"]);
    assert!(site.join(".nojekyll").is_file());

    let started = std::time::Instant::now();
    let dom = rendered_dom(&site.join("index.html"));
    eprintln!(
        "chromium --dump-dom took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // One row per card of the release's variants.json, each saying what serves it.
    let coverage: serde_json::Value =
        serde_json::from_slice(&fs::read(assets.join("v4.7.1-2/variants.json")).unwrap()).unwrap();
    let cards = dom.split("id=\"cards\"").nth(1).unwrap();
    let cards = cards.split("</table>").next().unwrap();
    let rows = cards.matches("<tr><td>").count();
    assert_eq!(rows, coverage["cards"].as_array().unwrap().len(), "{cards}");
    assert!(
        cards.contains("<td>cc 6.1</td><td>not served: <code>cpu</code></td>"),
        "{cards}"
    );
    // Each command as the browser shows it, one per <pre>, is what a reader copies: pasted
    // into bash, each runs exactly its program with the intended arguments.
    let commands = crate::common::pasted::pasted_commands(&dom);
    for (command, tool) in
        commands
            .iter()
            .zip(["pip install", "uv pip install", "app.exe self pip install"])
    {
        assert_eq!(
            command,
            &format!(
                "{tool} --extra-index-url \"https://o.github.io/r/whl/cpu\" \"ctranslate2==4.7.1+cpu\""
            )
        );
    }
    let ran = crate::common::pasted::pasted_into_bash(&commands);
    assert_eq!(
        ran.calls,
        crate::common::pasted::intended(
            &["ctranslate2==4.7.1+cpu"],
            "https://o.github.io/r/whl/cpu"
        )
    );
    assert!(
        dom.contains("<td>3.11</td>"),
        "the newest release's wheel: {dom}"
    );
    assert!(!dom.contains("<script"), "plain HTML");
    let hrefs = links(&dom);
    assert!(hrefs.len() >= 6, "{hrefs:?}");
    for href in &hrefs {
        assert_reaches(href, &dom, &site, &base, &assets);
    }
}
