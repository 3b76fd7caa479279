//! Recording pins: the sha256 and size of a downloaded input are written back into every
//! variant file table whose `url` is that input's URL (comments, order and formatting kept,
//! as `cargo update` does), and into `variants/pins.lock`, which remembers which URL each
//! pin was taken from so that a changed URL is noticed and pinned again.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use ct2v_pipeline::variant::DEVICE_INPUT_PREFIX;
use ct2v_support::diagnostic::InputError;
use ct2v_support::fsx::write_atomically;
use toml_edit::{DocumentMut, Item, Table, TableLike, value};

/// `variants/pins.lock`, relative to the repository root.
pub(crate) const LOCK_FILE: &str = "variants/pins.lock";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    pub sha256: String,
    pub size: u64,
}

/// URL → the pin taken from it.
#[derive(Debug, Default)]
pub(crate) struct Lock {
    pub pins: BTreeMap<String, Pinned>,
}

impl Lock {
    pub(crate) fn load(root: &Path) -> Result<Lock> {
        let path = root.join(LOCK_FILE);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Lock::default()),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        // A lock that cannot be read is refused, never silently replaced by a fresh one.
        let text = String::from_utf8(bytes).map_err(|_| {
            InputError::new(format!(
                "{} is not UTF-8 text; it was left as it is",
                path.display()
            ))
            .note("restore it from git, or delete it and run `cargo xtask pin` again")
        })?;
        let doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
            InputError::new(format!(
                "{} is not valid TOML: {}",
                path.display(),
                e.message()
            ))
            .note("restore it from git, or delete it and run `cargo xtask pin` again")
        })?;
        let mut pins = BTreeMap::new();
        if let Some(table) = doc.get("pin").and_then(Item::as_table_like) {
            for (url, entry) in table.iter() {
                let sha256 = entry.get("sha256").and_then(Item::as_str);
                let size = entry.get("size").and_then(Item::as_integer);
                if let (Some(sha256), Some(size)) = (sha256, size) {
                    pins.insert(
                        url.to_string(),
                        Pinned {
                            sha256: sha256.to_string(),
                            size: size as u64,
                        },
                    );
                }
            }
        }
        Ok(Lock { pins })
    }

    /// Whether the pin a variant file has for `url` was taken from that very URL.
    pub(crate) fn confirms(&self, url: &str, sha256: Option<&str>) -> bool {
        match (self.pins.get(url), sha256) {
            (Some(locked), Some(sha)) => locked.sha256 == sha,
            _ => false,
        }
    }

    pub(crate) fn save(&self, root: &Path) -> Result<()> {
        let mut doc = DocumentMut::new();
        doc.decor_mut().set_prefix(
            "# Written by `cargo xtask pin`: the URL each pin in variants/*.toml was taken from.\n\
             # A URL that changed without a new pin is downloaded and pinned again.\n",
        );
        let mut table = Table::new();
        for (url, pin) in &self.pins {
            let mut entry = toml_edit::InlineTable::new();
            entry.insert("sha256", pin.sha256.as_str().into());
            entry.insert("size", (pin.size as i64).into());
            table.insert(url, value(entry));
        }
        doc.insert("pin", Item::Table(table));
        write_atomically(&root.join(LOCK_FILE), &doc.to_string())
    }
}

/// Sets `sha256` and `size` in every table of `files` whose `url` is `url`. Returns the
/// files that changed. Each file is rewritten whole, through a temp file and a rename.
pub fn record(files: &[PathBuf], url: &str, pin: &Pinned) -> Result<Vec<PathBuf>> {
    edit_each(files, |doc| set_in(doc.as_table_mut(), url, pin))
}

