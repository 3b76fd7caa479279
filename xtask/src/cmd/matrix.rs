//! `matrix`: print the GitHub Actions matrix (variant × platform × Python).

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::flags::{IncludeArgs, checked};
use ct2v_pipeline::commands::matrix::MatrixRequest;
use ct2v_support::report::Reporter;
use ct2v_support::text_rules;
use ct2v_support::workspace::Workspace;

#[derive(Args)]
pub struct Matrix {
    /// Print one line of JSON (for `fromJSON`) instead of a table
    #[arg(long)]
    pub json: bool,
    /// The native jobs instead: one per variant and platform that compiles, building the
    /// C++ library once for all its Pythons (`build --until install-ctranslate2`)
    #[arg(long)]
    pub native: bool,
    /// CTranslate2 versions to span, e.g. 4.7.1,4.8.4 (default: each variant's)
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = checked(text_rules::ctranslate2_version))]
    pub ctranslate2: Vec<String>,
    /// Only the entries of one lane: `gpu` (the native job compiles GPU kernels, hours
    /// for CUDA) or `main` (the rest); build.yml runs each lane's jobs apart
    #[arg(long, value_name = "LANE", value_parser = ["main", "gpu"])]
    pub lane: Option<String>,
    /// Also check that this release tag (`v4.7.1`, `v4.7.1-2`) is a release version of a
    /// CTranslate2 version the matrix builds: exit 2 naming both otherwise
    #[arg(long, value_name = "TAG")]
    pub release_tag: Option<String>,
    #[command(flatten)]
    pub include: IncludeArgs,
}

impl Matrix {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        MatrixRequest {
            json: self.json,
            native: self.native,
            ctranslate2: self.ctranslate2,
            lane: self.lane,
            opt: self.include.opt(),
            release_tag: self.release_tag,
        }
        .run(workspace, reporter)
    }
}
