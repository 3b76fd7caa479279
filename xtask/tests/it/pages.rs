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

const ASSETS: &str = "gh/o/r/releases/download";

/// Two releases of the cpu variant (py3.12 as `v4.7.1`, py3.11 as `v4.7.1-2`), their
/// assets laid out as GitHub serves them below `web/`.
fn two_releases(scratch: &Scratch, web: &Path) {
    for (tag, python) in [("v4.7.1", "3.12"), ("v4.7.1-2", "3.11")] {
        fake_build(scratch, python);
        let out = scratch.path().join(format!("dist/{tag}"));
        let run = release(scratch, &out, python);
        assert_eq!(run.code, 0, "{}", run.stderr);
        common::copy_tree(&out, &web.join(ASSETS).join(tag));
        fs::remove_dir_all(scratch.path().join("target/xtask/cpu")).unwrap();
    }
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
    // As release.yml does: the earlier release's manifest, downloaded into earlier/<tag>/.
    let earlier = scratch.path().join("earlier/v4.7.1");
    fs::create_dir_all(&earlier).unwrap();
    fs::copy(
        web.join(ASSETS).join("v4.7.1/manifest.json"),
        earlier.join("manifest.json"),
    )
    .unwrap();
    let site = web.join("site");
    let base = server.url(&format!("/{ASSETS}/"));
    let run = scratch.run(&[
        "pages",
        "--release",
        web.join(ASSETS).join("v4.7.1-2").to_str().unwrap(),
        "--tag",
        "v4.7.1-2",
        "--earlier",
        scratch.path().join("earlier").to_str().unwrap(),
        "--download-base",
        &base,
        "--out",
        site.to_str().unwrap(),
    ]);
    assert_exit(&run, 0, &["2 release(s): v4.7.1, v4.7.1-2"]);
    assert!(
        run.stdout.contains("whl/cpu/  2 wheel(s)"),
        "{}",
        run.stdout
    );

    // Follow every link from the root page down, as pip and a browser would.
    let mut wheels = 0;
    let landing = String::from_utf8(get(&server.url("/site/index.html"))).unwrap();
    for variant in links(&landing) {
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
                    xtask::inputs::cache::hex(&Sha256::digest(&bytes)),
                    sha,
                    "{url}"
                );
                wheels += 1;
            }
        }
    }
    assert_eq!(wheels, 2, "one wheel per release");

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
    let newer: serde_json::Value =
        serde_json::from_slice(&fs::read(web.join(ASSETS).join("v4.7.1-2/manifest.json")).unwrap())
            .unwrap();
    let mut clash = newer.clone();
    for a in clash["artifacts"].as_array_mut().unwrap() {
        a["sha256"] = "00".repeat(32).into();
    }
    let earlier = scratch.path().join("earlier/v0-clash");
    fs::create_dir_all(&earlier).unwrap();
    fs::write(earlier.join("manifest.json"), clash.to_string()).unwrap();
    let site = scratch.path().join("site");
    let pages = |extra: &[&str]| {
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
    };
    let earlier_dir = scratch.path().join("earlier");
    let run = pages(&[
        "--earlier",
        earlier_dir.to_str().unwrap(),
        "--download-base",
        "https://github.com/o/r/releases/download/",
    ]);
    assert_exit(&run, 1, &["with other bytes", "v0-clash", "v4.7.1-2"]);
    assert!(!site.join("whl").exists(), "nothing written");

    let run = pages(&[
        "--download-base",
        "https://github.com/o/r/releases/download",
    ]);
    assert_exit(&run, 2, &["must end with `/`"]);
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
    let run = pages(&[
        "--earlier",
        earlier_dir.to_str().unwrap(),
        "--download-base",
        "https://github.com/o/r/releases/download/",
    ]);
    assert_exit(
        &run,
        2,
        &["v0-clash", "manifest.json: not a release manifest"],
    );
}
