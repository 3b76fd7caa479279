//! Where a CMake install puts its libraries. CMake's GNUInstallDirs picks `lib64` on 64-bit
//! Linux that is not Debian (`Modules/GNUInstallDirs.cmake`: the `/etc/debian_version` test,
//! then `CMAKE_SIZEOF_VOID_P`), so the manylinux_2_28 image (AlmaLinux 8) installs
//! CTranslate2 into `lib64` (its CMakeLists.txt: `LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}`)
//! while the bundle searches `prefix/…/lib`. Every configure the plan emits fixes `lib`; the
//! test below shows it the way it failed, with Debian's marker hidden.

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{self, plan_args, skip, xtask};

const LIBDIR_FLAG: &str = "-DCMAKE_INSTALL_LIBDIR=lib";

fn plan_json(variant: &str, platform: &str, version: &str) -> Value {
    let run = xtask(&plan_args(
        variant,
        platform,
        "3.12",
        &["--json", "--ctranslate2", version],
    ));
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).expect("plan --json is JSON")
}

fn configure_steps(plan: &Value) -> Vec<&Value> {
    plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["id"].as_str().unwrap().starts_with("configure-"))
        .collect()
}

#[test]
fn every_source_build_configures_lib_as_the_library_folder() {
    let mut checked = 0;
    for version in ["4.7.1", "4.8.4"] {
        for variant in ["cpu", "cuda", "rocm-gfx1010"] {
            for platform in ["linux-x86_64", "windows-x86_64"] {
                let plan = plan_json(variant, platform, version);
                let steps = configure_steps(&plan);
                assert!(
                    !steps.is_empty(),
                    "{variant} {platform} {version}: no configure step"
                );
                for step in steps {
                    let args = common::args_of(step);
                    assert!(
                        args.iter().any(|a| a == LIBDIR_FLAG),
                        "{variant} {platform} {version} step {}: no {LIBDIR_FLAG} in {args:?}",
                        step["id"]
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 24, "only {checked} configure steps checked");
}

/// A library project laid out as CTranslate2's install rules are.
fn write_project(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    fs::write(
        dir.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.16)\n\
         project(layout C)\n\
         include(GNUInstallDirs)\n\
         add_library(layout SHARED layout.c)\n\
         install(TARGETS layout LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})\n",
    )
    .unwrap();
    fs::write(dir.join("layout.c"), "int layout(void) { return 1; }\n").unwrap();
}

/// The plan's own configure command for CTranslate2, pointed at `project`: its flags as
/// planned, only the source, build and install folders and the program paths replaced by
/// this test's (the tools venv is not built here).
fn planned_configure(project: &Path, build: &Path, prefix: &Path, ninja: &str) -> Vec<String> {
    let plan = plan_json("cpu", "linux-x86_64", "4.7.1");
    let step = common::plan_step(&plan, "configure-ctranslate2");
    let args = common::args_of(step);
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        match arg.as_str() {
            "-S" | "-B" => {
                out.push(arg.clone());
                let dir = if arg == "-S" { project } else { build };
                out.push(dir.display().to_string());
                i += 2;
                continue;
            }
            _ if arg.starts_with("-DCMAKE_MAKE_PROGRAM=") => {
                out.push(format!("-DCMAKE_MAKE_PROGRAM={ninja}"))
            }
            _ if arg.starts_with("-DCMAKE_INSTALL_PREFIX=") => {
                out.push(format!("-DCMAKE_INSTALL_PREFIX={}", prefix.display()))
            }
            // C++ options of the real project; the small one is C only.
            _ if arg.starts_with("-D") && !arg.starts_with("-DCMAKE_") => {}
            _ => out.push(arg.clone()),
        }
        i += 1;
    }
    assert!(out.iter().any(|a| a == LIBDIR_FLAG), "{out:?}");
    out
}

fn shell_quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// Runs `cmake ARGS`, `cmake --build BUILD` and `cmake --install BUILD` in a private mount namespace where `/etc` is a
/// copy without `debian_version`, as on AlmaLinux.
fn configure_and_install_without_debian_marker(configure: &[String], build: &Path) {
    let etc = build.with_extension("etc");
    let script = format!(
        "set -e\n\
         cp -a /etc {etc}\n\
         rm -f {etc}/debian_version\n\
         mount --bind {etc} /etc\n\
         test ! -e /etc/debian_version\n\
         cmake {args} >{log} 2>&1 || {{ cat {log}; exit 1; }}\n\
         cmake --build {build} >>{log} 2>&1 || {{ cat {log}; exit 1; }}\n\
         cmake --install {build} >>{log} 2>&1 || {{ cat {log}; exit 1; }}\n",
        etc = shell_quote(&etc.display().to_string()),
        args = configure
            .iter()
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" "),
        log = shell_quote(&build.with_extension("log").display().to_string()),
        build = shell_quote(&build.display().to_string()),
    );
    let output = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "configure + install in the namespace failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn library_folders(prefix: &Path) -> Vec<String> {
    let mut found: Vec<String> = fs::read_dir(prefix)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            fs::read_dir(e.path())
                .is_ok_and(|mut d| d.any(|f| f.is_ok_and(|f| f.file_name() == "liblayout.so")))
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    found
}

#[test]
fn without_debians_marker_the_planned_configure_installs_into_lib() {
    if skip::not_root("a mount namespace hides /etc/debian_version")
        || skip::missing("cmake", "apt-get install cmake")
        || skip::missing("ninja", "apt-get install ninja-build")
    {
        return;
    }
    let ninja = ct2v_support::host::which("ninja").expect("ninja on PATH");
    let work = tempfile::tempdir().unwrap();
    let project = work.path().join("project");
    write_project(&project);

    // The control: CMake's default, hidden marker → lib64 (so the namespace works).
    let build = work.path().join("build-default");
    let prefix = work.path().join("prefix-default");
    let default = vec![
        "-S".to_string(),
        project.display().to_string(),
        "-B".into(),
        build.display().to_string(),
        "-G".into(),
        "Ninja".into(),
        format!("-DCMAKE_MAKE_PROGRAM={}", ninja.display()),
        format!("-DCMAKE_INSTALL_PREFIX={}", prefix.display()),
    ];
    configure_and_install_without_debian_marker(&default, &build);
    assert_eq!(
        library_folders(&prefix),
        ["lib64"],
        "CMake's non-Debian default"
    );

    // The plan's flags → lib.
    let build = work.path().join("build-planned");
    let prefix = work.path().join("prefix-planned");
    let planned = planned_configure(&project, &build, &prefix, &ninja.display().to_string());
    configure_and_install_without_debian_marker(&planned, &build);
    assert_eq!(library_folders(&prefix), ["lib"], "the plan's configure");
}
