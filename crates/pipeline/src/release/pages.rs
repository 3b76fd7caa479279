//! The pip index as a static site (GitHub Pages), over every release.
//!
//! A Pages deployment replaces the whole site, so the site is made from the manifests of all
//! releases (this one, and the earlier ones the workflow downloads with `gh release download
//! TAG -p manifest.json`): `whl/<variant>/ctranslate2/index.html` links every wheel of that
//! variant of every release, by absolute URL to the release's asset (a site may hold 1 GB, the
//! wheels are already assets), with the `#sha256=` of the manifest. So
//! `pip install --index-url https://OWNER.github.io/REPO/whl/<variant> "ctranslate2==X+<local>"`
//! keeps working for an older version after a newer release. The front page
//! ([`front_page`]) says which variant serves which GPU and the command that installs it.

mod commands;
mod front_page;

pub(crate) use front_page::SITE_PLACEHOLDER;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::release::wheel_index;
use crate::release::{MANIFEST, Manifest, SELECTOR_DATA};
use crate::variant::coverage::Coverage;
use ct2v_fetch::pep503::Link;
use ct2v_support::diagnostic::{InputError, quoted};
use ct2v_support::fsx;
use ct2v_support::report::Reporter;
use ct2v_support::text_rules;

/// One release the site links: its tag (the download URL's folder) and its manifest.
pub struct Release {
    pub tag: String,
    pub manifest: Manifest,
    /// Its `variants.json`, when the folder has one (an earlier release's folder holds only
    /// the manifest the workflow downloads).
    pub coverage: Option<Coverage>,
    /// The file it was read from, for errors.
    pub source: PathBuf,
}

/// Reads `dir/manifest.json` as the release `tag`, and `dir/variants.json` if it is there.
pub(crate) fn read_release(dir: &Path, tag: &str) -> Result<Release> {
    let manifest = Manifest::read(dir)?;
    let mut problems = manifest.path_problems();
    problems.extend(manifest.name_problems());
    if !problems.is_empty() {
        return Err(InputError::new(format!(
            "{}: names no release writes:\n  {}",
            dir.join(MANIFEST).display(),
            problems.join("\n  ")
        ))
        .note("give the manifest.json `cargo xtask release` wrote for that release")
        .into());
    }
    Ok(Release {
        tag: tag.to_string(),
        manifest,
        coverage: read_coverage(dir)?,
        source: dir.join(MANIFEST),
    })
}

/// `dir/variants.json` (the released coverage), `None` when the folder has none.
pub(crate) fn read_coverage(dir: &Path) -> Result<Option<Coverage>> {
    let source = dir.join(SELECTOR_DATA);
    let text = match fs::read_to_string(&source) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(InputError::new(format!("cannot read {}: {e}", source.display())).into());
        }
    };
    let coverage = serde_json::from_str(&text).map_err(|e| {
        InputError::new(format!(
            "{}: not the coverage `cargo xtask release` writes: {e}",
            source.display()
        ))
    })?;
    Ok(Some(coverage))
}

/// The earlier releases below `dir`: one folder per tag, each holding that release's
/// manifest.json (a folder without one is an error naming it).
pub(crate) fn read_earlier(dir: &Path) -> Result<Vec<Release>> {
    let mut releases = Vec::new();
    let entries = fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries {
        let entry = entry?;
        if !entry.file_type()?.is_dir() {
            continue;
        }
        let tag = entry.file_name().to_string_lossy().into_owned();
        text_rules::git_tag(&tag).map_err(|refusal| {
            InputError::new(format!(
                "{}: the folder {} is not a release's tag: {}",
                dir.display(),
                quoted(&tag),
                refusal.why
            ))
            .note("each folder of --earlier is named by its release's tag, e.g. v4.7.1")
        })?;
        releases.push(read_release(&entry.path(), &tag)?);
    }
    releases.sort_by(|a, b| a.tag.cmp(&b.tag));
    Ok(releases)
}

