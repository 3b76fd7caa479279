//! Bad input never panics: it exits with code 2 and a one-screen error that names the file,
//! line and column, the key, and what is allowed.

use crate::common;

use common::command_args::cpu_job;
use common::{Run, Scratch, plan_args, xtask};

fn plan(scratch: &Scratch, variant: &str, platform: &str) -> Run {
    scratch.run(&plan_args(variant, platform, "3.12", &[]))
}

fn assert_input_error(run: &Run, needles: &[&str]) {
    common::assert_exit(run, 2, needles);
    assert!(run.stdout.is_empty(), "nothing on stdout: {}", run.stdout);
    assert!(
        run.stderr.lines().count() < 25,
        "one screen:\n{}",
        run.stderr
    );
}

#[test]
fn a_typo_in_a_key_names_file_line_column_and_the_near_key() {
    let scratch = Scratch::new();
    scratch.edit("variants/cpu.toml", "description =", "descriptoin =");
    let run = plan(&scratch, "cpu", "linux-x86_64");
    assert_input_error(
        &run,
        &[
            "unknown key `descriptoin`",
            "variants/cpu.toml:5:1",
            "did you mean `description`?",
            "allowed: ",
        ],
    );
}

#[test]
fn a_typo_inside_a_platform_table_names_the_table() {
    let scratch = Scratch::new();
    scratch.edit(
        "variants/defaults.toml",
        "[platform.windows-x86_64.openmp]\nruntime",
        "[platform.windows-x86_64.openmp]\nruntme",
    );
    let run = plan(&scratch, "cpu", "windows-x86_64");
    assert_input_error(
        &run,
        &[
            "unknown key `runtme`",
            "in [platform.windows-x86_64.openmp]",
            "variants/defaults.toml:",
            "did you mean `runtime`?",
        ],
    );
}

#[test]
fn a_wrong_type_names_the_key() {
    let scratch = Scratch::new();
    scratch.edit("variants/cuda.toml", "WITH_CUDA = true", "WITH_CUDA = [1]");
    let run = plan(&scratch, "cuda", "linux-x86_64");
    assert_input_error(
        &run,
        &[
            "CMake option `WITH_CUDA` must be a string, boolean or integer",
            "variants/cuda.toml:",
        ],
    );

    let scratch = Scratch::new();
    scratch.edit(
        "variants/rocm.toml",
        "platforms = [\"windows-x86_64\"]",
        "platforms = \"windows-x86_64\"",
    );
    let run = plan(&scratch, "rocm", "windows-x86_64");
    assert_input_error(
        &run,
        &["invalid type", "`platforms`", "variants/rocm.toml:"],
    );
}

#[test]
fn malformed_toml_points_at_the_line() {
    let scratch = Scratch::new();
    scratch.edit("variants/cuda.toml", "[sdk]", "[sdk");
    let run = plan(&scratch, "cuda", "linux-x86_64");
    assert_input_error(&run, &["variants/cuda.toml:", "[sdk"]);
}

#[test]
fn an_unknown_enum_value_suggests_the_near_one() {
    let scratch = Scratch::new();
    scratch.edit(
        "variants/ctranslate2/4.7.1.toml",
        "kind = \"archive\"",
        "kind = \"archiv\"",
    );
    let run = plan(&scratch, "cpu", "linux-x86_64");
    assert_input_error(
        &run,
        &[
            "`kind` in [source] cannot be `archiv`",
            "did you mean `archive`?",
            "variants/ctranslate2/4.7.1.toml:",
        ],
    );
}

#[test]
fn an_unknown_variant_suggests_the_near_one() {
    let run = xtask(&["plan", "--variant", "rocm-gfx101"]);
    assert_input_error(
        &run,
        &[
            "unknown variant `rocm-gfx101`",
            "did you mean `rocm-gfx1010`?",
            "allowed: cpu, cuda, rocm, rocm-gfx1010",
        ],
    );
}

#[test]
fn an_unknown_platform_on_the_command_line_lists_the_platforms() {
    let run = xtask(&["plan", "--variant", "cpu", "--platform", "linux"]);
    common::assert_exit(&run, 2, &["linux-x86_64", "windows-x86_64"]);
}

