//! The Pages site's front page (`index.html`): which command installs the build for the
//! reader's GPU. The card table of the newest release's `variants.json` (GPU → target →
//! variant), then per variant of that release what it is for, the pip, uv and PyApp commands
//! with its index, its wheels (platform, Python, size, download link) and the platforms a
//! `--partial` release left out; then every release,
//! newest first, with its SHA256SUMS and manifest.json. Plain HTML, no script; every text
//! written through [`html_escape`], every command through [`commands`]. Links to the site's
//! own pages are relative (`whl/cpu/`), links to files are the release assets' URLs, as the
//! pip index writes them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{Release, commands, url_segment};
use crate::release::wheel_index;
use crate::release::{Artifact, MANIFEST, SELECTOR_DATA};
use crate::variant::card_table::{self, Style};
use crate::variant::coverage::Coverage;
use ct2v_bundle::checksums;
use ct2v_fetch::pep503::{self, html_escape};
use ct2v_fetch::wheel_name::WheelName;
use ct2v_support::diagnostic::InputError;
use ct2v_support::units::human_size;

/// The site's URL written into the commands when `--site-url` is not given.
pub(crate) const SITE_PLACEHOLDER: &str = "https://OWNER.github.io/REPO";

/// What the front page is made from.
pub(crate) struct FrontPage<'a> {
    /// Every release of the site; the last one is the newest (`pages --release`).
    pub releases: &'a [Release],
    /// The newest release's `variants.json`, when its folder has one.
    pub coverage: Option<&'a Coverage>,
    /// Every variant the site's pip index serves, with its number of wheels.
    pub variants: &'a BTreeMap<String, usize>,
    /// Where release assets are downloaded from (`<download_base><tag>/<file>`), ending in `/`.
    pub download_base: &'a str,
    /// The site's own URL, without a trailing `/`, for the commands.
    pub site_url: &'a str,
}

/// The front page as HTML; a command that cannot be written for every shell is bad input
/// naming its value.
pub(super) fn render(page: &FrontPage) -> Result<String, InputError> {
    let mut html = String::from(HEAD);
    html.push_str("<h1>CTranslate2 builds per GPU</h1>\n");
    if let Some(newest) = page.releases.last() {
        html.push_str(&format!(
            "<p>CTranslate2 {} (release {}), built for each GPU family, installed with pip from \
             this site's index of that build. Find your GPU in the table, then run the \
             command of the variant that serves it.</p>\n",
            html_escape(&newest.manifest.version),
            html_escape(&newest.tag)
        ));
        html.push_str(&cards(page.coverage, &newest.tag));
        html.push_str(&variants(page, newest)?);
    }
    html.push_str(&releases(page));
    html.push_str("</body>\n</html>\n");
    Ok(html)
}

const HEAD: &str = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<title>CTranslate2 builds per GPU: pip indexes</title>\n<style>\n\
body{font-family:system-ui,sans-serif;max-width:70em;margin:1em auto;padding:0 1em;line-height:1.4}\n\
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left}\n\
pre{background:#f4f4f4;padding:.5em;overflow-x:auto}\n\
</style>\n</head>\n<body>\n";

/// The card table, or why there is none.
fn cards(coverage: Option<&Coverage>, tag: &str) -> String {
    let mut html = String::from("<h2 id=\"cards\">Which variant for my GPU</h2>\n");
    let Some(coverage) = coverage else {
        html.push_str(&format!(
            "<p>Release {} has no {SELECTOR_DATA}, so this page has no card table: see what each \
             variant below is for.</p>\n",
            html_escape(tag)
        ));
        return html;
    };
    let style = Style {
        code: |t| format!("<code>{}</code>", html_escape(t)),
        text: html_escape,
    };
    html.push_str(
        "<p>Any GPU not in the table, or none: the <code>cpu</code> variant. \"Through PTX\": \
         the driver compiles the kernels at first use.</p>\n<table>\n<thead><tr><th>GPU</th>\
         <th>target</th><th>served by</th></tr></thead>\n<tbody>\n",
    );
    for row in card_table::card_rows(coverage) {
        html.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            html_escape(&row.gpu),
            html_escape(&row.target),
            row.served_text(&style)
        ));
    }
    html.push_str("</tbody>\n</table>\n");
    html
}

