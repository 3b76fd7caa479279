//! The selector an app runs (`crates/pipeline/python/ct2_variant_select.py`) as a pure-Python wheel of
//! each release, with the release's own `variants.json` as its data block: listed in every
//! variant's index (project `ct2-variant-select`), so an app installs it from the URL it
//! installs CTranslate2 from, and it answers only with what that release published.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result, bail};

/// The selector as the tool was built with it.
const SELECTOR: &str = include_str!("../../python/ct2_variant_select.py");
const DATA_BEGIN: &str = "# --- generated data: begin ---\n";
const DATA_END: &str = "# --- generated data: end ---";

/// The wheel's version for release `version`: the release's own when it is a plain release
/// number (`4.7.1`), else `<ctranslate2>+<label>` (a PEP 440 local version), so that every
/// release's selector wheel has its own name.
pub(crate) fn version_for(version: &str, ctranslate2: &str) -> String {
    let plain = !version.is_empty()
        && version
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if plain {
        return version.to_string();
    }
    let label: String = version
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '.'
            }
        })
        .collect();
    format!("{ctranslate2}+{}", label.trim_matches('.'))
}

/// The module with `data_json` (a release's `variants.json`) as its data block.
fn module_with(data_json: &str) -> Result<String> {
    if data_json.contains("\"\"\"") {
        bail!("variants.json holds `\"\"\"`, which the selector's data block cannot carry");
    }
    let (Some(begin), Some(end)) = (SELECTOR.find(DATA_BEGIN), SELECTOR.find(DATA_END)) else {
        bail!("the selector has lost its data markers");
    };
    Ok(format!(
        "{}{DATA_BEGIN}DATA = json.loads(r\"\"\"\n{}\n\"\"\")\n{}",
        &SELECTOR[..begin],
        data_json.trim_end(),
        &SELECTOR[end..]
    ))
}

/// Writes `ct2_variant_select-<version>-py3-none-any.whl` into `out`; returns its file name.
pub(crate) fn write(data_json: &str, version: &str, out: &Path) -> Result<String> {
    let tree = tempfile::tempdir()?;
    let info = tree
        .path()
        .join(format!("ct2_variant_select-{version}.dist-info"));
    fs::create_dir_all(&info)?;
    ct2v_support::fsx::write(
        &tree.path().join("ct2_variant_select.py"),
        module_with(data_json)?,
    )?;
    ct2v_support::fsx::write(
        &info.join("METADATA"),
        format!(
            "Metadata-Version: 2.1\nName: ct2-variant-select\nVersion: {version}\n\
             Summary: Which CTranslate2 variant (cpu, cuda, ROCm family) fits this machine's GPU\n\
             Requires-Python: >=3.10\n"
        ),
    )?;
    ct2v_support::fsx::write(
        &info.join("WHEEL"),
        "Wheel-Version: 1.0\nGenerator: ct2-variants\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    )?;
    let name = format!("ct2_variant_select-{version}-py3-none-any.whl");
    ct2v_bundle::wheel::write(tree.path(), &out.join(&name))
        .with_context(|| format!("cannot write the selector wheel {name}"))?;
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_the_release_or_a_local_version_of_ctranslate2() {
        assert_eq!(version_for("4.7.1", "4.7.1"), "4.7.1");
        assert_eq!(version_for("4.7.1-1", "4.7.1"), "4.7.1+4.7.1.1");
        assert_eq!(version_for("nightly_X", "4.8.4"), "4.8.4+nightly.x");
    }

    #[test]
    fn the_data_block_is_the_releases() {
        let module = module_with("{\"schema_version\": 1, \"variants\": []}").unwrap();
        assert!(module.contains("DATA = json.loads(r\"\"\"\n{\"schema_version\": 1, \"variants\": []}\n\"\"\")\n# --- generated data: end ---"));
        assert_eq!(module.matches(DATA_BEGIN).count(), 1);
        assert!(module_with("\"\"\"").is_err());
    }
}