#[test]
fn an_unknown_platform_in_a_file_suggests_the_near_one() {
    let scratch = Scratch::new();
    scratch.edit(
        "variants/defaults.toml",
        "[platform.linux-x86_64.bundle]",
        "[platform.linux-x86-64.bundle]",
    );
    let run = plan(&scratch, "cpu", "linux-x86_64");
    assert_input_error(
        &run,
        &[
            "unknown platform `linux-x86-64`",
            "did you mean `linux-x86_64`?",
            "variants/defaults.toml:",
        ],
    );
}

#[test]
fn a_platform_the_variant_is_not_built_for_is_refused() {
    let run = xtask(&["plan", "--variant", "rocm", "--platform", "linux-x86_64"]);
    assert_input_error(
        &run,
        &[
            "variant `rocm` is not built for platform `linux-x86_64`",
            "allowed: windows-x86_64",
        ],
    );
}

#[test]
fn a_python_the_variant_is_not_built_for_is_refused() {
    let run = xtask(&plan_args("cpu", "linux-x86_64", "3.9", &[]));
    assert_input_error(&run, &["not built for Python 3.9", "allowed: 3.10, 3.11"]);
}

#[test]
fn a_patch_missing_from_its_series_names_the_series_line() {
    let scratch = Scratch::new();
    std::fs::remove_file(
        scratch
            .path()
            .join("patches/ctranslate2-4.7.1/0001-hip-use-hipblasGemmEx_v2.patch"),
    )
    .unwrap();
    std::fs::write(
        scratch
            .path()
            .join("patches/ctranslate2-4.7.1/0001-hip-use-hipblasGemmEx-v2.patch"),
        "",
    )
    .unwrap();
    let run = plan(&scratch, "rocm-gfx1010", "windows-x86_64");
    assert_input_error(
        &run,
        &[
            "patch `0001-hip-use-hipblasGemmEx_v2.patch` listed in patches/ctranslate2-4.7.1/series does not exist",
            "patches/ctranslate2-4.7.1/series:3:1",
            "did you mean `0001-hip-use-hipblasGemmEx-v2.patch`?",
        ],
    );
}

#[test]
fn a_missing_series_file_points_at_the_patches_key() {
    let scratch = Scratch::new();
    scratch.edit(
        "variants/ctranslate2/4.7.1.toml",
        "\"patches/ctranslate2-4.7.1/series\"",
        "\"patches/ctranslate2-4.7.2/series\"",
    );
    let run = plan(&scratch, "rocm-gfx1010", "linux-x86_64");
    assert_input_error(
        &run,
        &[
            "patch series `patches/ctranslate2-4.7.2/series` does not exist",
            "variants/ctranslate2/4.7.1.toml:",
        ],
    );
}

#[test]
fn a_reference_to_an_unknown_input_suggests_the_near_one() {
    let scratch = Scratch::new();
    scratch.edit(
        "variants/defaults.toml",
        "input = \"onednn\"",
        "input = \"onednnn\"",
    );
    let run = plan(&scratch, "cpu", "linux-x86_64");
    assert_input_error(
        &run,
        &["no input named `onednnn`", "did you mean `onednn`?"],
    );
}

#[test]
fn an_unknown_placeholder_lists_the_known_ones() {
    let scratch = Scratch::new();
    scratch.edit("variants/cuda.toml", "\"{cuda-arch}\"", "\"{cuda_arch}\"");
    let run = plan(&scratch, "cuda", "linux-x86_64");
    assert_input_error(
        &run,
        &[
            "unknown placeholder `{cuda_arch}`",
            "did you mean `cuda-arch`?",
            "variants/cuda.toml:",
        ],
    );
}

#[test]
fn a_malformed_sha256_is_refused() {
    let scratch = Scratch::new();
    scratch.edit(
        "variants/ctranslate2/4.7.1.toml",
        "sha256 = \"616201b9",
        "sha256 = \"616201B9",
    );
    let run = plan(&scratch, "cpu", "linux-x86_64");
    assert_input_error(
        &run,
        &[
            "a sha256 is 64 lowercase hex digits",
            "variants/ctranslate2/4.7.1.toml:",
        ],
    );
}

