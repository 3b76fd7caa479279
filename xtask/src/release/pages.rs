//! `cargo xtask pages`: the pip index as a static site (GitHub Pages), over every release.
//!
//! A Pages deployment replaces the whole site, so the site is made from the manifests of all
//! releases (this one, and the earlier ones the workflow downloads with `gh release download
//! TAG -p manifest.json`): `whl/<variant>/ctranslate2/index.html` links every wheel of that
//! variant of every release, by absolute URL to the release's asset (a site may hold 1 GB, the
//! wheels are already assets), with the `#sha256=` of the manifest. So
//! `pip install --index-url https://OWNER.github.io/REPO/whl/<variant> "ctranslate2==X+<local>"`
//! keeps working for an older version after a newer release.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::release::pep503::{self, Link};
use crate::release::{MANIFEST, Manifest};
use crate::support::diagnostic::InputError;

/// One release the site links: its tag (the download URL's folder) and its manifest.
pub struct Release {
    pub tag: String,
    pub manifest: Manifest,
    /// The file it was read from, for errors.
    pub source: PathBuf,
}

/// Reads `dir/manifest.json` as the release `tag`.
pub fn read_release(dir: &Path, tag: &str) -> Result<Release> {
    Ok(Release {
        tag: tag.to_string(),
        manifest: Manifest::read(dir)?,
        source: dir.join(MANIFEST),
    })
}

/// The earlier releases below `dir`: one folder per tag, each holding that release's
/// manifest.json (a folder without one is an error naming it).
pub fn read_earlier(dir: &Path) -> Result<Vec<Release>> {
    let mut releases = Vec::new();
    let entries = fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries {
        let entry = entry?;
        if !entry.file_type()?.is_dir() {
            continue;
        }
        let tag = entry.file_name().to_string_lossy().into_owned();
        releases.push(read_release(&entry.path(), &tag)?);
    }
    releases.sort_by(|a, b| a.tag.cmp(&b.tag));
    Ok(releases)
}

/// What `write_site` wrote: wheels per variant.
pub struct Site {
    pub variants: BTreeMap<String, usize>,
}

/// Writes the site into `out` (which must not exist, or be empty): `whl/<variant>/…` for
/// every variant of `releases`, each wheel linked at `<download_base><tag>/<file>`, and an
/// `index.html` saying how to install. Two releases with one wheel name but other bytes are
/// refused: pip could not tell them apart.
pub fn write_site(releases: &[Release], download_base: &str, out: &Path) -> Result<Site> {
    if let Err(why) = pep503::check_base_url(download_base) {
        return Err(InputError::new(format!(
            "--download-base `{}` is not allowed: {why}",
            download_base.escape_debug()
        ))
        .into());
    }
    if !download_base.ends_with('/') {
        return Err(InputError::new(format!(
            "--download-base `{download_base}` must end with `/` (e.g. \
             https://github.com/OWNER/REPO/releases/download/)"
        ))
        .into());
    }
    crate::support::out_folder::check_out(
        "--out",
        out,
        crate::support::out_folder::Existing::MustBeEmpty,
    )?;
    let mut by_variant: BTreeMap<String, BTreeMap<String, (String, String, &Release)>> =
        BTreeMap::new();
    for release in releases {
        for a in release
            .manifest
            .artifacts
            .iter()
            .filter(|a| a.kind == "wheel")
        {
            let wheels = by_variant.entry(a.variant.clone()).or_default();
            if let Some((sha, _, other)) = wheels.get(&a.path) {
                if sha != &a.sha256 {
                    bail!(
                        "{} is in release {} ({}) and in release {} ({}) with other bytes; \
                         pip cannot tell them apart: leave one release out",
                        a.path,
                        other.tag,
                        other.source.display(),
                        release.tag,
                        release.source.display()
                    );
                }
                continue;
            }
            wheels.insert(
                a.path.clone(),
                (
                    a.sha256.clone(),
                    format!("{download_base}{}/", url_segment(&release.tag)),
                    release,
                ),
            );
        }
    }
    fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut site = Site {
        variants: BTreeMap::new(),
    };
    for (variant, wheels) in &by_variant {
        let links: Vec<Link> = wheels
            .iter()
            .map(|(file, (sha256, base, _))| Link {
                file: file.clone(),
                sha256: sha256.clone(),
                base: base.clone(),
            })
            .collect();
        pep503::write(out, variant, &links)?;
        site.variants.insert(variant.clone(), links.len());
    }
    fs::write(out.join("index.html"), landing_page(releases, &site))?;
    Ok(site)
}

fn landing_page(releases: &[Release], site: &Site) -> String {
    let mut html = String::from(
        "<!DOCTYPE html>\n<html>\n<head><title>CTranslate2 variants</title></head>\n<body>\n\
         <h1>CTranslate2 variants: pip indexes</h1>\n<ul>\n",
    );
    for (variant, wheels) in &site.variants {
        html.push_str(&format!(
            "<li><a href=\"{}/{}/\">{}</a> ({wheels} wheels)</li>\n",
            pep503::DIR,
            pep503::html_escape(variant),
            pep503::html_escape(variant)
        ));
    }
    html.push_str("</ul>\n<p>Releases: ");
    let tags: Vec<String> = releases
        .iter()
        .map(|r| pep503::html_escape(&r.tag))
        .collect();
    html.push_str(&tags.join(", "));
    html.push_str("</p>\n</body>\n</html>\n");
    html
}

/// A tag as one URL path segment: RFC 3986's unreserved characters kept, the rest
/// percent-encoded (a git tag may hold `"`, `<`, `>`, `%`, `#`).
fn url_segment(tag: &str) -> String {
    tag.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