/// Applies `edit` to each file's TOML and rewrites the files it changed (whole, through a temp
/// file and a rename, comments and order kept). Returns those files.
fn edit_each(files: &[PathBuf], edit: impl Fn(&mut DocumentMut) -> bool) -> Result<Vec<PathBuf>> {
    let mut changed = Vec::new();
    for path in files {
        let text =
            fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let mut doc: DocumentMut = text
            .parse()
            .with_context(|| format!("{} is not valid TOML", path.display()))?;
        if edit(&mut doc) {
            write_atomically(path, &doc.to_string())?;
            changed.push(path.clone());
        }
    }
    Ok(changed)
}

/// Sets `url`, `sha256` and `size` in every table of `files` that takes `package` from the
/// PEP 503 `index`, has no `url` yet and applies to `platform` (a table below
/// `[platform.<other>]` is another platform's: its wheel is another file). A device wheel
/// (`[device-wheels]`, input `device-<target>`) has no table of its own until then: one is
/// written, `[platform.<platform>.inputs.<input>]`, into the file that declares the
/// `[device-wheels]` it comes from. Returns the files that changed.
pub(crate) fn record_from_index(
    files: &[PathBuf],
    wheel: &IndexWheel,
    url: &str,
    pin: &Pinned,
) -> Result<Vec<PathBuf>> {
    let changed = edit_each(files, |doc| {
        let found = set_url_in(doc.as_table_mut(), wheel, url, true);
        if found {
            set_in(doc.as_table_mut(), url, pin);
        }
        found
    })?;
    if !changed.is_empty() || !wheel.input.starts_with(DEVICE_INPUT_PREFIX) {
        return Ok(changed);
    }
    edit_each(files, |doc| add_device_table(doc, wheel, url, pin))
}

/// What `pin` found on an index for one input.
pub(crate) struct IndexWheel<'a> {
    pub input: &'a str,
    pub index: &'a str,
    /// `NAME VERSION`, as the variant files write `package`.
    pub package: &'a str,
    pub platform: &'a str,
}

fn set_url_in(table: &mut dyn TableLike, wheel: &IndexWheel, url: &str, here: bool) -> bool {
    let mut changed = false;
    if here
        && table.get("index").and_then(Item::as_str) == Some(wheel.index)
        && table.get("package").and_then(Item::as_str) == Some(wheel.package)
        && table.get("url").is_none()
    {
        table.insert("url", Item::Value(url.into()));
        changed = true;
    }
    let is_platforms = table.get("platform").is_some();
    for (key, item) in table.iter_mut() {
        if let Item::Table(t) = item {
            // Below `platform`, only this platform's table.
            if is_platforms && key == "platform" {
                for (name, sub) in t.iter_mut() {
                    if let Item::Table(sub) = sub {
                        changed |= set_url_in(sub, wheel, url, here && name == wheel.platform);
                    }
                }
                continue;
            }
            changed |= set_url_in(t, wheel, url, here);
        }
    }
    changed
}

/// The device wheel's own table, beside the `[device-wheels]` (a variant file's, or a version
/// file's `[variant.<name>.device-wheels]`) that has this index and a `package` that becomes
/// this wheel's with its target.
fn add_device_table(doc: &mut DocumentMut, wheel: &IndexWheel, url: &str, pin: &Pinned) -> bool {
    let Some(target) = wheel.input.strip_prefix(DEVICE_INPUT_PREFIX) else {
        return false;
    };
    let declares = |layer: &dyn TableLike| {
        layer
            .get("device-wheels")
            .and_then(Item::as_table_like)
            .is_some_and(|t| {
                t.get("index").and_then(Item::as_str) == Some(wheel.index)
                    && t.get("package")
                        .and_then(Item::as_str)
                        .is_some_and(|p| p.replace("{target}", target) == wheel.package)
            })
    };
    if declares(doc.as_table()) {
        return insert_device_table(doc.as_table_mut(), wheel, url, pin);
    }
    let Some(variants) = doc.get_mut("variant").and_then(Item::as_table_mut) else {
        return false;
    };
    for (_, layer) in variants.iter_mut() {
        if let Some(layer) = layer.as_table_mut()
            && declares(layer)
        {
            return insert_device_table(layer, wheel, url, pin);
        }
    }
    false
}

