//! How downloads behave: offline, retries, timeouts and mirrors.

use std::time::Duration;

use clap::Args;

use ct2v_fetch::download;
use ct2v_pipeline::plan::request::Pinner;
use ct2v_support::report::Reporter;

/// How downloads are made.
#[derive(Args)]
pub struct DownloadArgs {
    /// Use only the cache; fail with the list of missing inputs instead of downloading
    #[arg(long)]
    pub offline: bool,
    /// Rewrite a URL prefix, e.g. https://github.com/=http://127.0.0.1:8080/gh/ (repeatable;
    /// also $CT2V_MIRRORS, comma-separated); the longest matching prefix wins. A bare URL
    /// mirrors every host: https://HOST/PATH is fetched from URL/HOST/PATH
    #[arg(long = "mirror", value_name = "FROM=TO", env = "CT2V_MIRRORS", value_delimiter = ',', value_parser = parse_mirror)]
    pub mirrors: Vec<(String, String)>,
    /// Allow plain http:// to hosts other than loopback (the sha256 pin still checks files)
    #[arg(long)]
    pub allow_http: bool,
    /// Download inputs that have no sha256 pin yet and record the pin in the variant file, as
    /// `cargo xtask pin` does (without it, an unpinned input stops the build)
    #[arg(long)]
    pub allow_unpinned: bool,
    /// Files downloaded at the same time
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,
    /// Retries per file in a row after a connection error, a stall, a window of --timeout
    /// with less than 1 KiB, or an HTTP 5xx; real progress starts the count again
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub retries: u32,
    /// Seconds to wait for a connection, or for the next bytes, before an attempt fails; at
    /// least 1 KiB must arrive in every such window, across reconnects. An input with no
    /// pinned size stops at 4 GiB
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
}

impl DownloadArgs {
    /// The download options these flags ask for, with progress going to `reporter`.
    pub fn options(&self, reporter: &Reporter) -> download::Options {
        download::Options {
            mirrors: self.mirrors.clone(),
            allow_http: self.allow_http,
            offline: self.offline,
            retries: self.retries,
            jobs: usize::from(self.jobs),
            progress: true,
            timeout: Duration::from_secs(self.timeout),
            reporter: reporter.clone(),
            ..download::Options::default()
        }
    }

    /// With `--allow-unpinned`: how a build or a fetch pins its unpinned inputs first.
    pub fn pinner(&self) -> Option<Pinner> {
        let pin: Pinner = ct2v_upkeep::pin_inputs::pin_and_replan;
        self.allow_unpinned.then_some(pin)
    }
}

pub fn parse_mirror(text: &str) -> Result<(String, String), String> {
    let web = |url: &str| url.starts_with("http://") || url.starts_with("https://");
    match text.split_once('=') {
        Some((_, to)) if !to.is_empty() && !web(to) => Err(format!(
            "`{to}` is not an http:// or https:// URL: mirrors are web servers (ftp://, file:// \
             and other schemes are not downloaded from)"
        )),
        Some((from, to)) if !from.is_empty() && !to.is_empty() => {
            Ok((from.to_string(), to.to_string()))
        }
        None if text.starts_with("http://") || text.starts_with("https://") => {
            Ok((download::ANY_HOST.to_string(), text.to_string()))
        }
        _ => Err(format!(
            "`{text}` is neither FROM=TO (e.g. https://github.com/=https://mirror.example.com/github/) \
             nor a mirror URL for every host (e.g. http://127.0.0.1:8080/, which serves \
             https://github.com/a/b as http://127.0.0.1:8080/github.com/a/b)"
        )),
    }
}