#[test]
fn openmp_runtime_set_twice_is_refused() {
    let scratch = Scratch::new();
    scratch.edit(
        "variants/cpu.toml",
        "description =",
        "[cmake]\nOPENMP_RUNTIME = \"INTEL\"\n\n[x]\ndescription =",
    );
    // The stray [x] table is itself an unknown key: the first error wins.
    let run = plan(&scratch, "cpu", "linux-x86_64");
    assert_input_error(&run, &["unknown key `x`"]);

    let scratch = Scratch::new();
    scratch.edit(
        "variants/cuda.toml",
        "WITH_CUDA = true",
        "WITH_CUDA = true\nOPENMP_RUNTIME = \"INTEL\"",
    );
    let run = plan(&scratch, "cuda", "linux-x86_64");
    assert_input_error(
        &run,
        &["`OPENMP_RUNTIME` is set from the [openmp] or [mkl] table"],
    );
}

#[test]
fn mkl_options_in_cmake_or_an_unknown_mkl_input_are_refused() {
    let scratch = Scratch::new();
    scratch.edit(
        "variants/cuda.toml",
        "WITH_CUDA = true",
        "WITH_CUDA = true\nWITH_MKL = true",
    );
    let run = plan(&scratch, "cuda", "linux-x86_64");
    assert_input_error(
        &run,
        &["`WITH_MKL` is set from the [openmp] or [mkl] table"],
    );

    let scratch = Scratch::new();
    scratch.edit(
        "variants/cpu.toml",
        "\nmkl.enabled = true",
        "\nmkl.enabled = true\nmkl.input = \"mkl-statc\"",
    );
    let run = plan(&scratch, "cpu", "linux-x86_64");
    assert_input_error(&run, &["mkl-statc", "mkl-static"]);
}

#[test]
fn a_missing_variants_folder_says_where_it_looked() {
    let empty = tempfile::tempdir().unwrap();
    let run = common::xtask_in(empty.path(), &["variants"]);
    assert_input_error(&run, &["cannot list", "variants"]);
}

#[test]
fn gpu_targets_that_are_not_targets_or_families_where_exact_ones_are_needed_are_refused() {
    let run = xtask(&plan_args(
        "rocm",
        "windows-x86_64",
        "3.12",
        &["--gpu-targets", "rx7900"],
    ));
    assert_input_error(&run, &["`rx7900` is not a GPU target", "gfx110X-dgpu"]);
    let run = xtask(&plan_args(
        "rocm",
        "windows-x86_64",
        "3.12",
        &["--gpu-targets", "gfx110x-dgpu"],
    ));
    assert_input_error(&run, &["did you mean gfx110X-dgpu?"]);
    // The official wheel has no code for RDNA 1: said, with the targets it has.
    let run = xtask(&plan_args(
        "rocm",
        "windows-x86_64",
        "3.12",
        &["--gpu-targets", "gfx1010"],
    ));
    assert_input_error(&run, &["no code for `gfx1010`", "gfx1030, gfx1100"]);
    // TheRock's families, as TheRock defines them: gfx110X-dgpu is not gfx1103.
    let run = xtask(&plan_args(
        "rocm",
        "windows-x86_64",
        "3.12",
        &["--gpu-targets", "gfx110X-dgpu,gfx1151", "--json"],
    ));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plan: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let bundle = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "bundle")
        .unwrap();
    assert_eq!(
        bundle["gpu_targets"],
        serde_json::json!(["gfx1100", "gfx1101", "gfx1102", "gfx1151"]),
        "{}",
        run.stdout
    );
}

#[test]
fn sdk_dir_is_refused_where_there_is_no_sdk_or_no_folder() {
    let run = xtask(&plan_args(
        "cpu",
        "linux-x86_64",
        "3.12",
        &["--sdk-dir", "/tmp"],
    ));
    assert_input_error(&run, &["variant `cpu` uses no GPU SDK", "--sdk-dir /tmp"]);
    let run = xtask(&plan_args(
        "rocm",
        "windows-x86_64",
        "3.12",
        &["--sdk-dir", "/nonexistent/ROCm/7.1"],
    ));
    assert_input_error(
        &run,
        &[
            "--sdk-dir /nonexistent/ROCm/7.1 is not a folder",
            "site-packages",
        ],
    );
}

