//! Hostile values in variant files and flags: each is refused at
//! `plan` time with exit 2 and the file:line:col (or the flag) that holds it, before
//! anything is downloaded, built or written.

use crate::common;

use common::{Run, Scratch, plan_args};

fn assert_refused(run: &Run, needles: &[&str]) {
    common::assert_exit(run, 2, needles);
}

/// `text` appended to variants/`file`, then `plan --variant variant` (Linux, 3.12) + `extra`.
fn plan_with(file: &str, text: &str, variant: &str, extra: &[&str]) -> Run {
    let scratch = Scratch::new();
    let path = scratch.path().join("variants").join(file);
    let mut body = std::fs::read_to_string(&path).unwrap();
    body.push_str(text);
    std::fs::write(&path, body).unwrap();
    scratch.run(&plan_args(variant, "linux-x86_64", "3.12", extra))
}

const INPUT: &str = "url = \"https://example.com/x.tar.gz\"\n";

#[test]
fn a_bundle_dest_outside_the_wheel_is_refused_at_plan() {
    for dest in ["../../../../tmp/x", "/tmp/x", "C:/x", "ctranslate2/NUL"] {
        let text = format!(
            "[bundle]\nsearch = [{{ from = \"prefix\", dir = \"lib\", dest = \"{dest}\" }}]\n"
        );
        let run = plan_with("cpu.toml", &text, "cpu", &[]);
        assert_refused(&run, &["variants/cpu.toml:", "dest"]);
    }
    let text = "[bundle]\ndata = [{ from = \"prefix\", glob = \"lib/*\", dest = \"../../x\" }]\n";
    assert_refused(
        &plan_with("cpu.toml", text, "cpu", &[]),
        &["variants/cpu.toml:", "dest"],
    );
    let text = "[bundle]\nsearch = [{ from = \"prefix\", dir = \"../../..\", dest = \"x\" }]\n";
    assert_refused(
        &plan_with("cpu.toml", text, "cpu", &[]),
        &["variants/cpu.toml:", "dir"],
    );
}

#[test]
fn path_like_values_in_variant_files_are_refused() {
    let cases: Vec<(String, &str)> = vec![
        ("ctranslate2 = \"../../../X\"\n".into(), "ctranslate2"),
        ("patches = \"../../../../etc/passwd\"\n".into(), "patches"),
        (format!("[inputs.\"../../x\"]\n{INPUT}"), "../../x"),
        (format!("[inputs.\".\"]\n{INPUT}"), "input name"),
        (format!("[inputs.\"\"]\n{INPUT}"), "input name"),
        (
            format!("[inputs.y]\n{INPUT}subdir = \"../../etc\"\n"),
            "subdir",
        ),
        (
            format!("[inputs.y]\n{INPUT}sdk-folder = \"/abs\"\n"),
            "sdk-folder",
        ),
    ];
    for (text, needle) in cases {
        let run = plan_with("cpu.toml", &text, "cpu", &[]);
        assert_refused(&run, &["variants/cpu.toml:", needle]);
        assert!(!run.stderr.contains("root:"), "no file content shown");
    }
}

#[test]
fn a_series_line_outside_the_patch_folder_is_refused_without_reading_it() {
    let scratch = Scratch::new();
    let series = scratch.path().join("patches/ctranslate2-4.7.1/series");
    let mut text = std::fs::read_to_string(&series).unwrap();
    text.push_str("/etc/passwd\n");
    std::fs::write(&series, text).unwrap();
    let run = scratch.run(&plan_args("rocm-gfx1010", "linux-x86_64", "3.12", &[]));
    assert_refused(&run, &["patches/ctranslate2-4.7.1/series:5", "absolute"]);
}

#[test]
fn bad_values_are_refused_at_plan() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("[cmake]\nX = \"{onednn.prefix\"\n", "cpu", &["unclosed"]),
        (
            "[cmake]\nX = \"{sdk.root}\"\n",
            "cpu",
            &["sdk.root", "[sdk]"],
        ),
        (
            "[platform.linux-x86_64.platform.windows-x86_64]\ndescription = \"x\"\n",
            "cpu",
            &["platform"],
        ),
        ("[env]\nA = \"a\\u0000b\"\n", "cpu", &["NUL"]),
        ("[env]\n\"A=B\" = \"x\"\n", "cpu", &["A=B"]),
        ("[env]\n\"\" = \"x\"\n", "cpu", &["empty"]),
        (
            "[inputs.y]\nurl = \"https://example.com/x.tar.gz\"\nsize = 0\n",
            "cpu",
            &["size"],
        ),
        ("[bundle]\noutputs = []\n", "cpu", &["outputs"]),
        (
            "gpu-targets = [\"; rm -rf /\", \"\"]\n",
            "cpu",
            &["not a GPU target"],
        ),
        (
            "[verify.compute-types]\ncpu = [\"int9\"]\n",
            "cpu",
            &["int9"],
        ),
        (
            "[verify.compute-types]\ntpu = [\"int8\"]\n",
            "cpu",
            &["tpu"],
        ),
        (
            "[inputs.y]\nurl = \"https://example.com/\"\n",
            "cpu",
            &["file name"],
        ),
        (
            "[inputs.y]\nurl = \"https://example.com/a.rar\"\n",
            "cpu",
            &["a.rar"],
        ),
    ];
    for (text, variant, needles) in cases {
        let run = plan_with(&format!("{variant}.toml"), text, variant, &[]);
        let mut all = vec!["variants/"];
        all.extend_from_slice(needles);
        assert_refused(&run, &all);
    }
}

