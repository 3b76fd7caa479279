//! `release`: gather the built artifacts of the matrix into a release folder with checksums.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::flags::{IncludeArgs, ReleaseEntries, checked};
use ct2v_pipeline::commands::release::ReleaseRequest;
use ct2v_support::report::Reporter;
use ct2v_support::text_rules;
use ct2v_support::workspace::Workspace;

#[derive(Args)]
pub struct Release {
    #[command(flatten)]
    pub entries: ReleaseEntries,
    /// The release's version, PEP 440 (default: the CTranslate2 version), e.g. 4.7.1-2
    #[arg(long, value_name = "VERSION", value_parser = checked(text_rules::release_version))]
    pub version: Option<String>,
    /// The release folder (default: target/dist/<version>)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Release Linux wheels tagged `linux_x86_64` (not proven manylinux; PyPI refuses
    /// them) instead of stopping
    #[arg(long)]
    pub allow_linux_tag: bool,
    /// Where the wheels are downloaded from, for the links of the pip index (`whl/<variant>/`),
    /// ending in `/` (https; http only to loopback), e.g.
    /// https://github.com/OWNER/REPO/releases/download/v4.7.1/ (default: links relative to
    /// the release folder, for hosting the folder as it is)
    #[arg(long, value_name = "URL", value_parser = checked(text_rules::base_url))]
    pub index_base_url: Option<String>,
    /// Release each variant's platforms whose entries all have their artifacts and name the
    /// others (in the notes, the manifest and on stderr) instead of stopping; a platform of a
    /// variant with any entry missing is left out whole, its other platforms released. For
    /// CI, where one failed job must not withhold the rest
    #[arg(long)]
    pub partial: bool,
    #[command(flatten)]
    pub include: IncludeArgs,
}

impl Release {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        ReleaseRequest {
            asked: self.entries.asked(self.include.opt()),
            version: self.version,
            out: self.out,
            allow_linux_tag: self.allow_linux_tag,
            index_base_url: self.index_base_url,
            partial: self.partial,
        }
        .run(workspace, reporter)
    }
}
