//! What a wheel's file name says (PEP 427: `{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl`):
//! its version and local label, the Python it is for, and the platform, so that a check of a
//! given wheel (`verify --wheel`) picks the right interpreter and refuses the wrong one.

use std::path::Path;

use ct2v_support::diagnostic::InputError;
use ct2v_support::platform::Platform;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelName {
    pub file: String,
    pub project: String,
    /// Without the local label: `4.7.1`.
    pub public_version: String,
    /// `cu12` of `4.7.1+cu12`.
    pub local: Option<String>,
    /// `cp312`
    pub(crate) python_tag: String,
    /// `3.12`, for a CPython tag.
    pub python: Option<String>,
    pub platform_tag: String,
    pub platform: Option<Platform>,
}

impl WheelName {
    pub fn parse(path: &Path) -> Result<WheelName, InputError> {
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let bad = |why: &str| {
            InputError::new(format!("{}: {why}", path.display())).note(
                "a wheel's file name is NAME-VERSION-PYTHON-ABI-PLATFORM.whl, e.g. \
                 ctranslate2-4.7.1+cpu-cp312-cp312-win_amd64.whl",
            )
        };
        let Some(stem) = file.strip_suffix(".whl") else {
            return Err(bad("not a wheel (.whl)"));
        };
        let parts: Vec<&str> = stem.split('-').collect();
        if !(parts.len() == 5 || parts.len() == 6) {
            return Err(bad("not a wheel's file name"));
        }
        let n = parts.len();
        let (version, local) = match parts[1].split_once('+') {
            Some((v, l)) => (v.to_string(), Some(l.to_string())),
            None => (parts[1].to_string(), None),
        };
        let python_tag = parts[n - 3].to_string();
        let python = python_tag
            .strip_prefix("cp3")
            .filter(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
            .map(|m| format!("3.{m}"));
        let platform_tag = parts[n - 1].to_string();
        let platform = if platform_tag == "win_amd64" {
            Some(Platform::WindowsX86_64)
        } else if platform_tag.ends_with("_x86_64") && platform_tag.contains("linux") {
            Some(Platform::LinuxX86_64)
        } else {
            None
        };
        Ok(WheelName {
            project: parts[0].to_string(),
            public_version: version,
            local,
            python_tag,
            python,
            platform_tag,
            platform,
            file,
        })
    }

    /// The wheel must be of `project`, for `platform` and Python `python`; else what to pass.
    pub fn check_fits(
        &self,
        project: &str,
        platform: Platform,
        python: &str,
    ) -> Result<(), InputError> {
        if self.project != project {
            return Err(InputError::new(format!(
                "{} is a wheel of `{}`, not {project}",
                self.file, self.project
            )));
        }
        if self.platform != Some(platform) {
            return Err(InputError::new(format!(
                "{} is for `{}`, not {platform}",
                self.file, self.platform_tag
            ))
            .note(match self.platform {
                Some(p) => format!("pass --platform {p}"),
                None => "check a win_amd64 or manylinux x86_64 wheel".to_string(),
            }));
        }
        if self.python.as_deref() != Some(python) {
            return Err(InputError::new(format!(
                "{} is for Python `{}`, not {python}: pip would refuse it",
                self.file, self.python_tag
            ))
            .note(match &self.python {
                Some(p) => format!(
                    "pass --python {p}, or give the cp{} wheel",
                    python.replace('.', "")
                ),
                None => "give a CPython wheel (cp3XX)".to_string(),
            }));
        }
        Ok(())
    }
}

/// The project's page on `index` (PEP 503: `<index>/<normalized name>/`).
pub fn project_page(index: &str, project: &str) -> String {
    let base = if index.ends_with('/') {
        index.to_string()
    } else {
        format!("{index}/")
    };
    format!("{base}{}/", normalize(project))
}

/// PEP 503's normalized name: lower case, runs of `-`, `_` and `.` as one `-`.
pub fn normalize(name: &str) -> String {
    let mut out = String::new();
    let mut dash = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            dash = true;
            continue;
        }
        if dash && !out.is_empty() {
            out.push('-');
        }
        dash = false;
        out.extend(c.to_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalized_as_pep_503_says() {
        assert_eq!(normalize("Rocm_SDK.core"), "rocm-sdk-core");
        assert_eq!(normalize("rocm--sdk__core"), "rocm-sdk-core");
        assert_eq!(
            project_page("https://x/simple", "rocm_sdk_core"),
            "https://x/simple/rocm-sdk-core/"
        );
    }

    #[test]
    fn names_are_read_and_a_wrong_python_or_platform_refused() {
        let w = WheelName::parse(Path::new(
            "/d/ctranslate2-4.7.1+cu12-cp312-cp312-win_amd64.whl",
        ))
        .unwrap();
        assert_eq!(w.public_version, "4.7.1");
        assert_eq!(w.local.as_deref(), Some("cu12"));
        assert_eq!(w.python.as_deref(), Some("3.12"));
        assert_eq!(w.platform, Some(Platform::WindowsX86_64));
        assert!(
            w.check_fits("ctranslate2", Platform::WindowsX86_64, "3.12")
                .is_ok()
        );
        let err = w
            .check_fits("ctranslate2", Platform::WindowsX86_64, "3.11")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cp312") && err.contains("--python 3.12"),
            "{err}"
        );
        let err = w
            .check_fits("ctranslate2", Platform::LinuxX86_64, "3.12")
            .unwrap_err()
            .to_string();
        assert!(err.contains("--platform windows-x86_64"), "{err}");
        let l = WheelName::parse(Path::new(
            "ctranslate2-4.7.1-cp311-cp311-manylinux_2_28_x86_64.whl",
        ))
        .unwrap();
        assert_eq!((l.local, l.platform), (None, Some(Platform::LinuxX86_64)));
        assert!(WheelName::parse(Path::new("x.zip")).is_err());
        assert!(WheelName::parse(Path::new("a-b.whl")).is_err());
        let other = WheelName::parse(Path::new("numpy-1.26.4-cp312-cp312-win_amd64.whl")).unwrap();
        assert!(
            other
                .check_fits("ctranslate2", Platform::WindowsX86_64, "3.12")
                .unwrap_err()
                .to_string()
                .contains("not ctranslate2")
        );
    }
}
