//! `release`: gather the built artifacts of the matrix into a release folder with checksums.

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::ReleaseArgs;
use ct2v_support::out_folder;
use ct2v_support::platform::Platform;
use ct2v_support::workspace::Workspace;

pub fn run(workspace: &Workspace, args: ReleaseArgs) -> Result<ExitCode> {
    let ReleaseArgs {
        variants,
        platforms,
        pythons,
        from,
        ctranslate2,
        version,
        out,
        allow_linux_tag,
        index_base_url,
        partial,
        include,
    } = args;
    if let Some(out) = &out {
        ct2v_pipeline::release::check_dest(out)?;
    }
    if let Some(from) = &from {
        out_folder::check_in("--from", from)?;
    }
    let platforms: Vec<Platform> = platforms.into_iter().map(Platform::from).collect();
    let catalog =
        ct2v_pipeline::variant::Catalog::load_for(&workspace.root, &[], ctranslate2.as_deref())?;
    let built = ct2v_pipeline::release::gather::builds(
        workspace,
        &ct2v_pipeline::release::gather::Asked {
            variants,
            platforms,
            pythons,
            ctranslate2,
            from,
            include: include.opt(),
        },
    )?;
    let mut released: Vec<&str> = built.iter().map(|b| b.plan.variant.as_str()).collect();
    released.dedup();
    let coverage = ct2v_pipeline::variant::coverage::of_variants(&catalog, &released)?;
    let Some(first) = built.first() else {
        anyhow::bail!("no matrix entry matches the --variants/--platforms/--pythons given");
    };
    let version = version.unwrap_or_else(|| first.plan.ctranslate2.clone());
    let out = out.unwrap_or_else(|| workspace.root.join("target").join("dist").join(&version));
    let manifest = ct2v_pipeline::release::release(
        &built,
        &version,
        &out,
        &ct2v_pipeline::release::ReleaseOptions {
            allow_linux_tag,
            index_base_url: index_base_url.as_deref(),
            partial,
        },
        &coverage,
    )?;
    for a in &manifest.artifacts {
        println!("{}  {}", a.sha256, a.path);
    }
    eprintln!(
        "released {} artifact(s) of {} build(s) into {} (publish its files; host {}/ for pip: \
         pip install --extra-index-url <where>/{}/<variant> \"ctranslate2==<version>+<local>\"; \
         check it with `cargo xtask verify-release {} --install`)",
        manifest.artifacts.len(),
        built.len(),
        out.display(),
        ct2v_pipeline::release::pep503::DIR,
        ct2v_pipeline::release::pep503::DIR,
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}
