//! Pins recorded where they are missing or stale: each input of a variant's plans downloaded,
//! checked against what it claims to be, and its sha256 and size written into the variant
//! files (`pin`) and the lock. What they do is said through the download options' reporter.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::pin::{self, Lock, Pinned};
use ct2v_fetch::cache::Cache;
use ct2v_fetch::download::{self, Options};
use ct2v_fetch::index_page;
use ct2v_fetch::payload::{self, Claim, Kind};
use ct2v_pipeline::execute::input_download;
use ct2v_pipeline::plan::matrix;
use ct2v_pipeline::plan::request::PlanRequest;
use ct2v_pipeline::plan::{self, Plan, PlannedInput};
use ct2v_pipeline::variant::{Catalog, Choices};
use ct2v_support::diagnostic::InputError;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;

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

/// `--allow-unpinned` before a build or a fetch: downloads the plan's unpinned inputs,
/// records their sha256 and size in the variant files (as `pin` does) and plans again
/// (a [`ct2v_pipeline::plan::request::Pinner`]).
pub fn pin_and_replan(
    workspace: &Workspace,
    request: &PlanRequest,
    plan: Plan,
    options: &Options,
) -> Result<Plan> {
    let unpinned = plan.inputs.iter().filter(|i| i.sha256.is_none()).count();
    options.reporter.warn(format_args!(
        "--allow-unpinned: pinning {unpinned} input(s) of `{}` from what the network serves now; review and commit the variant file",
        plan.variant
    ));
    let (outcomes, unpinned_plan) = pin_unpinned(workspace, plan, options)?;
    let mut errors = Vec::new();
    for outcome in outcomes {
        match outcome.result {
            Ok(_) => options
                .reporter
                .say(format_args!("pinned {} ({})", outcome.name, outcome.url)),
            Err(e) => {
                let hints = input_download::package_hints(&unpinned_plan, &[outcome.name.as_str()]);
                errors.push(format!("{}{hints}", download::describe(e.as_ref())));
            }
        }
    }
    if !errors.is_empty() {
        bail!("{}\nnothing was built", errors.join("\n"));
    }
    request.plan(workspace, &options.reporter)
}

/// Pins the unpinned inputs of one plan (`build --allow-unpinned`): the outcomes, and the
/// plan of those inputs (for hints about the ones that failed).
pub(crate) fn pin_unpinned(
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
        && input.url == ct2v_fetch::wheel_name::project_page(&wheel.index, &wheel.project)
    {
        return pin_from_index(cache, plan, input, wheel, options, files);
    }
    let (sha256, size) = download::download_unpinned(cache, &input.name, &input.url, options)?;
    check_payload(cache, plan, input, &input.url, &sha256)?;
    if let Some(old) = &input.sha256
        && old != &sha256
    {
        options.reporter.say(format_args!(
            "note: {} changed: the variant files pin sha256 {old}, {} now serves {sha256}",
            input.name, input.url
        ));
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
    wheel: &ct2v_pipeline::variant::IndexedWheel,
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
    options.reporter.say(format_args!(
        "{}: {} on {}",
        input.name, link.file, wheel.index
    ));
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
        Kind::from_name(ct2v_pipeline::variant::download_url::file_name(url))
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
pub(crate) fn plans_of_variant(
    workspace: &Workspace,
    catalog: &Catalog,
    variant: &str,
    reporter: &Reporter,
) -> Result<Vec<Plan>, InputError> {
    let mut plans = Vec::new();
    for entry in matrix::entries(catalog, reporter)? {
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
        root.join(ct2v_pipeline::variant::VERSIONS_DIR),
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
