//! Variant files: loading `variants/*.toml` (and the shared `variants/defaults.toml`),
//! reporting mistakes in them, and resolving one variant for one platform.

pub mod card_table;
pub mod coverage;
pub mod download_url;
mod extends;
pub mod gpus;
pub mod layer;
pub mod loc;
mod resolve;
mod template;
pub mod wheel_variant;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

pub(crate) use layer::{DataFilter, OpenMpRuntime, SdkKind};
pub use layer::{Output, Policy};
pub use loc::Loc;
pub use resolve::{
    Build, Bundle, Choices, DEVICE_INPUT_PREFIX, GithubTag, IndexedWheel, Resolved, Sdk, Source,
    Submodule, Verify,
};
pub(crate) use resolve::{
    Data, Input, LibrarySource, SDK_MAJOR, Search, SourceBuild, declared_majors, sdk_major,
};
pub(crate) use template::{Placeholder, expand};

/// The build-tools requirements of a version file that names none (`build-tools`).
pub const DEFAULT_BUILD_TOOLS: &str = "wheels/build-tools.txt";

use ct2v_support::diagnostic::{InputError, Location};
use layer::{Layer, Stack};

/// The file every variant starts from; it is not a variant itself (nor is `gpus.toml`, the GPU
/// data: [`gpus`]).
pub(crate) const DEFAULTS_FILE: &str = "defaults.toml";

/// One file per CTranslate2 version, `variants/ctranslate2/<version>.toml`: its source pin
/// and what each variant needs for that version. `defaults.toml`'s `ctranslate2` names the
/// default version; `--ctranslate2` picks another.
pub const VERSIONS_DIR: &str = "variants/ctranslate2";

/// The text of every file read, so that errors can quote the offending line.
#[derive(Debug, Default)]
pub struct Files {
    root: PathBuf,
    files: Vec<(PathBuf, String)>,
}

impl Files {
    /// Reads a file and returns its index; `path` is relative to the repository root.
    fn read(&mut self, path: &Path) -> Result<usize, InputError> {
        let text = ct2v_support::diagnostic::read_text(&self.root.join(path), path)?;
        self.files.push((path.to_path_buf(), text));
        Ok(self.files.len() - 1)
    }

    pub fn location<T>(&self, loc: &Loc<T>) -> Location {
        let (path, text) = &self.files[loc.file];
        Location::from_span(path, text, loc.span.clone())
    }

    /// An error pointing at a value from a variant file.
    pub fn error_at<T>(&self, loc: &Loc<T>, message: impl Into<String>) -> InputError {
        InputError::new(message).at(self.location(loc))
    }

    pub fn path(&self, loc_file: usize) -> &Path {
        &self.files[loc_file].0
    }
}

/// A variant's name becomes a folder, a file and a matrix entry on every host: lower-case
/// letters, digits and `-`, starting with a letter, and not a Windows device name.
pub(crate) fn check_variant_name(name: &str) -> Result<(), String> {
    let first_is_letter = name.bytes().next().is_some_and(|b| b.is_ascii_lowercase());
    if !first_is_letter
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Err("a name is lower-case letters, digits and `-`, starting with a letter".into());
    }
    if ct2v_support::safe_path::is_device_name(name) {
        return Err(format!("`{name}` is a Windows device name"));
    }
    Ok(())
}

/// The variants of one checkout, parsed but not yet resolved for a platform.
#[derive(Debug)]
pub struct Catalog {
    pub root: PathBuf,
    pub files: Files,
    pub defaults: Layer,
    pub variants: BTreeMap<String, Layer>,
    /// The files of the variants that loaded ones extend (`extends`), by name.
    bases: BTreeMap<String, Layer>,
    /// The CTranslate2 version each loaded variant is resolved for.
    chosen: BTreeMap<String, String>,
    /// The version files those need, by version.
    pub versions: BTreeMap<String, Layer>,
    /// The GPU data file (`variants/gpus.toml`), checked.
    pub gpus: gpus::Gpus,
}

impl Catalog {
    /// Names of the variant files in `root/variants`, sorted.
    pub fn names(root: &Path) -> Result<Vec<String>, InputError> {
        let dir = root.join("variants");
        let entries = fs::read_dir(&dir).map_err(|e| {
            InputError::new(format!("cannot list {}: {e}", dir.display()))
                .note("run this from a ct2-variants checkout, or pass --root")
        })?;
        let mut names = Vec::new();
        for entry in entries.filter_map(|e| e.ok()) {
            let file = entry.file_name().to_string_lossy().into_owned();
            let Some(name) = file.strip_suffix(".toml") else {
                continue;
            };
            if file == DEFAULTS_FILE || file == gpus::GPUS_FILE {
                continue;
            }
            if let Err(why) = check_variant_name(name) {
                return Err(InputError::new(format!(
                    "{}: `{}` cannot be a variant: {why}",
                    dir.join(&file).display(),
                    name.escape_debug()
                ))
                .note("a variant is a file variants/<name>.toml; rename or remove this one"));
            }
            names.push(name.to_string());
        }
        names.sort();
        Ok(names)
    }