#[test]
fn bad_flags_are_refused_at_plan() {
    let scratch = Scratch::new();
    let run = scratch.run(&plan_args(
        "cuda",
        "linux-x86_64",
        "3.12",
        &["--cuda-arch", "garbage"],
    ));
    assert_refused(&run, &["--cuda-arch", "garbage"]);
    let run = scratch.run(&plan_args(
        "rocm-gfx1010",
        "linux-x86_64",
        "3.12",
        &["--gpu-targets", ""],
    ));
    assert_refused(&run, &["--gpu-targets"]);
    for good in ["9.0", "Common", "8.6+PTX;9.0", "7.5 8.0"] {
        let run = scratch.run(&plan_args(
            "cuda",
            "linux-x86_64",
            "3.12",
            &["--cuda-arch", good],
        ));
        assert_eq!(run.code, 0, "{good}: {}", run.stderr);
    }
}

#[test]
fn an_empty_variant_file_is_refused() {
    let scratch = Scratch::new();
    std::fs::write(scratch.path().join("variants/empty.toml"), "").unwrap();
    let run = scratch.run(&plan_args("empty", "linux-x86_64", "3.12", &[]));
    assert_refused(&run, &["variants/empty.toml", "description"]);
}

#[test]
fn a_variants_bundle_root_outside_the_wheel_is_refused_at_plan() {
    for root in ["/usr/lib/*.so", "../*.so", "ctranslate2/../../*.so"] {
        let text = format!("\n[platform.linux-x86_64.bundle]\nroots = [\"{root}\"]\n");
        let run = plan_with("cpu.toml", &text, "cpu", &[]);
        assert_refused(
            &run,
            &["variants/cpu.toml", "[bundle] roots", "is not allowed"],
        );
    }
}

/// A file in variants/ becomes a variant only when its name can be one everywhere: `...toml`
/// would be a variant `..`, `con.toml` a Windows device, `cpu.toml.toml` a second `cpu`.
#[test]
fn a_variant_file_whose_name_cannot_be_a_variant_is_refused_by_name() {
    for file in [
        "...toml",
        "con.toml",
        "cpu.toml.toml",
        "CPU.toml",
        "lpt1.toml",
        "-x.toml",
    ] {
        let scratch = Scratch::new();
        let variants = scratch.path().join("variants");
        std::fs::copy(variants.join("cpu.toml"), variants.join(file)).unwrap();
        for args in [
            plan_args("cpu", "linux-x86_64", "3.12", &[]),
            vec!["variants"],
        ] {
            let run = scratch.run(&args);
            assert_refused(&run, &[file, "cannot be a variant"]);
        }
    }
}

/// A variant file saved as cp1252 gets the line and column of its first non-UTF-8 byte; a
/// 50,000-deep array (100 KB on one line) gets an error of one screen, not the whole line.
#[test]
fn a_non_utf8_or_very_deep_variant_file_gets_a_position_and_a_short_error() {
    let scratch = Scratch::new();
    let path = scratch.path().join("variants/cpu.toml");
    let mut body = std::fs::read(&path).unwrap();
    let line = body.iter().filter(|b| **b == b'\n').count() + 1;
    body.extend_from_slice(b"# caf\xe9 au lait\n");
    std::fs::write(&path, &body).unwrap();
    let run = scratch.run(&plan_args("cpu", "linux-x86_64", "3.12", &[]));
    assert_refused(
        &run,
        &["not UTF-8", "0xe9", &format!("variants/cpu.toml:{line}:6")],
    );

    let scratch = Scratch::new();
    let path = scratch.path().join("variants/cpu.toml");
    let mut body = std::fs::read_to_string(&path).unwrap();
    body.push_str(&format!(
        "deep = {}{}\n",
        "[".repeat(50_000),
        "]".repeat(50_000)
    ));
    std::fs::write(&path, body).unwrap();
    let run = scratch.run(&plan_args("cpu", "linux-x86_64", "3.12", &[]));
    assert_refused(&run, &["variants/cpu.toml:"]);
    assert!(run.stderr.len() < 2_000, "{} bytes", run.stderr.len());
}