/// The newest release's wheels of each variant, by variant name.
fn wheels_by_variant(release: &Release) -> BTreeMap<&str, Vec<&Artifact>> {
    let mut by_variant: BTreeMap<&str, Vec<&Artifact>> = BTreeMap::new();
    for a in release
        .manifest
        .artifacts
        .iter()
        .filter(|a| a.kind == "wheel")
    {
        by_variant.entry(&a.variant).or_default().push(a);
    }
    by_variant
}

/// Per variant of `newest`: what it is for, the commands, the wheels.
fn variants(page: &FrontPage, newest: &Release) -> Result<String, InputError> {
    let by_variant = wheels_by_variant(newest);
    let jumps: Vec<String> = by_variant
        .keys()
        .map(|v| {
            format!(
                "<a href=\"#variant-{}\"><code>{}</code></a>",
                html_escape(&url_segment(v)),
                html_escape(v)
            )
        })
        .collect();
    let mut html = format!(
        "<h2 id=\"variants\">Variants</h2>\n<p>{}</p>\n",
        jumps.join(" · ")
    );
    for (variant, wheels) in &by_variant {
        html.push_str(&variant_section(page, newest, variant, wheels)?);
    }
    let older: Vec<String> = page
        .variants
        .keys()
        .filter(|v| !by_variant.contains_key(v.as_str()))
        .map(|v| index_link(v))
        .collect();
    if !older.is_empty() {
        html.push_str(&format!(
            "<p>Also in the index, from earlier releases only: {}.</p>\n",
            older.join(", ")
        ));
    }
    let absent: BTreeSet<&str> = newest
        .manifest
        .left_out
        .iter()
        .map(|l| l.variant.as_str())
        .filter(|v| !by_variant.contains_key(v))
        .collect();
    let absent: Vec<&str> = absent.into_iter().collect();
    if !absent.is_empty() {
        html.push_str(&format!(
            "<p>Not in release {}: {}; {}</p>\n",
            html_escape(&newest.tag),
            codes(&absent),
            LEFT_OUT_WHY
        ));
    }
    Ok(html)
}

/// Why a variant or platform is missing from a release, and what brings it.
const LEFT_OUT_WHY: &str = "its build did not pass (the release notes say which job and \
                            why); a re-run of that job and of the release adds it to this index.";