    /// The CTranslate2 versions that have a file in `variants/ctranslate2/`, sorted.
    pub fn versions(root: &Path) -> Vec<String> {
        let mut versions: Vec<String> = fs::read_dir(root.join(VERSIONS_DIR))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_suffix(".toml").map(str::to_string)
            })
            .collect();
        versions.sort_by_key(|v| version_key(v));
        versions
    }

    /// Loads the defaults and the named variants (all of them when `only` is empty), each
    /// for its default CTranslate2 version.
    pub fn load(root: &Path, only: &[&str]) -> Result<Catalog, InputError> {
        Self::load_for(root, only, None)
    }

    /// Like [`Catalog::load`], for CTranslate2 `version` when one is given.
    pub fn load_for(
        root: &Path,
        only: &[&str],
        version: Option<&str>,
    ) -> Result<Catalog, InputError> {
        let names = Self::names(root)?;
        for wanted in only {
            if !names.iter().any(|n| n == wanted) {
                return Err(InputError::new(format!("unknown variant `{wanted}`"))
                    .allowed(wanted, &names)
                    .note("each variant is a file variants/<name>.toml"));
            }
        }
        let mut files = Files {
            root: root.to_path_buf(),
            ..Files::default()
        };
        let defaults = parse_layer(&mut files, &Path::new("variants").join(DEFAULTS_FILE))?;
        let mut variants = BTreeMap::new();
        for name in names
            .iter()
            .filter(|n| only.is_empty() || only.contains(&n.as_str()))
        {
            let path = Path::new("variants").join(format!("{name}.toml"));
            variants.insert(name.clone(), parse_layer(&mut files, &path)?);
        }
        check_no_variant_tables(&files, &defaults, &variants)?;
        extends::refuse_outside_variants(&files, &defaults, DEFAULTS_FILE)?;
        let bases = extends::load_bases(&mut files, &names, &variants)?;
        let (chosen, versions) = load_versions(
            &mut files, root, &names, &defaults, &variants, &bases, version,
        )?;
        let gpus = gpus::Gpus::load(&mut files, &names)?;
        Ok(Catalog {
            root: root.to_path_buf(),
            files,
            defaults,
            variants,
            bases,
            chosen,
            versions,
            gpus,
        })
    }

    /// The CTranslate2 version `name` is resolved for.
    pub(crate) fn version_of(&self, name: &str) -> &str {
        &self.chosen[name]
    }

    /// Whether `name` is resolved for its default version (its file's or defaults.toml's
    /// `ctranslate2`); builds of other versions keep their work in folders of their own.
    pub(crate) fn is_default_version(&self, name: &str) -> bool {
        default_version(&self.variants[name], &self.bases, &self.defaults)
            .is_some_and(|v| v.value == self.version_of(name))
    }

    pub fn variant_names(&self) -> impl Iterator<Item = &str> {
        self.variants.keys().map(String::as_str)
    }

    /// The one-line description of a variant, as written in its file.
    pub fn description(&self, name: &str) -> &str {
        self.variants[name]
            .description
            .as_deref()
            .or(self.defaults.description.as_deref())
            .unwrap_or("")
    }

    /// The variant's layers stacked for no particular platform (used to read the
    /// platform and Python lists before a platform is chosen).
    pub fn base(&self, name: &str) -> Layer {
        self.layers(name)
            .into_iter()
            .fold(Layer::default(), Layer::stack)
    }

    /// The layers of `name` from the bottom up, before any platform table: defaults, the
    /// version file, then for the variant it extends (if any) and for itself, the variant's
    /// file and the version file's `[variant.<name>]`.
    fn layers(&self, name: &str) -> Vec<Layer> {
        let mut version = self.versions[self.version_of(name)].clone();
        let mut for_variant = |n: &str| {
            version
                .variant
                .remove(n)
                .map(|l| l.value)
                .unwrap_or_default()
        };
        let mut own = Vec::new();
        if let Some(base) = &self.variants[name].extends {
            own.push(self.bases[&base.value].clone());
            own.push(for_variant(&base.value));
        }
        own.push(self.variants[name].clone());
        own.push(for_variant(name));
        version.variant.clear();
        [self.defaults.clone(), version]
            .into_iter()
            .chain(own)
            .collect()
    }

    /// The variant's layers ([`Catalog::layers`]) stacked for `platform`, each followed by its
    /// platform table.
    pub fn stacked(&self, name: &str, platform: &str) -> Layer {
        self.layers(name)
            .into_iter()
            .fold(Layer::default(), |below, layer| {
                let table = layer.platform.get(platform).map(|l| l.value.clone());
                below.stack(layer).stack(table.unwrap_or_default())
            })
    }

    /// The Python versions a variant builds for on `platform`, or `None` when the variant
    /// is not built for that platform at all.
    pub(crate) fn pythons_for(
        &self,
        name: &str,
        platform: ct2v_support::platform::Platform,
    ) -> Result<Option<Vec<String>>, InputError> {
        let listed = self.base(name).platforms.unwrap_or_default();
        if !listed.iter().any(|p| p.value == platform.name()) {
            return Ok(None);
        }
        let python = self
            .stacked(name, platform.name())
            .python
            .unwrap_or_default();
        Ok(Some(python.into_iter().map(|p| p.value).collect()))
    }

    /// Whether `name` has a CTranslate2 source (to build or to repackage) on `platform` for
    /// its chosen version.
    pub fn has_source(&self, name: &str, platform: ct2v_support::platform::Platform) -> bool {
        self.stacked(name, platform.name()).source.is_some()
    }

    pub fn resolve(&self, name: &str, choices: &Choices) -> Result<Resolved, InputError> {
        resolve::resolve(self, name, choices)
    }
}

