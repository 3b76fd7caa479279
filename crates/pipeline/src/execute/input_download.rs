//! The inputs of a plan, downloaded into the content-addressed cache and verified (`pin`
//! records the pins: ct2v-upkeep).

use std::time::Instant;

use anyhow::{Result, bail};

use crate::plan::{Plan, PlannedInput};
use ct2v_fetch::cache::{Cache, Pin};
use ct2v_fetch::download::{self, Fetched, Options, Request};

/// What a fetch did, for the summary line.
#[derive(Debug)]
pub(crate) struct Summary {
    pub fetched: Vec<Fetched>,
    pub seconds: f64,
}

impl Summary {
    pub(crate) fn line(&self) -> String {
        let downloaded: Vec<&Fetched> = self.fetched.iter().filter(|f| f.downloaded).collect();
        let bytes: u64 = downloaded.iter().map(|f| f.bytes).sum();
        format!(
            "{} input(s) verified: {} downloaded ({}), {} from the cache, in {:.2} s",
            self.fetched.len(),
            downloaded.len(),
            ct2v_support::units::human_size(bytes),
            self.fetched.len() - downloaded.len(),
            self.seconds
        )
    }
}

/// Downloads (or finds in the cache) every input of `plan`. Inputs without a pin are an
/// error naming them and the `pin` command.
pub(crate) fn fetch_plan(cache: &Cache, plan: &Plan, options: &Options) -> Result<Summary> {
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
    use ct2v_fetch::cache::CacheError;
    match error {
        download::FetchError::Input {
            name,
            failure: download::InputFailure::Cache { source },
        } => match source.as_ref() {
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
pub(crate) fn fetch_one(
    cache: &Cache,
    variant: &str,
    input: &PlannedInput,
    options: &Options,
) -> Result<Fetched> {
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
    Ok(fetched.into_iter().next().expect("one request, one result"))
}

/// `<name> downloaded (<size>)`, or `from the cache`: what [`fetch_one`] did, in one line.
pub(crate) fn fetched_line(fetched: &Fetched) -> String {
    format!(
        "{} {} ({})",
        fetched.name,
        if fetched.downloaded {
            "downloaded"
        } else {
            "from the cache"
        },
        ct2v_support::units::human_size(fetched.bytes)
    )
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