/// `[platform.<platform>.inputs.<input>]` below `layer`.
fn insert_device_table(layer: &mut Table, wheel: &IndexWheel, url: &str, pin: &Pinned) -> bool {
    let mut entry = Table::new();
    entry.insert("index", value(wheel.index));
    entry.insert("package", value(wheel.package));
    entry.insert("url", value(url));
    entry.insert("sha256", value(pin.sha256.as_str()));
    entry.insert("size", value(pin.size as i64));
    let mut at = layer;
    for key in ["platform", wheel.platform, "inputs"] {
        let next = at.entry(key).or_insert(Item::Table(implicit_table()));
        let Some(next) = next.as_table_mut() else {
            return false;
        };
        at = next;
    }
    at.insert(wheel.input, Item::Table(entry));
    true
}

fn implicit_table() -> Table {
    let mut table = Table::new();
    table.set_implicit(true);
    table
}

fn set_in(table: &mut dyn TableLike, url: &str, pin: &Pinned) -> bool {
    let mut changed = false;
    if table.get("url").and_then(Item::as_str) == Some(url) {
        let size = pin.size as i64;
        let same = table.get("sha256").and_then(Item::as_str) == Some(pin.sha256.as_str())
            && table.get("size").and_then(Item::as_integer) == Some(size);
        if !same {
            set_value(table, "sha256", pin.sha256.as_str().into());
            set_value(table, "size", size.into());
            changed = true;
        }
    }
    for (_, item) in table.iter_mut() {
        changed |= match item {
            Item::Table(t) => set_in(t, url, pin),
            Item::Value(toml_edit::Value::InlineTable(t)) => set_in(t, url, pin),
            Item::Value(toml_edit::Value::Array(array)) => array
                .iter_mut()
                .filter_map(|v| v.as_inline_table_mut())
                .fold(false, |acc, t| set_in(t, url, pin) | acc),
            Item::ArrayOfTables(tables) => tables
                .iter_mut()
                .fold(false, |acc, t| set_in(t, url, pin) | acc),
            _ => false,
        };
    }
    changed
}