/// `[variant.<name>]` tables belong only in version files.
fn check_no_variant_tables(
    files: &Files,
    defaults: &Layer,
    variants: &BTreeMap<String, Layer>,
) -> Result<(), InputError> {
    for (i, layer) in std::iter::once(defaults)
        .chain(variants.values())
        .enumerate()
    {
        if let Some((_, table)) = layer.variant.iter().next() {
            return Err(files
                .error_at(
                    table,
                    "[variant.…] tables belong in a CTranslate2 version file",
                )
                .note(format!(
                    "move it to {VERSIONS_DIR}/<version>.toml{}",
                    if i == 0 {
                        ""
                    } else {
                        ", or write its keys at the top of this variant file"
                    }
                )));
        }
    }
    Ok(())
}

/// The CTranslate2 version each variant is resolved for, by variant; the version files, by
/// version.
type Versions = (BTreeMap<String, String>, BTreeMap<String, Layer>);

/// The CTranslate2 version each variant is resolved for (`version`, else its file's or
/// defaults.toml's), and the files of those versions.
fn load_versions(
    files: &mut Files,
    root: &Path,
    names: &[String],
    defaults: &Layer,
    variants: &BTreeMap<String, Layer>,
    bases: &BTreeMap<String, Layer>,
    version: Option<&str>,
) -> Result<Versions, InputError> {
    let mut chosen = BTreeMap::new();
    let mut versions = BTreeMap::new();
    for (name, layer) in variants {
        let from_file = default_version(layer, bases, defaults);
        let wanted = match (version, from_file) {
            (Some(v), _) => v.to_string(),
            (None, Some(v)) => v.value.clone(),
            (None, None) => {
                return Err(InputError::new(
                    "no CTranslate2 version: variants/defaults.toml has no `ctranslate2 = \"…\"`",
                ));
            }
        };
        if !versions.contains_key(&wanted) {
            let layer = load_version(files, root, &wanted, names).map_err(|e| {
                // A version named in a file: point at it.
                match (version, from_file) {
                    (None, Some(v)) if e.location.is_none() => e.at(files.location(v)),
                    _ => e,
                }
            })?;
            versions.insert(wanted.clone(), layer);
        }
        chosen.insert(name.clone(), wanted);
    }
    Ok((chosen, versions))
}

/// Reads `variants/ctranslate2/<version>.toml`, which may not name a version itself and may
/// only have `[variant.X]` tables for variants that exist.
fn load_version(
    files: &mut Files,
    root: &Path,
    version: &str,
    variant_names: &[String],
) -> Result<Layer, InputError> {
    if !is_version(version) {
        return Err(InputError::new(format!(
            "`{version}` is not a CTranslate2 version: expected numbers and dots, e.g. 4.8.4"
        )));
    }
    let path = Path::new(VERSIONS_DIR).join(format!("{version}.toml"));
    if !root.join(&path).is_file() {
        let known = Catalog::versions(root);
        return Err(InputError::new(format!(
            "no data for CTranslate2 {version}: {} does not exist",
            path.display()
        ))
        .allowed(version, &known)
        .note(format!(
            "add it with `cargo xtask bump --ctranslate2 {version}`"
        )));
    }
    let layer = parse_layer(files, &path)?;
    extends::refuse_outside_variants(files, &layer, "a version file")?;
    if let Some(v) = &layer.ctranslate2 {
        return Err(files
            .error_at(
                v,
                "a version file does not say `ctranslate2`: its file name is the version",
            )
            .note(format!("delete this line from {}", path.display())));
    }
    for (name, table) in &layer.variant {
        if !variant_names.contains(name) {
            return Err(files
                .error_at(
                    table,
                    format!("[variant.{name}]: there is no variant `{name}`"),
                )
                .allowed(name, variant_names));
        }
    }
    Ok(layer)
}

