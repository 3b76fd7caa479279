//! `cargo xtask fetch` and `cargo xtask pin`: the inputs of a plan, downloaded into the
//! content-addressed cache and verified; pins recorded where they are missing or stale.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use super::index_page;
use crate::inputs::cache::{Cache, Pin};
use crate::inputs::download::{self, Fetched, Options, Request};
use crate::inputs::payload::{self, Claim, Kind};
use crate::inputs::pin::{self, Lock, Pinned};
use crate::plan::matrix;
use crate::plan::{self, Plan, PlannedInput};
use crate::support::diagnostic::InputError;
use crate::support::workspace::Workspace;
use crate::variant::{Catalog, Choices};

/// What a fetch did, for the summary line.
#[derive(Debug)]
pub struct Summary {
    pub fetched: Vec<Fetched>,
    pub seconds: f64,
}

impl Summary {
    pub fn line(&self) -> String {
        let downloaded: Vec<&Fetched> = self.fetched.iter().filter(|f| f.downloaded).collect();
        let bytes: u64 = downloaded.iter().map(|f| f.bytes).sum();
        format!(
            "{} input(s) verified: {} downloaded ({}), {} from the cache, in {:.2} s",
            self.fetched.len(),
            downloaded.len(),
            crate::support::units::human_size(bytes),
            self.fetched.len() - downloaded.len(),
            self.seconds
        )
    }
}

