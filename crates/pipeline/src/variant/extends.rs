//! `extends = "<variant>"`: a variant file that says only how it differs from another
//! variant's. The base's layers go under the variant's own when stacking
//! ([`super::Catalog`]); here the bases are read and the rule is checked: one level only, a
//! variant that exists, never itself, and only in a variant file.

use std::collections::BTreeMap;
use std::path::Path;

use super::layer::Layer;
use super::{Files, parse_layer};
use ct2v_support::diagnostic::InputError;

/// The file of every variant that one of `variants` extends, by name.
pub(super) fn load_bases(
    files: &mut Files,
    names: &[String],
    variants: &BTreeMap<String, Layer>,
) -> Result<BTreeMap<String, Layer>, InputError> {
    let mut bases = BTreeMap::new();
    for (name, layer) in variants {
        let Some(base) = &layer.extends else {
            continue;
        };
        if base.value == *name {
            return Err(files
                .error_at(base, format!("variant `{name}` extends itself"))
                .note("name the variant this one differs from, or remove `extends`"));
        }
        if !names.contains(&base.value) {
            return Err(files
                .error_at(
                    base,
                    format!("`extends`: there is no variant `{}`", base.value),
                )
                .allowed(&base.value, names));
        }
        if bases.contains_key(&base.value) {
            continue;
        }
        let layer = match variants.get(&base.value) {
            Some(loaded) => loaded.clone(),
            None => {
                let path = Path::new("variants").join(format!("{}.toml", base.value));
                parse_layer(files, &path)?
            }
        };
        if let Some(further) = &layer.extends {
            return Err(files
                .error_at(
                    base,
                    format!(
                        "`{name}` extends `{}`, which extends `{}`: only one level is allowed",
                        base.value, further.value
                    ),
                )
                .note(format!(
                    "extend `{}` directly, or copy what `{}` adds into variants/{name}.toml",
                    further.value, base.value
                )));
        }
        bases.insert(base.value.clone(), layer);
    }
    Ok(bases)
}

/// `extends` belongs only in a variant file: `what` names the file that has it otherwise.
pub(super) fn refuse_outside_variants(
    files: &Files,
    layer: &Layer,
    what: &str,
) -> Result<(), InputError> {
    match &layer.extends {
        Some(base) => Err(files
            .error_at(
                base,
                format!("`extends` belongs in a variant file, not in {what}"),
            )
            .note("move it to variants/<name>.toml of the variant that differs")),
        None => Ok(()),
    }
}
