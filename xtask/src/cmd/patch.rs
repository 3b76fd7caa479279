//! `patch`: check (or apply) a variant's patch series against CTranslate2's source.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::flags::{DownloadArgs, PlatformArg, checked};
use ct2v_pipeline::commands::patch::PatchRequest;
use ct2v_pipeline::plan::request::PlanRequest;
use ct2v_support::report::Reporter;
use ct2v_support::text_rules;
use ct2v_support::workspace::Workspace;

#[derive(Args)]
pub struct Patch {
    /// The variant whose series is used
    #[arg(long, value_name = "NAME")]
    pub variant: String,
    /// The CTranslate2 version (default: the variant's)
    #[arg(long, value_name = "VERSION", value_parser = checked(text_rules::ctranslate2_version))]
    pub ctranslate2: Option<String>,
    /// The platform whose plan is used (default: this host)
    #[arg(long, value_name = "PLATFORM")]
    pub platform: Option<PlatformArg>,
    /// Only check: work on a copy, change nothing
    #[arg(long)]
    pub check: bool,
    /// A CTranslate2 source tree (default with --check: the pinned source)
    #[arg(long, value_name = "DIR", required_unless_present = "check")]
    pub source: Option<PathBuf>,
    #[command(flatten)]
    pub download: DownloadArgs,
}

impl Patch {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        PatchRequest {
            plan: PlanRequest {
                platform: self.platform.map(Into::into),
                ctranslate2: self.ctranslate2,
                ..PlanRequest::only(self.variant)
            },
            check: self.check,
            source: self.source,
            download: self.download.options(reporter),
        }
        .run(workspace, reporter)
    }
}
