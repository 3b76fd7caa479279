//! Whether a release tag fits the build it would release: `v` and a release version `release
//! --version` takes (PEP 440), whose release numbers are a CTranslate2 version the matrix
//! builds (`v4.7.1`, a re-release `v4.7.1-2` or `v4.7.1.post2`, `v4.7.1rc1`). `release` would
//! refuse the first only at its end, hours after the tag was pushed; the second publishes
//! wheels of one version under another's name. CI checks it in its first minutes.

use ct2v_support::diagnostic::{InputError, escaped};
use ct2v_support::text_rules;

/// `Ok` when `tag` releases one of `built` (the CTranslate2 versions of the matrix).
pub fn check(tag: &str, built: &[&str]) -> Result<(), InputError> {
    let next = format!(
        "tag v<CTranslate2 version> (v{0}), or v{0}-2 for a re-release of the same version",
        built.first().copied().unwrap_or("4.7.1")
    );
    let Some(version) = tag.strip_prefix('v') else {
        return Err(InputError::new(format!(
            "the release tag `{}` (--release-tag) does not start with `v`: release.yml runs on `v*` tags only",
            escaped(tag)
        ))
        .note(next));
    };
    if let Err(refusal) = text_rules::release_version(version) {
        return Err(InputError::new(format!(
            "the release tag `{}` (--release-tag) is not a release version: {}",
            escaped(tag),
            refusal.why
        ))
        .note(next));
    }
    let numbers = release_numbers(version);
    if built.contains(&numbers.as_str()) {
        return Ok(());
    }
    Err(InputError::new(format!(
        "the release tag `{}` (--release-tag) is CTranslate2 {}, but this build makes CTranslate2 {}",
        escaped(tag),
        escaped(&numbers),
        built.join(", ")
    ))
    .note(next)
    .note(
        "or change the version built (variants/defaults.toml `ctranslate2`, or build.yml's \
         `ctranslate2` input)",
    ))
}

/// The release numbers of a PEP 440 version: `4.7.1` of `1!4.7.1.post2+cpu`, `4.7.1-2`,
/// `4.7.1rc1`.
fn release_numbers(version: &str) -> String {
    let without_epoch = version.split_once('!').map_or(version, |(_, v)| v);
    let numbers: String = without_epoch
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    numbers.trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_releases_a_built_version_or_says_which_are_built() {
        let built = ["4.7.1", "4.8.4"];
        for good in [
            "v4.7.1",
            "v4.7.1-2",
            "v4.7.1.post2",
            "v4.7.1rc1",
            "v4.8.4+cpu",
            "v1!4.7.1",
        ] {
            assert!(check(good, &built).is_ok(), "{good}");
        }
        let other = check("v4.8.5", &built).unwrap_err().to_string();
        assert!(
            other.contains("`v4.8.5` (--release-tag) is CTranslate2 4.8.5")
                && other.contains("makes CTranslate2 4.7.1, 4.8.4"),
            "{other}"
        );
        let no_v = check("4.7.1", &built).unwrap_err().to_string();
        assert!(no_v.contains("does not start with `v`"), "{no_v}");
        let not_pep440 = check("vnext\u{1b}[2J", &built).unwrap_err().to_string();
        assert!(
            not_pep440.contains("is not a release version") && !not_pep440.contains('\u{1b}'),
            "{not_pep440}"
        );
        // A version that only starts like a built one is another version.
        assert!(check("v4.7.10", &built).is_err());
        assert!(check("v4.7", &built).is_err());
    }
}