/// Each of `names` in `<code>`, comma-separated.
fn codes(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("<code>{}</code>", html_escape(n)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `<a href="whl/<variant>/">…</a>`.
fn index_link(variant: &str) -> String {
    format!(
        "<a href=\"{}/{}/\"><code>{}</code></a>",
        wheel_index::DIR,
        html_escape(&url_segment(variant)),
        html_escape(variant)
    )
}

fn variant_section(
    page: &FrontPage,
    newest: &Release,
    variant: &str,
    wheels: &[&Artifact],
) -> Result<String, InputError> {
    let mut html = format!(
        "<section id=\"variant-{}\">\n<h3><code>{}</code></h3>\n<p>{}</p>\n<p>Its pip index: {}</p>\n",
        html_escape(&url_segment(variant)),
        html_escape(variant),
        html_escape(&wheels[0].description),
        index_link(variant)
    );
    let index = format!("{}/{}/{variant}", page.site_url, wheel_index::DIR);
    let index = commands::quoted(&format!("the index of `{variant}`"), &index)?;
    let mut requirements: Vec<(String, &str)> = wheels
        .iter()
        .filter_map(|a| Some((WheelName::parse(Path::new(&a.path)).ok()?, a.path.as_str())))
        .map(|(w, file)| match w.local {
            Some(local) => (format!("ctranslate2=={}+{local}", w.public_version), file),
            None => (format!("ctranslate2=={}", w.public_version), file),
        })
        .collect();
    requirements.sort();
    requirements.dedup_by(|a, b| a.0 == b.0);
    for (requirement, file) in &requirements {
        let quoted = commands::quoted(&format!("the version of {file}"), requirement)?;
        let args = html_escape(&format!("--extra-index-url {index} {quoted}"));
        html.push_str(&format!(
            "<p>For <code>{}</code> with pip, uv, or a PyApp exe (into its own environment); \
             each command runs as it is in {}:</p>\n<pre>pip install {args}</pre>\n\
             <pre>uv pip install {args}</pre>\n<pre>app.exe self pip install {args}</pre>\n",
            html_escape(requirement),
            commands::SHELLS,
        ));
    }
    html.push_str(&wheel_table(page.download_base, newest, wheels));
    let missing = newest.manifest.platforms_left_out(variant);
    if !missing.is_empty() {
        html.push_str(&format!(
            "<p>Not in release {} for {}: {}</p>\n",
            html_escape(&newest.tag),
            codes(&missing),
            LEFT_OUT_WHY
        ));
    }
    html.push_str("</section>\n");
    Ok(html)
}

/// The asset URL of `file` of release `tag`, as the pip index links it.
fn asset_url(download_base: &str, tag: &str, file: &str) -> String {
    format!(
        "{download_base}{}/{}",
        url_segment(tag),
        pep503::href_name(file)
    )
}

fn wheel_table(download_base: &str, release: &Release, wheels: &[&Artifact]) -> String {
    let mut html = String::from(
        "<table>\n<thead><tr><th>wheel</th><th>platform</th><th>Python</th><th>size</th>\
         </tr></thead>\n<tbody>\n",
    );
    for a in wheels {
        html.push_str(&format!(
            "<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            html_escape(&asset_url(download_base, &release.tag, &a.path)),
            html_escape(&a.path),
            html_escape(&a.platform),
            html_escape(&a.python),
            human_size(a.size)
        ));
    }
    html.push_str("</tbody>\n</table>\n");
    html
}

/// Every release, newest first: tag, version, wheels, its checksums and manifest.
fn releases(page: &FrontPage) -> String {
    let mut html = String::from(
        "<h2 id=\"releases\">Releases</h2>\n<table>\n<thead><tr><th>tag</th><th>CTranslate2</th>\
         <th>wheels</th><th>files</th></tr></thead>\n<tbody>\n",
    );
    for release in page.releases.iter().rev() {
        let wheels = release
            .manifest
            .artifacts
            .iter()
            .filter(|a| a.kind == "wheel")
            .count();
        let files: Vec<String> = [checksums::FILE_NAME, MANIFEST]
            .iter()
            .map(|file| {
                format!(
                    "<a href=\"{}\">{}</a>",
                    html_escape(&asset_url(page.download_base, &release.tag, file)),
                    html_escape(file)
                )
            })
            .collect();
        html.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{wheels}</td><td>{}</td></tr>\n",
            html_escape(&release.tag),
            html_escape(&release.manifest.version),
            files.join(" ")
        ));
    }
    html.push_str("</tbody>\n</table>\n");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A release of one Windows wheel of `variant`, its manifest as `release` writes it.
    fn release(tag: &str, variant: &str, description: &str) -> Release {
        let manifest = serde_json::json!({
            "schema_version": 1,
            "version": "4.7.1",
            "artifacts": [{
                "path": format!("ctranslate2-4.7.1+{variant}-cp312-cp312-win_amd64.whl"),
                "kind": "wheel",
                "variant": variant,
                "description": description,
                "platform": "windows-x86_64",
                "python": "3.12",
                "ctranslate2": "4.7.1",
                "size": 327_571_046,
                "sha256": "ab".repeat(32),
                "inputs": [],
                "sdk": null,
                "bundled": [],
                "toolchain": null,
            }],
        });
        Release {
            tag: tag.into(),
            manifest: serde_json::from_value(manifest).unwrap(),
            coverage: None,
            source: "manifest.json".into(),
        }
    }

    fn render_of(releases: &[Release], coverage: Option<&Coverage>) -> String {
        let variants = BTreeMap::from([("cpu".to_string(), 1)]);
        render(&FrontPage {
            releases,
            coverage,
            variants: &variants,
            download_base: "https://github.com/o/r/releases/download/",
            site_url: SITE_PLACEHOLDER,
        })
        .unwrap()
    }

    /// A `--partial` release: the variant's section names the platform it lacks, and a
    /// variant with no wheel at all is named once, each with what brings it.
    #[test]
    fn what_a_partial_release_left_out_is_named_per_platform() {
        let mut releases = [release("v4.7.1", "cpu", "CPU only")];
        let left = |variant: &str, platform: &str, job: &str| crate::release::LeftOut {
            variant: variant.into(),
            platform: platform.into(),
            job: job.into(),
            reason: "its check failed".into(),
        };
        releases[0].manifest.left_out = vec![
            left("cpu", "linux-x86_64", "cpu linux-x86_64 py3.12"),
            left("cuda", "linux-x86_64", "cuda linux-x86_64 py3.12"),
            left("cuda", "windows-x86_64", "cuda windows-x86_64 py3.12"),
        ];
        let page = render_of(&releases, None);
        let cpu = &page[page.find("<section id=\"variant-cpu\">").unwrap()..];
        let cpu = &cpu[..cpu.find("</section>").unwrap()];
        assert!(
            cpu.contains(
                "<p>Not in release v4.7.1 for <code>linux-x86_64</code>: its build did not pass"
            ),
            "{cpu}"
        );
        assert_eq!(
            page.matches("Not in release v4.7.1: <code>cuda</code>; its build did not pass")
                .count(),
            1,
            "{page}"
        );
        // A complete release says nothing of the kind.
        let page = render_of(&[release("v4.7.1", "cpu", "CPU only")], None);
        assert!(!page.contains("Not in release"), "{page}");
    }

    #[test]
    fn a_hostile_description_and_tag_are_escaped_everywhere() {
        let releases = [release(
            "v1\"><script>alert(1)</script>",
            "cpu",
            "<img src=x onerror=alert(1)> & more",
        )];
        let page = render_of(&releases, None);
        assert!(
            !page.contains("<script>") && !page.contains("<img"),
            "{page}"
        );
        assert!(page.contains("&lt;img src=x onerror=alert(1)&gt; &amp; more"));
        assert!(page.contains("<td>v1&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;</td>"));
        // In a URL the tag is one percent-encoded path segment.
        assert!(page.contains(
            "href=\"https://github.com/o/r/releases/download/v1%22%3E%3Cscript%3Ealert%281%29%3C%2Fscript%3E/SHA256SUMS\""
        ));
    }

    #[test]
    fn the_page_has_the_commands_sizes_and_links_and_a_card_table_only_from_variants_json() {
        let releases = [release("v4.7.1", "cpu", "CPU only")];
        let page = render_of(&releases, None);
        assert!(page.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
        assert!(page.contains("<meta charset=\"utf-8\">") && page.contains("<title>"));
        assert!(page.contains("has no variants.json, so this page has no card table"));
        assert!(!page.contains("<th>GPU</th>"));
        for tool in ["pip install", "uv pip install", "app.exe self pip install"] {
            assert!(page.contains(&format!(
                "{tool} --extra-index-url &quot;https://OWNER.github.io/REPO/whl/cpu&quot; \
                 &quot;ctranslate2==4.7.1+cpu&quot;"
            )));
        }
        assert!(page.contains("<td>windows-x86_64</td><td>3.12</td><td>312.4 MiB</td>"));
        assert!(page.contains(
            "<a href=\"https://github.com/o/r/releases/download/v4.7.1/ctranslate2-4.7.1%2Bcpu-cp312-cp312-win_amd64.whl\">"
        ));
        assert!(page.contains("<a href=\"whl/cpu/\">"));

        let coverage = crate::variant::coverage::with_cards(
            &crate::variant::gpus::checkout_gpus(),
            Vec::new(),
        );
        let page = render_of(&releases, Some(&coverage));
        assert!(!page.contains("no card table"));
        assert_eq!(
            page.matches("<td>not served: <code>cpu</code></td>")
                .count(),
            coverage.cards.len()
        );
    }
}
