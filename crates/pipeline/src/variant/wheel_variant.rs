//! Which variant a wheel is: the one whose `local-version` its file name carries
//! (`cu12` matches `cu{sdk-major}`), for a check given only `--wheel`.

use std::path::Path;

use ct2v_fetch::wheel_name::WheelName;
use ct2v_support::diagnostic::InputError;

/// The variant whose `local-version` the wheel carries (`cu12` matches `cu{sdk-major}`).
pub fn variant_for(root: &Path, wheel: &WheelName) -> Result<String, InputError> {
    let Some(label) = &wheel.local else {
        return Err(InputError::new(format!(
            "{} carries no local version (+cpu, +cu12…) to tell its variant",
            wheel.file
        ))
        .note("name it with --variant"));
    };
    let catalog = crate::variant::Catalog::load(root, &[])?;
    let mut found = Vec::new();
    let choices = crate::variant::Choices {
        platform: wheel.platform,
        python: wheel.python.clone(),
        ..crate::variant::Choices::default()
    };
    for name in catalog.variant_names() {
        // A variant not built for the wheel's platform or Python is not its variant.
        let Ok(resolved) = catalog.resolve(name, &choices) else {
            continue;
        };
        if resolved
            .local_version
            .as_deref()
            .is_some_and(|template| label_matches(template, label))
        {
            found.push(name.to_string());
        }
    }
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(InputError::new(format!(
            "no variant has the local version `+{label}` of {}",
            wheel.file
        ))
        .note("name it with --variant")),
        many => Err(InputError::new(format!(
            "`+{label}` is the local version of {}: name one with --variant",
            many.join(", ")
        ))),
    }
}

/// Whether `label` is what the template `local-version` gives (`{sdk-major}`: digits).
fn label_matches(template: &str, label: &str) -> bool {
    match template.split_once(crate::variant::SDK_MAJOR) {
        None => template == label,
        Some((before, after)) => label
            .strip_prefix(before)
            .and_then(|rest| rest.strip_suffix(after))
            .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_labels_match_their_templates() {
        assert!(label_matches("cu{sdk-major}", "cu12") && label_matches("cpu", "cpu"));
        assert!(!label_matches("cu{sdk-major}", "cu") && !label_matches("cu{sdk-major}", "cpu"));
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .and_then(Path::parent)
            .unwrap();
        let wheel = |f: &str| WheelName::parse(Path::new(f)).unwrap();
        let of = |f: &str| variant_for(root, &wheel(f));
        assert_eq!(
            of("ctranslate2-4.7.1+cu12-cp312-cp312-win_amd64.whl").unwrap(),
            "cuda"
        );
        assert_eq!(
            of("ctranslate2-4.7.1+gfx1010-cp312-cp312-win_amd64.whl").unwrap(),
            "rocm-gfx1010"
        );
        assert!(
            of("ctranslate2-4.7.1-cp312-cp312-win_amd64.whl")
                .unwrap_err()
                .to_string()
                .contains("--variant")
        );
        assert!(
            of("ctranslate2-4.7.1+xyz-cp312-cp312-win_amd64.whl")
                .unwrap_err()
                .to_string()
                .contains("+xyz")
        );
    }
}