/// Downloads (or finds in the cache) every input of `plan`. Inputs without a pin are an
/// error naming them and the `pin` command.
pub fn fetch_plan(cache: &Cache, plan: &Plan, options: &Options) -> Result<Summary> {
    let started = Instant::now();
    let unpinned: Vec<&PlannedInput> = plan.inputs.iter().filter(|i| i.sha256.is_none()).collect();
    if !unpinned.is_empty() {
        let list: Vec<String> = unpinned
            .iter()
            .map(|i| format!("  {}  {}", i.name, i.url))
            .collect();
        bail!(
            "{} input(s) of variant `{}` are not pinned (no sha256):\n{}\n\
             Run `cargo xtask pin --variant {}` where these URLs can be reached; it writes the \
             sha256 and size into the variant file. Or pass --allow-unpinned to download them \
             now and record what the network serves as their pins.",
            unpinned.len(),
            plan.variant,
            list.join("\n"),
            plan.variant
        );
    }
    let requests: Vec<Request> = plan.inputs.iter().map(request).collect();
    let fetched = download::fetch_all(cache, &requests, options).map_err(|e| {
        let hints = package_hints(plan, &e.input_names());
        let published = published_pin_hints(plan, &e);
        anyhow::anyhow!("{}{published}{hints}", download::describe(&e))
    })?;
    Ok(Summary {
        fetched,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// For failed inputs that are Python packages: which package, from where, and the commands
/// that check the URL or do without it. Upstream installs the ROCm SDK wheels by direct URL
/// (OpenNMT/CTranslate2 v4.7.1, python/tools/prepare_build_environment_windows_rocm.sh); the
/// folder is not known to be a package index, so `--index-url` is not suggested.
pub fn package_hints(plan: &Plan, failed: &[&str]) -> String {
    let mut text = String::new();
    for input in plan
        .inputs
        .iter()
        .filter(|i| failed.contains(&i.name.as_str()))
    {
        let Some(package) = &input.package else {
            continue;
        };
        let folder = input.url.rsplit_once('/').map_or("", |(dir, _)| dir);
        text.push_str(&format!(
            "\n  = `{}` is the wheel {package}, from {}\
             \n  = check what is there: pip download --no-deps \"{}\" \
             (or pip download --no-deps --find-links {folder}/ \"{}\")",
            input.name,
            input.url,
            input.url,
            package.replacen(' ', "==", 1),
        ));
        if input.sdk_folder.is_some() {
            text.push_str(&format!(
                "\n  = or use the SDK already on disk (an installed SDK, or the wheels unpacked): \
                 cargo xtask build --variant {} --platform {} --sdk-dir DIR",
                plan.variant, plan.platform
            ));
        }
    }
    text
}

/// For inputs pinned to a digest someone published (`pin-source`) whose download differs:
/// says plainly that the published digest and the served file disagree.
fn published_pin_hints(plan: &Plan, error: &download::FetchError) -> String {
    let mut text = String::new();
    for (name, actual) in mismatches(error) {
        let Some(input) = plan.inputs.iter().find(|i| i.name == name) else {
            continue;
        };
        let (Some(source), Some(pinned)) = (&input.pin_source, &input.sha256) else {
            continue;
        };
        text.push_str(&format!(
            "\n  = the published digest and the file served differ: {} \
             is pinned to sha256 {pinned} ({source}), the file downloaded has sha256 {actual}. \
             Nothing was kept. Check the publisher's current digest before pinning the new file \
             with `cargo xtask pin`",
            input.url
        ));
    }
    text
}

/// `(input, sha256 downloaded)` for each input whose download did not match its pin.
fn mismatches(error: &download::FetchError) -> Vec<(&str, &str)> {
    use crate::inputs::cache::CacheError;
    match error {
        download::FetchError::Cache { name, source } => match source.as_ref() {
            CacheError::Mismatch { actual_sha256, .. } => {
                vec![(name.as_str(), actual_sha256.as_str())]
            }
            _ => Vec::new(),
        },
        download::FetchError::Several { errors } => errors.iter().flat_map(mismatches).collect(),
        _ => Vec::new(),
    }
}

/// Downloads (or finds in the cache) one input of `variant` outside a plan's fetch step (the
/// SDK installer); an unpinned input is an error naming it and the `pin` command.
pub fn fetch_one(
    cache: &Cache,
    variant: &str,
    input: &PlannedInput,
    options: &Options,
) -> Result<PathBuf> {
    if input.sha256.is_none() {
        bail!(
            "input `{}` of variant `{variant}` is not pinned (no sha256): {}\n\
             Run `cargo xtask pin --variant {variant}` where this URL can be reached (the pin \
             workflow does it on a hosted runner) and commit the pin.",
            input.name,
            input.url
        );
    }
    let fetched = download::fetch_all(cache, &[request(input)], options)
        .map_err(|e| anyhow::anyhow!("{}", download::describe(&e)))?;
    let first = fetched.into_iter().next().expect("one request, one result");
    eprintln!(
        "{} {} ({})",
        first.name,
        if first.downloaded {
            "downloaded"
        } else {
            "from the cache"
        },
        crate::support::units::human_size(first.bytes)
    );
    Ok(first.path)
}

fn request(input: &PlannedInput) -> Request {
    Request {
        name: input.name.clone(),
        pin: Pin {
            url: input.url.clone(),
            sha256: input
                .sha256
                .clone()
                .expect("unpinned inputs are refused before"),
            size: input.size,
            file_name: input.file_name.clone(),
        },
    }
}

/// One input `pin` looked at, and what it did.
#[derive(Debug)]
pub struct PinOutcome {
    pub name: String,
    pub url: String,
    pub result: Result<PinAction>,
}

#[derive(Debug, PartialEq, Eq)]
pub enum PinAction {
    /// The lock confirms the variant files' pin for this URL: nothing downloaded.
    Confirmed,
    /// Downloaded; the pin in the variant files was already right (now also in the lock).
    Verified,
    /// Downloaded and written into these files.
    Written(Vec<PathBuf>),
}

/// Pins the unpinned inputs of one plan (`build --allow-unpinned`): the outcomes, and the
/// plan of those inputs (for hints about the ones that failed).
pub fn pin_unpinned(
    workspace: &Workspace,
    plan: Plan,
    options: &Options,
) -> Result<(Vec<PinOutcome>, Plan)> {
    let catalog = Catalog::load_for(
        &workspace.root,
        &[plan.variant.as_str()],
        Some(&plan.ctranslate2),
    )?;
    let cache = Cache::new(&workspace.cache_dir);
    let unpinned = Plan {
        inputs: plan
            .inputs
            .iter()
            .filter(|i| i.sha256.is_none())
            .cloned()
            .collect(),
        // The build never runs the SDK's installer: not pinned on its behalf.
        sdk_installer: None,
        ..plan
    };
    let outcomes = pin_inputs(&catalog, &cache, std::slice::from_ref(&unpinned), options)?;
    Ok((outcomes, unpinned))
}

/// Pins every input of `plans` (a variant over all its platforms and Pythons) whose pin is
/// missing or was not taken from its current URL. Each input is handled on its own: one
/// unreachable URL does not stop the others, and nothing is written for it.
pub fn pin_inputs(
    catalog: &Catalog,
    cache: &Cache,
    plans: &[Plan],
    options: &Options,
) -> Result<Vec<PinOutcome>> {
    let root = &catalog.root;
    let mut lock = Lock::load(root)?;
    let files = variant_files(root)?;
    let mut seen = std::collections::BTreeSet::new();
    let mut outcomes = Vec::new();
    for (plan, input) in plans.iter().flat_map(|p| {
        p.inputs
            .iter()
            .chain(&p.sdk_installer)
            .map(move |input| (p, input))
    }) {
        if !seen.insert(input.url.clone()) {
            continue;
        }
        let result = if lock.confirms(&input.url, input.sha256.as_deref()) {
            Ok(PinAction::Confirmed)
        } else {
            pin_one(cache, plan, input, options, &files).map(|(pinned, written)| {
                lock.pins.insert(input.url.clone(), pinned);
                if written.is_empty() {
                    PinAction::Verified
                } else {
                    PinAction::Written(written)
                }
            })
        };
        outcomes.push(PinOutcome {
            name: input.name.clone(),
            url: input.url.clone(),
            result,
        });
    }
    lock.save(root)?;
    Ok(outcomes)
}

fn pin_one(
    cache: &Cache,
    plan: &Plan,
    input: &PlannedInput,
    options: &Options,
    files: &[PathBuf],
) -> Result<(Pinned, Vec<PathBuf>)> {
    if let Some(wheel) = &input.index
        && input.url == crate::variant::wheel_name::project_page(&wheel.index, &wheel.project)
    {
        return pin_from_index(cache, plan, input, wheel, options, files);
    }
    let (sha256, size) = download::download_unpinned(cache, &input.name, &input.url, options)?;
    check_payload(cache, plan, input, &input.url, &sha256)?;
    if let Some(old) = &input.sha256
        && old != &sha256
    {
        eprintln!(
            "note: {} changed: the variant files pin sha256 {old}, {} now serves {sha256}",
            input.name, input.url
        );
    }
    let pinned = Pinned { sha256, size };
    let written = pin::record(files, &input.url, &pinned)?;
    Ok((pinned, written))
}

/// An input given as `index` + `package`: the wheel found on the index's project page is
/// downloaded, checked against the digest the page gives, and its url and pin written into
/// the table that names the same index and package.
fn pin_from_index(
    cache: &Cache,
    plan: &Plan,
    input: &PlannedInput,
    wheel: &crate::variant::IndexedWheel,
    options: &Options,
    files: &[PathBuf],
) -> Result<(Pinned, Vec<PathBuf>)> {
    let html = index_page_text(&input.name, &input.url, options)?;
    let link = index_page::find_wheel(
        &input.url,
        &html,
        &wheel.project,
        &wheel.version,
        wheel.platform,
    )
    .map_err(|why| InputError::new(format!("input `{}`: {why}", input.name)))?;
    let (sha256, size) = download::download_unpinned(cache, &input.name, &link.url, options)?;
    if let Some(listed) = &link.sha256
        && listed != &sha256
    {
        bail!(
            "input `{}`: {} lists sha256 {listed} for {}, but the download has sha256 {sha256}; \
             nothing was written",
            input.name,
            input.url,
            link.file
        );
    }
    check_payload(cache, plan, input, &link.url, &sha256)?;
    let pinned = Pinned { sha256, size };
    let package = format!("{} {}", wheel.project, wheel.version);
    let found = pin::IndexWheel {
        input: &input.name,
        index: &wheel.index,
        package: &package,
        platform: wheel.platform.name(),
    };
    let written = pin::record_from_index(files, &found, &link.url, &pinned)?;
    eprintln!("{}: {} on {}", input.name, link.file, wheel.index);
    Ok((pinned, written))
}

/// The project page of an index, as text: at most [`index_page::MAX_PAGE_BYTES`], and UTF-8
/// (a link read from other bytes would be another URL).
fn index_page_text(input: &str, url: &str, options: &Options) -> Result<String> {
    let accept = "application/vnd.pypi.simple.v1+html, text/html;q=0.1";
    let body = download::get_small(url, options, index_page::MAX_PAGE_BYTES, accept)
        .with_context(|| format!("input `{input}`: reading the index page {url}"))?
        .with_context(|| {
            format!("input `{input}`: {url} answered 404: the index has no page for this project")
        })?;
    String::from_utf8(body).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        anyhow::anyhow!(
            "input `{input}`: {url} is not UTF-8 text (byte {:#04x} at offset {at}): a PEP 503 \
             page is UTF-8 HTML, and a link read from other bytes would be another URL",
            e.as_bytes()[at]
        )
    })
}

/// Refuses the download of `input` from `url` when it is not the kind of file it claims to
/// be (a page a server sent instead, a truncated file), or an archive without the paths its
/// unpack step expects. The bytes stay in the cache: nothing pins their sha256, so no fetch
/// can take them.
fn check_payload(
    cache: &Cache,
    plan: &Plan,
    input: &PlannedInput,
    url: &str,
    sha256: &str,
) -> Result<()> {
    let installer = plan.sdk_installer.as_ref();
    let kind = if installer.is_some_and(|i| i.url == input.url) {
        Kind::Exe
    } else {
        Kind::from_name(crate::variant::download_url::file_name(url))
    };
    let (subdir, expect) = plan
        .steps
        .iter()
        .find_map(|step| match &step.action {
            plan::Action::Unpack {
                input: name,
                subdir,
                expect,
                ..
            } if *name == input.name => Some((subdir.as_deref(), expect.as_slice())),
            _ => None,
        })
        .unwrap_or((None, &[]));
    let claim = Claim {
        kind,
        subdir,
        expect,
    };
    payload::check(&cache.path_for(sha256), url, &claim)
        .with_context(|| format!("input `{}`", input.name))
}

/// The plans of every matrix entry of `variant`: each platform it builds for, each Python.
pub fn plans_of_variant(
    workspace: &Workspace,
    catalog: &Catalog,
    variant: &str,
) -> Result<Vec<Plan>, InputError> {
    let mut plans = Vec::new();
    for entry in matrix::entries(catalog)? {
        if entry.variant != variant {
            continue;
        }
        let choices = Choices {
            platform: Some(entry.platform),
            python: Some(entry.python),
            ..Choices::default()
        };
        plans.push(plan::plan(workspace, &catalog.resolve(variant, &choices)?));
    }
    Ok(plans)
}

/// The files a pin may be written into: variants/*.toml and the CTranslate2 version files.
fn variant_files(root: &std::path::Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for dir in [
        root.join("variants"),
        root.join(crate::variant::VERSIONS_DIR),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        files.extend(
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "toml")),
        );
    }
    files.sort();
    Ok(files)
}