/// Replaces a value, keeping the key's place and the value's surrounding whitespace.
fn set_value(table: &mut dyn TableLike, key: &str, mut new: toml_edit::Value) {
    match table.get_mut(key) {
        Some(Item::Value(old)) => {
            *new.decor_mut() = old.decor().clone();
            *old = new;
        }
        _ => {
            table.insert(key, Item::Value(new));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://example.org/a.whl";

    fn pin() -> Pinned {
        Pinned {
            sha256: "ab".repeat(32),
            size: 42,
        }
    }

    #[test]
    fn record_keeps_comments_and_order_and_fills_every_table_with_the_url() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("v.toml");
        let text = "# top comment\n[inputs.a]\nurl = \"https://example.org/a.whl\" # the wheel\nsubdir = \"x\"\n\n[platform.w.inputs.b]\nurl = \"https://example.org/a.whl\"\nsha256 = \"old\"\nsize = 1\n[source]\nkind = \"wheel\"\nwheels = [{ url = \"https://example.org/a.whl\" }]\n";
        fs::write(&file, text).unwrap();
        let changed = record(std::slice::from_ref(&file), URL, &pin()).unwrap();
        assert_eq!(changed, std::slice::from_ref(&file));
        let out = fs::read_to_string(&file).unwrap();
        assert!(out.starts_with("# top comment\n[inputs.a]\nurl = \"https://example.org/a.whl\" # the wheel\nsubdir = \"x\"\n"), "{out}");
        assert_eq!(out.matches(&"ab".repeat(32)).count(), 3, "{out}");
        assert!(out.contains("size = 42"));
        assert!(!out.contains("old"));
        // Recording the same pin again changes nothing.
        assert!(record(&[file], URL, &pin()).unwrap().is_empty());
    }

    /// A wheel found for one platform goes only into that platform's tables; a device wheel
    /// gets a table of its own beside the `[device-wheels]` it comes from.
    #[test]
    fn an_index_wheel_is_recorded_for_its_platform_and_a_device_wheel_gets_its_table() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("v.toml");
        let text = "[device-wheels]\nindex = \"https://i/\"\npackage = \"rocm-sdk-device-{target} 10.0.0\"\n\n[platform.windows-x86_64.inputs.core]\nindex = \"https://i/\"\npackage = \"rocm-sdk-core 10.0.0\"\n\n[platform.linux-x86_64.inputs.core]\nindex = \"https://i/\"\npackage = \"rocm-sdk-core 10.0.0\"\n";
        fs::write(&file, text).unwrap();
        let wheel = IndexWheel {
            input: "core",
            index: "https://i/",
            package: "rocm-sdk-core 10.0.0",
            platform: "linux-x86_64",
        };
        let url = "https://i/core-10.0.0-py3-none-manylinux_2_28_x86_64.whl";
        let changed = record_from_index(std::slice::from_ref(&file), &wheel, url, &pin()).unwrap();
        assert_eq!(changed.len(), 1);
        let doc: DocumentMut = fs::read_to_string(&file).unwrap().parse().unwrap();
        let core = |p: &str| {
            doc["platform"][p]["inputs"]["core"]
                .get("url")
                .and_then(Item::as_str)
                .map(str::to_string)
        };
        assert_eq!(core("linux-x86_64").as_deref(), Some(url));
        assert_eq!(
            core("windows-x86_64"),
            None,
            "the Windows table waits for its own wheel"
        );

        let device = IndexWheel {
            input: "device-gfx1100",
            index: "https://i/",
            package: "rocm-sdk-device-gfx1100 10.0.0",
            platform: "windows-x86_64",
        };
        let url = "https://i/rocm_sdk_device_gfx1100-10.0.0-py3-none-win_amd64.whl";
        record_from_index(std::slice::from_ref(&file), &device, url, &pin()).unwrap();
        let doc: DocumentMut = fs::read_to_string(&file).unwrap().parse().unwrap();
        let table = &doc["platform"]["windows-x86_64"]["inputs"]["device-gfx1100"];
        assert_eq!(table["url"].as_str(), Some(url));
        assert_eq!(
            table["package"].as_str(),
            Some("rocm-sdk-device-gfx1100 10.0.0")
        );
        assert_eq!(table["size"].as_integer(), Some(42));
        // A version file's [variant.<name>.device-wheels] gets it beside it.
        let version_file = dir.path().join("4.8.4.toml");
        fs::write(&version_file, "[variant.rocm.device-wheels]\nindex = \"https://i/\"\npackage = \"rocm-sdk-device-{target} 10.0.0\"\n").unwrap();
        record_from_index(std::slice::from_ref(&version_file), &device, url, &pin()).unwrap();
        let doc: DocumentMut = fs::read_to_string(&version_file).unwrap().parse().unwrap();
        assert_eq!(
            doc["variant"]["rocm"]["platform"]["windows-x86_64"]["inputs"]["device-gfx1100"]["url"]
                .as_str(),
            Some(url)
        );
        // A package no [device-wheels] makes is not given a table.
        let stray = IndexWheel {
            input: "device-gfx9999",
            package: "other 1.0",
            ..device
        };
        assert!(
            record_from_index(&[file], &stray, url, &pin())
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn the_lock_round_trips_and_notices_a_changed_url() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("variants")).unwrap();
        let mut lock = Lock::default();
        lock.pins.insert(URL.to_string(), pin());
        lock.save(dir.path()).unwrap();
        let back = Lock::load(dir.path()).unwrap();
        assert_eq!(back.pins, lock.pins);
        assert!(back.confirms(URL, Some(&"ab".repeat(32))));
        assert!(!back.confirms("https://example.org/b.whl", Some(&"ab".repeat(32))));
        assert!(!back.confirms(URL, None));
    }
}