#[test]
fn bench_refuses_an_unknown_size_and_a_wheel_not_built() {
    let scratch = Scratch::new();
    let bench = |extra: &[&str]| scratch.run(&cpu_job("bench", extra));
    assert_input_error(
        &bench(&["--size", "huge"]),
        &["unknown model size `huge`", "base"],
    );
    assert_input_error(&bench(&["--env", "CT2_USE_MKL"]), &["not KEY=VALUE"]);
    assert_input_error(
        &bench(&[]),
        &["is not there", "cargo xtask build --variant cpu"],
    );
}

/// A release labels wheels with the variant's local version, so a label pip
/// would not accept is refused where it is written.
#[test]
fn a_local_version_that_is_not_pep_440_names_file_and_line() {
    let scratch = Scratch::new();
    scratch.edit(
        "variants/cuda.toml",
        "local-version = \"cu{sdk-major}\"",
        "local-version = \"cu_{sdk-major}\"",
    );
    let run = plan(&scratch, "cuda", "linux-x86_64");
    assert_input_error(
        &run,
        &[
            "local-version `cu_{sdk-major}` is not a PEP 440 local version label",
            "variants/cuda.toml:",
        ],
    );
}

/// `extends` names a variant that exists, never itself, one level only, and only in a variant
/// file; each mistake is named at its line.
#[test]
fn an_extends_that_cannot_be_stacked_is_refused_at_its_line() {
    let scratch = Scratch::new();
    scratch.edit(
        "variants/rocm-gfx1032.toml",
        "extends = \"rocm-gfx1010\"",
        "extends = \"rocm-gfx101\"",
    );
    assert_input_error(
        &plan(&scratch, "rocm-gfx1032", "windows-x86_64"),
        &[
            "`extends`: there is no variant `rocm-gfx101`",
            "variants/rocm-gfx1032.toml:",
            "did you mean `rocm-gfx1010`?",
        ],
    );
    assert_input_error(
        &scratch.run(&["variants"]),
        &["variants/rocm-gfx1032.toml:", "no variant `rocm-gfx101`"],
    );

    let scratch = Scratch::new();
    scratch.edit(
        "variants/rocm-gfx1032.toml",
        "extends = \"rocm-gfx1010\"",
        "extends = \"rocm-gfx1032\"",
    );
    assert_input_error(
        &plan(&scratch, "rocm-gfx1032", "windows-x86_64"),
        &["variant `rocm-gfx1032` extends itself"],
    );

    let scratch = Scratch::new();
    scratch.edit(
        "variants/rocm-gfx1032.toml",
        "extends = \"rocm-gfx1010\"",
        "extends = \"rocm-gfx1031\"",
    );
    assert_input_error(
        &plan(&scratch, "rocm-gfx1032", "windows-x86_64"),
        &[
            "`rocm-gfx1032` extends `rocm-gfx1031`, which extends `rocm-gfx1010`: only one level is allowed",
            "extend `rocm-gfx1010` directly",
        ],
    );

    let scratch = Scratch::new();
    scratch.edit(
        "variants/defaults.toml",
        "\nctranslate2 = ",
        "\nextends = \"cpu\"\nctranslate2 = ",
    );
    assert_input_error(
        &plan(&scratch, "cpu", "linux-x86_64"),
        &[
            "`extends` belongs in a variant file, not in defaults.toml",
            "variants/defaults.toml:",
        ],
    );

    let scratch = Scratch::new();
    scratch.edit(
        "variants/ctranslate2/4.7.1.toml",
        "[source]",
        "extends = \"cpu\"\n\n[source]",
    );
    assert_input_error(
        &plan(&scratch, "cpu", "linux-x86_64"),
        &[
            "`extends` belongs in a variant file, not in a version file",
            "variants/ctranslate2/4.7.1.toml:",
        ],
    );
}