/// `4.8.4`: numbers separated by dots, nothing that could be a path.
pub fn is_version(text: &str) -> bool {
    ct2v_support::text_rules::ctranslate2_version(text).is_ok()
}

/// A variant's own CTranslate2 version, else that of the variant it extends, else
/// defaults.toml's.
fn default_version<'a>(
    variant: &'a Layer,
    bases: &'a BTreeMap<String, Layer>,
    defaults: &'a Layer,
) -> Option<&'a Loc<String>> {
    let base = variant.extends.as_ref().and_then(|b| bases.get(&b.value));
    variant
        .ctranslate2
        .as_ref()
        .or(base.and_then(|b| b.ctranslate2.as_ref()))
        .or(defaults.ctranslate2.as_ref())
}

/// Sorts `4.10.0` after `4.9.0`.
pub fn version_key(version: &str) -> Vec<u64> {
    version.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

fn parse_layer(files: &mut Files, path: &Path) -> Result<Layer, InputError> {
    let id = files.read(path)?;
    let (path, text) = &files.files[id];
    loc::reading_file(id, || toml::from_str::<Layer>(text)).map_err(|e| toml_error(path, text, &e))
}

/// Turns a TOML or serde error into one that names the key, the table and what is allowed.
fn toml_error(path: &Path, text: &str, err: &toml::de::Error) -> InputError {
    let location = err.span().map(|span| Location::from_span(path, text, span));
    let table = location
        .as_ref()
        .map(|l| enclosing_table(text, l.line))
        .unwrap_or_default();
    let message = err.message();
    let error = if let Some((key, allowed)) = unknown_name(message, "unknown field `") {
        InputError::new(format!("unknown key `{key}`{table} in {}", path.display()))
            .allowed(&key, &allowed)
    } else if let Some((value, allowed)) = unknown_name(message, "unknown variant `") {
        let key = location
            .as_ref()
            .map(|l| key_on_line(&l.line_text))
            .unwrap_or_default();
        InputError::new(format!(
            "`{key}`{table} cannot be `{value}` in {}",
            path.display()
        ))
        .allowed(&value, &allowed)
    } else {
        let key = location
            .as_ref()
            .map(|l| key_on_line(&l.line_text))
            .unwrap_or_default();
        let key = if key.is_empty() {
            String::new()
        } else {
            format!(" at `{key}`")
        };
        InputError::new(format!(
            "{} in {}{key}{table}",
            message.trim_end_matches('\n'),
            path.display()
        ))
    };
    match location {
        Some(l) => error.at(l),
        None => error,
    }
}

/// Parses serde's "unknown field `x`, expected one of `a`, `b`" into `x` and `[a, b]`.
fn unknown_name(message: &str, prefix: &str) -> Option<(String, Vec<String>)> {
    let rest = message.strip_prefix(prefix)?;
    let (name, tail) = rest.split_once('`')?;
    let allowed = tail
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    Some((name.to_string(), allowed))
}

/// " in [header]" for the last table header at or above `line`, or "" at the top level.
fn enclosing_table(text: &str, line: usize) -> String {
    text.lines()
        .take(line)
        .filter_map(|l| {
            let l = l.trim();
            l.starts_with('[')
                .then(|| l.split('#').next().unwrap_or(l).trim().to_string())
        })
        .last()
        .map(|h| format!(" in {h}"))
        .unwrap_or_default()
}

fn key_on_line(line: &str) -> String {
    line.split_once('=')
        .map(|(k, _)| k.trim().trim_matches('"').to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_name_parses_serde_messages() {
        let (key, allowed) = unknown_name(
            "unknown field `pyton`, expected one of `python`, `cmake`",
            "unknown field `",
        )
        .unwrap();
        assert_eq!(key, "pyton");
        assert_eq!(allowed, ["python", "cmake"]);
    }

    #[test]
    fn enclosing_table_finds_the_last_header() {
        let text = "a = 1\n[platform.windows-x86_64.cmake]\nX = 1\n";
        assert_eq!(
            enclosing_table(text, 3),
            " in [platform.windows-x86_64.cmake]"
        );
        assert_eq!(enclosing_table(text, 1), "");
    }
}
