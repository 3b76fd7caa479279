//! `pin`: record the sha256 and size of inputs whose pin is missing or whose URL changed.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::flags::{DownloadArgs, checked};
use ct2v_support::report::Reporter;
use ct2v_support::text_rules;
use ct2v_support::workspace::Workspace;
use ct2v_upkeep::commands::pin::PinRequest;

#[derive(Args)]
pub struct Pin {
    /// The variant: a file variants/<name>.toml (see `cargo xtask variants`)
    #[arg(long, value_name = "NAME")]
    pub variant: String,
    /// The CTranslate2 version (default: the variant's)
    #[arg(long, value_name = "VERSION", value_parser = checked(text_rules::ctranslate2_version))]
    pub ctranslate2: Option<String>,
    #[command(flatten)]
    pub download: DownloadArgs,
}

impl Pin {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        PinRequest {
            download: self.download.options(reporter),
            variant: self.variant,
            ctranslate2: self.ctranslate2,
        }
        .run(workspace, reporter)
    }
}