/// What `write_site` wrote: wheels per variant.
pub(crate) struct Site {
    pub variants: BTreeMap<String, usize>,
}

/// Writes the site into `out` (missing, empty, or holding this very site; staged beside it and
/// renamed into place whole, `out_folder::put_in_place`, one run at a time): `whl/<variant>/…` for
/// every variant of `releases`, each wheel linked at `<download_base><tag>/<file>`, and an
/// `index.html` saying which variant serves which GPU and how to install it (its commands
/// name the index at `site_url`, or at [`SITE_PLACEHOLDER`]), and an empty `.nojekyll` (a
/// Jekyll build of the site would drop files named `_…`). Two releases with one wheel name
/// but other bytes are refused: pip could not tell them apart. `download_base` is a
/// [`text_rules::base_url`] and `site_url` a [`text_rules::web_url`], as the command line
/// checks them. The staging folders it sweeps are said through `reporter`.
pub(crate) fn write_site(
    releases: &[Release],
    download_base: &str,
    site_url: Option<&str>,
    out: &Path,
    reporter: &Reporter,
) -> Result<Site> {
    let _lock = ct2v_support::out_lock::hold(out)
        .with_context(|| format!("cannot write {}", out.display()))?;
    ct2v_support::out_folder::check_out(
        "--out",
        out,
        ct2v_support::out_folder::Existing::EmptyOrSame,
    )?;
    let by_variant = wheels_by_variant(releases, download_base)?;
    let selector = selector_wheels(releases, download_base);
    let site = Site {
        variants: by_variant
            .iter()
            .map(|(variant, wheels)| (variant.clone(), wheels.len()))
            .collect(),
    };
    // Rendered before anything is staged: a command it cannot write leaves nothing behind.
    let front = front_page::render(&front_page::FrontPage {
        releases,
        coverage: releases.last().and_then(|r| r.coverage.as_ref()),
        variants: &site.variants,
        download_base,
        site_url: site_url.unwrap_or(SITE_PLACEHOLDER).trim_end_matches('/'),
    })?;
    let staging = ct2v_support::out_folder::staging_beside(out, ".pages-", reporter)?;
    let staged = staging.path().join("site");
    fsx::create_dir_all(&staged)?;
    for (variant, wheels) in &by_variant {
        let links: Vec<Link> = wheels
            .iter()
            .map(|(file, (sha256, base, _))| Link {
                file: file.clone(),
                sha256: sha256.clone(),
                base: base.clone(),
            })
            .collect();
        wheel_index::write(&staged, variant, &links, &selector)?;
    }
    fsx::write(&staged.join("index.html"), front)?;
    fsx::write(&staged.join(".nojekyll"), "")?;
    ct2v_support::out_folder::put_in_place("--out", &staged, out, reporter)?;
    Ok(site)
}

/// Per variant, its wheels of every release by file name: sha256, the download folder and
/// the release.
type Wheels<'a> = BTreeMap<String, BTreeMap<String, (String, String, &'a Release)>>;

/// The wheels of `releases`, each once; a name in two releases with other bytes is refused.
fn wheels_by_variant<'a>(releases: &'a [Release], download_base: &str) -> Result<Wheels<'a>> {
    let mut by_variant = Wheels::new();
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
    Ok(by_variant)
}

/// A tag as one URL path segment: RFC 3986's unreserved characters kept, the rest
/// percent-encoded (a git tag may hold `"`, `<`, `>`, `%`, `#`).
/// Every release's selector wheel (each release's has its own version), linked in every
/// variant's index.
fn selector_wheels(releases: &[Release], download_base: &str) -> Vec<Link> {
    releases
        .iter()
        .flat_map(|r| {
            r.manifest
                .artifacts
                .iter()
                .filter(|a| a.kind == crate::release::SELECTOR_WHEEL_KIND)
                .map(move |a| Link {
                    file: a.path.clone(),
                    sha256: a.sha256.clone(),
                    base: format!("{download_base}{}/", url_segment(&r.tag)),
                })
        })
        .collect()
}

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
