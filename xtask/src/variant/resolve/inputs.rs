//! `[inputs.NAME]` (and a `[source]` archive) as `Input`s: names, URLs, pins and the paths
//! inside them checked; references to inputs from other tables.

use std::collections::BTreeMap;

use super::Input;
use super::checks::checked;
use crate::support::diagnostic::InputError;
use crate::support::safe_path;
use crate::variant::download_url;
use crate::variant::layer::{InputSpec, Layer, SourceSpec};
use crate::variant::{Files, Loc};

/// Every input the stacked layers declare.
pub(super) fn declared(
    files: &Files,
    layer: &Layer,
) -> Result<BTreeMap<String, Input>, InputError> {
    layer
        .inputs
        .iter()
        .map(|(key, spec)| {
            let runnable = layer
                .sdk
                .as_ref()
                .and_then(|s| s.installer.as_ref())
                .is_some_and(|i| &i.value == key);
            Ok((key.clone(), checked_input(files, key, spec, runnable)?))
        })
        .collect()
}

/// `runnable`: the input is the SDK's installer, run rather than unpacked (any file name).
pub(super) fn checked_input(
    files: &Files,
    name: &str,
    spec_loc: &Loc<InputSpec>,
    runnable: bool,
) -> Result<Input, InputError> {
    if let Err(why) = safe_path::check_name(name) {
        return Err(files.error_at(
            spec_loc,
            format!("input name `{}` is not allowed: {why}", name.escape_debug()),
        ));
    }
    let spec = &spec_loc.value;
    let url = &spec.url;
    if let Some((why, note)) = download_url::problem(&url.value, runnable) {
        return Err(files
            .error_at(url, format!("input `{name}`: {why}"))
            .note(note));
    }
    if let Some(sha) = &spec.sha256 {
        check_sha256(files, sha)?;
    }
    if spec.size == Some(0) {
        return Err(files
            .error_at(
                spec_loc,
                format!("input `{name}`: `size = 0`; a download is never empty"),
            )
            .note("remove `size` and `sha256`, then `cargo xtask pin` fills them"));
    }
    let path = |v: &Option<Loc<String>>, key: &str| {
        v.as_ref()
            .map(|v| {
                checked(
                    files,
                    v,
                    &format!("input `{name}`: {key}"),
                    safe_path::check_nonempty,
                )
            })
            .transpose()
    };
    Ok(Input {
        name: name.to_string(),
        url: url.value.clone(),
        sha256: spec.sha256.as_ref().map(|s| s.value.clone()),
        size: spec.size,
        subdir: path(&spec.subdir, "subdir")?,
        expect: spec
            .expect
            .iter()
            .flatten()
            .map(|e| {
                checked(
                    files,
                    e,
                    &format!("input `{name}`: expect"),
                    safe_path::check_nonempty,
                )
            })
            .collect::<Result<_, _>>()?,
        package: spec.package.clone(),
        sdk_folder: path(&spec.sdk_folder, "sdk-folder")?,
        pin_source: spec.pin_source.clone(),
    })
}

fn check_sha256(files: &Files, sha: &Loc<String>) -> Result<(), InputError> {
    let v = &sha.value;
    if v.len() == 64
        && v.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        Ok(())
    } else {
        Err(files
            .error_at(sha, "a sha256 is 64 lowercase hex digits")
            .note("`cargo xtask pin --variant …` fills it from the download"))
    }
}

/// The `url`/`sha256`/`size`/`subdir` of a `[source]` table as an input.
pub(super) fn archive_input(
    files: &Files,
    spec: &SourceSpec,
    name: &str,
) -> Result<Input, InputError> {
    let url = spec.url.clone().ok_or_else(|| {
        files.error_at(
            &spec.kind,
            format!("[source] of kind `{}` needs `url`", spec.kind_name()),
        )
    })?;
    let input = InputSpec {
        url,
        sha256: spec.sha256.clone(),
        size: spec.size,
        subdir: spec.subdir.clone(),
        expect: None,
        package: None,
        sdk_folder: None,
        pin_source: spec.pin_source.clone(),
    };
    let loc = Loc {
        value: input,
        file: spec.kind.file,
        span: spec.kind.span.clone(),
    };
    checked_input(files, name, &loc, false)
}

pub(super) fn check_input_ref(
    files: &Files,
    reference: &Loc<String>,
    inputs: &BTreeMap<String, Input>,
) -> Result<(), InputError> {
    if inputs.contains_key(&reference.value) {
        return Ok(());
    }
    let names: Vec<&String> = inputs.keys().collect();
    Err(files
        .error_at(reference, format!("no input named `{}`", reference.value))
        .allowed(&reference.value, &names)
        .note("inputs are declared as [inputs.NAME] tables"))
}
