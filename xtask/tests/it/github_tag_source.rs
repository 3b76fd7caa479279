//! `[source] kind = "github-tag"` end to end, against a loopback "GitHub" made from the ct2rs
//! 0.10.3 crate's CTranslate2 4.8.4 tree: a tag archive with empty submodule folders and the
//! real `.gitmodules`, one commit archive per submodule (ruy's two nested ones too), and the
//! REST answers, all served with GitHub's URL layout under a bare `--mirror`.
//!
//! What the fixture copies from GitHub, and where it is said:
//!
//! | behaviour | source |
//! |---|---|
//! | `archive/refs/tags/TAG.tar.gz` unpacks to `REPO-<TAG without v>/`, `archive/<sha>.tar.gz` to `REPO-<sha>/` | docs.github.com "Downloading source code archives"; ray-project/ray#9175 |
//! | the tar's first entry is a pax global header `comment=<commit>`; submodules are empty folders | git Documentation/git-archive.txt; unjs/giget#106, ocaml/opam-repository#26958; dear-github/dear-github#214 |
//! | `GET /repos/O/R/commits/TAG` → `{"sha"}`; `contents/PATH?ref=R` → `{"type":"submodule","sha"}` or base64 `content`; 404 when absent | docs.github.com REST "commits", "contents" |
//! | CTranslate2's `.gitmodules` (v4.8.1); ruy's two nested submodules; cutlass's empty `.gitmodules` | OpenNMT/CTranslate2 `v4.8.1:.gitmodules`; google/ruy `363f2522:.gitmodules`; NVIDIA/cutlass `bbe579a9` |

use ct2v_support::report::Reporter;
use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::common::github_api::file_answer;
use crate::common::{self, HttpDir, Run, Scratch};

const CRATE_SHA256: &str = "edf9167bb229e98360fe2ae650bf44936bf043f11cf6e620994bd0ef51c6cf8c";
const CRATE_TOP: &str = "ct2rs-0.10.3/CTranslate2/";
/// A made-up commit for tag v4.8.5.
const TAG_COMMIT: &str = "4850000000000000000000000000000000000485";

/// OpenNMT/CTranslate2 `v4.8.1:.gitmodules`, as it is.
const GITMODULES: &str = "[submodule \"third_party/cxxopts\"]
\tpath = third_party/cxxopts
\turl = https://github.com/jarro2783/cxxopts.git
[submodule \"third_party/thrust\"]
\tpath = third_party/thrust
\turl = https://github.com/NVIDIA/cccl.git
[submodule \"third_party/googletest\"]
\tpath = third_party/googletest
\turl = https://github.com/google/googletest.git
[submodule \"third_party/cpu_features\"]
\tpath = third_party/cpu_features
\turl = https://github.com/google/cpu_features.git
[submodule \"third_party/spdlog\"]
\tpath = third_party/spdlog
\turl = https://github.com/gabime/spdlog.git
[submodule \"third_party/ruy\"]
\tpath = third_party/ruy
\turl = https://github.com/google/ruy.git
[submodule \"third_party/cutlass\"]
\tpath = third_party/cutlass
\turl = https://github.com/NVIDIA/cutlass.git
";

/// google/ruy's `.gitmodules` (at the commit CTranslate2 pins).
const RUY_GITMODULES: &str = "[submodule \"third_party/googletest\"]
\tpath = third_party/googletest
\turl = https://github.com/google/googletest
[submodule \"third_party/cpuinfo\"]
\tpath = third_party/cpuinfo
\turl = https://github.com/pytorch/cpuinfo
";

/// (path in the tree, repository, parent repository, path in the parent).
const SUBMODULES: [(&str, &str, &str, &str); 9] = [
    (
        "third_party/cxxopts",
        "jarro2783/cxxopts",
        "OpenNMT/CTranslate2",
        "third_party/cxxopts",
    ),
    (
        "third_party/thrust",
        "NVIDIA/cccl",
        "OpenNMT/CTranslate2",
        "third_party/thrust",
    ),
    (
        "third_party/googletest",
        "google/googletest",
        "OpenNMT/CTranslate2",
        "third_party/googletest",
    ),
    (
        "third_party/cpu_features",
        "google/cpu_features",
        "OpenNMT/CTranslate2",
        "third_party/cpu_features",
    ),
    (
        "third_party/spdlog",
        "gabime/spdlog",
        "OpenNMT/CTranslate2",
        "third_party/spdlog",
    ),
    (
        "third_party/ruy",
        "google/ruy",
        "OpenNMT/CTranslate2",
        "third_party/ruy",
    ),
    (
        "third_party/cutlass",
        "NVIDIA/cutlass",
        "OpenNMT/CTranslate2",
        "third_party/cutlass",
    ),
    (
        "third_party/ruy/third_party/googletest",
        "google/googletest",
        "google/ruy",
        "third_party/googletest",
    ),
    (
        "third_party/ruy/third_party/cpuinfo",
        "pytorch/cpuinfo",
        "google/ruy",
        "third_party/cpuinfo",
    ),
];

/// A made-up gitlink for submodule `i`.
fn commit(i: usize) -> String {
    format!("{:02x}", 0xa0 + i).repeat(20)
}

/// One file of the crate's tree: its bytes and mode.
type Files = BTreeMap<String, (Vec<u8>, u32)>;

/// The crate's CTranslate2 tree, from the crate in the checkout's download cache.
fn crate_tree() -> Option<Files> {
    let cache_dir = common::repo_root().join("target/xtask/cache");
    let path = cache_dir.join(format!("sha256/{CRATE_SHA256}"));
    if !path.is_file() {
        // Fetched into the checkout's cache as a build would (crates.io is reachable in CI).
        if !common::network::available(&["static.crates.io:443"]) {
            return None;
        }
        let cache = ct2v_fetch::cache::Cache::new(&cache_dir);
        let request = ct2v_fetch::download::Request {
            name: "ctranslate2-source".to_string(),
            pin: ct2v_fetch::cache::Pin {
                url: "https://static.crates.io/crates/ct2rs/ct2rs-0.10.3.crate".to_string(),
                sha256: CRATE_SHA256.to_string(),
                size: Some(6567680),
                file_name: "ct2rs-0.10.3.crate".to_string(),
            },
        };
        ct2v_fetch::download::fetch_all(&cache, &[request], &Default::default())
            .expect("download the ct2rs 0.10.3 crate");
    }
    let file = fs::File::open(&path).unwrap();
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut files = Files::new();
    for entry in tar.entries().unwrap() {
        let mut entry = entry.unwrap();
        if entry.header().entry_type() != tar::EntryType::Regular {
            continue;
        }
        let name = entry.path().unwrap().to_string_lossy().into_owned();
        let Some(rel) = name.strip_prefix(CRATE_TOP) else {
            continue;
        };
        let mode = entry.header().mode().unwrap();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).unwrap();
        files.insert(rel.to_string(), (bytes, mode));
    }
    Some(files)
}

/// A `git archive`-like `.tar.gz`: the pax global header, the top folder, empty folders, files.
fn write_archive(path: &Path, top: &str, pax: &str, files: &Files, empty: &[&str]) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let gz =
        flate2::write::GzEncoder::new(fs::File::create(path).unwrap(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    let record = format!("comment={pax}\n");
    let record = format!("{} {record}", record.len() + 3);
    let mut header = tar::Header::new_ustar();
    header.set_entry_type(tar::EntryType::XGlobalHeader);
    header.set_size(record.len() as u64);
    header.set_mode(0o666);
    tar.append_data(&mut header, "pax_global_header", record.as_bytes())
        .unwrap();
    let mut dir = |name: String| {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Directory);
        header.set_size(0);
        header.set_mode(0o775);
        tar.append_data(&mut header, name, std::io::empty())
            .unwrap();
    };
    dir(format!("{top}/"));
    for folder in empty {
        dir(format!("{top}/{folder}/"));
    }
    for (rel, (bytes, mode)) in files {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(bytes.len() as u64);
        header.set_mode(*mode);
        tar.append_data(&mut header, format!("{top}/{rel}"), bytes.as_slice())
            .unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap();
}

fn write(path: PathBuf, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// The served folder: `github.com/…` archives and `api.github.com/…` answers.
fn serve_github(dir: &Path, tree: &Files) {
    let owner_of = |rel: &str| {
        SUBMODULES
            .iter()
            .enumerate()
            .filter(|(_, (path, ..))| rel.starts_with(&format!("{path}/")))
            .max_by_key(|(_, (path, ..))| path.len())
            .map(|(i, _)| i)
    };
    let mut parts: Vec<Files> = vec![Files::new(); SUBMODULES.len() + 1];
    for (rel, file) in tree {
        match owner_of(rel) {
            Some(i) => {
                parts[i + 1].insert(rel[SUBMODULES[i].0.len() + 1..].to_string(), file.clone())
            }
            None => parts[0].insert(rel.clone(), file.clone()),
        };
    }
    parts[0].insert(
        ".gitmodules".into(),
        (GITMODULES.as_bytes().to_vec(), 0o644),
    );
    let tops: Vec<&str> = SUBMODULES[..7].iter().map(|s| s.0).collect();
    write_archive(
        &dir.join("github.com/OpenNMT/CTranslate2/archive/refs/tags/v4.8.5.tar.gz"),
        "CTranslate2-4.8.5",
        TAG_COMMIT,
        &parts[0],
        &tops,
    );
    let api = dir.join("api.github.com/repos");
    write(
        api.join("OpenNMT/CTranslate2/commits/v4.8.5"),
        &format!("{{\"sha\": \"{TAG_COMMIT}\", \"commit\": {{}}}}"),
    );
    write(
        api.join("OpenNMT/CTranslate2/contents/.gitmodules"),
        &file_answer(GITMODULES),
    );
    write(
        api.join("google/ruy/contents/.gitmodules"),
        &file_answer(RUY_GITMODULES),
    );
    write(
        api.join("NVIDIA/cutlass/contents/.gitmodules"),
        &file_answer(""),
    );
    for (i, (path, repo, parent, in_parent)) in SUBMODULES.iter().enumerate() {
        let sha = commit(i);
        let mut files = parts[i + 1].clone();
        let mut empty = Vec::new();
        match *repo {
            "google/ruy" => {
                files.insert(
                    ".gitmodules".into(),
                    (RUY_GITMODULES.as_bytes().to_vec(), 0o644),
                );
                empty = vec!["third_party/googletest", "third_party/cpuinfo"];
            }
            "NVIDIA/cutlass" => {
                files.insert(".gitmodules".into(), (Vec::new(), 0o644));
            }
            _ => {}
        }
        let name = repo.split('/').nth(1).unwrap();
        write_archive(
            &dir.join(format!("github.com/{repo}/archive/{sha}.tar.gz")),
            &format!("{name}-{sha}"),
            &sha,
            &files,
            &empty,
        );
        write(
            api.join(format!("{parent}/contents/{in_parent}")),
            &format!(
                "{{\"type\": \"submodule\", \"sha\": \"{sha}\", \"path\": \"{in_parent}\", \
                 \"submodule_git_url\": \"https://github.com/{repo}.git\"}}"
            ),
        );
        let _ = path;
    }
}

/// `bump --ctranslate2 4.8.5 --from-tag v4.8.5 --no-pin` through the GitHub at `mirror`,
/// plus `extra`.
pub(crate) fn bump_485_from_tag(scratch: &Scratch, mirror: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "bump",
        "--ctranslate2",
        "4.8.5",
        "--from-tag",
        "v4.8.5",
        "--no-pin",
        "--mirror",
        mirror,
    ];
    args.extend_from_slice(extra);
    scratch.run(&args)
}

/// `bump` wrote neither a version file nor a patches folder for CTranslate2 `version`.
pub(crate) fn assert_nothing_bumped(scratch: &Scratch, version: &str) {
    let written = |rel: String| scratch.path().join(rel).exists();
    assert!(!written(format!("variants/ctranslate2/{version}.toml")));
    assert!(!written(format!("patches/ctranslate2-{version}")));
}

/// `plan` of cpu with CTranslate2 4.8.5 for linux-x86_64, plus `extra`.
fn plan_485(scratch: &Scratch, extra: &[&str]) -> Run {
    let mut args = vec![
        "plan",
        "--variant",
        "cpu",
        "--ctranslate2",
        "4.8.5",
        "--platform",
        "linux-x86_64",
    ];
    args.extend_from_slice(extra);
    scratch.run(&args)
}

/// A scratch checkout whose CTranslate2 4.8.5 version file is `text`.
fn with_485_file(text: &str) -> Scratch {
    let scratch = Scratch::new();
    fs::write(scratch.path().join("variants/ctranslate2/4.8.5.toml"), text).unwrap();
    scratch
}

fn plan_json(scratch: &Scratch) -> serde_json::Value {
    let run = plan_485(scratch, &["--python", "3.12", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

/// The `assemble-source` step of `plan` as the library takes it, into `dest`.
fn assembly(plan: &serde_json::Value, dest: &Path) -> ct2v_fetch::assemble::Assembly {
    use ct2v_fetch::assemble::{Assembly, Part, Submodule};
    let step = common::plan_step(plan, "assemble-source");
    let part = |a: &serde_json::Value| {
        let name = a["input"].as_str().unwrap();
        let input = plan["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["name"] == name)
            .unwrap();
        Part {
            input: name.to_string(),
            file_name: input["file_name"].as_str().unwrap().to_string(),
            url: input["url"].as_str().unwrap().to_string(),
            archive: PathBuf::from(a["archive"].as_str().unwrap()),
            subdir: a["subdir"].as_str().unwrap().to_string(),
            commit: a["commit"].as_str().unwrap().to_string(),
        }
    };
    Assembly {
        tag: part(&step["tag"]),
        submodules: step["submodules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| Submodule {
                path: s["path"].as_str().unwrap().to_string(),
                part: part(s),
            })
            .collect(),
        dest: dest.to_path_buf(),
    }
}

#[test]
fn a_tag_with_its_submodules_is_bumped_pinned_assembled_and_patched() {
    let Some(tree) = crate_tree() else {
        return;
    };
    let served = tempfile::tempdir().unwrap();
    serve_github(served.path(), &tree);
    let server = HttpDir::serve(served.path());
    let mirror = server.url("");
    let scratch = Scratch::new();

    // (e) A tag GitHub does not know: exit 2, nothing written.
    let run = scratch.run(&[
        "bump",
        "--ctranslate2",
        "4.8.6",
        "--from-tag",
        "v4.8.6",
        "--no-pin",
        "--mirror",
        &mirror,
    ]);
    common::assert_exit(
        &run,
        2,
        &["v4.8.6", "OpenNMT/CTranslate2", "does not exist"],
    );
    assert_nothing_bumped(&scratch, "4.8.6");
    let both = scratch.run(&[
        "bump",
        "--ctranslate2",
        "4.8.6",
        "--from-tag",
        "v4.8.6",
        "--source",
        "https://static.crates.io/crates/ct2rs/ct2rs-0.10.3.crate",
    ]);
    assert_eq!(both.code, 2, "{}", both.stderr);

    // (a) bump writes the tag and every submodule; pin fills their sha256.
    let run = bump_485_from_tag(&scratch, &mirror, &[]);
    assert!(
        run.code == 0 || run.code == 1,
        "{}{}",
        run.stdout,
        run.stderr
    );
    // Unpinned (--no-pin), the facts cannot be read yet: said, with the step that reads them.
    for needle in [
        "== upstream facts of CTranslate2 4.8.5",
        "could not read the facts",
        "cargo xtask upstream --check --ctranslate2 4.8.5",
    ] {
        assert!(
            run.stdout.contains(needle),
            "`{needle}` in:\n{}",
            run.stdout
        );
    }
    let file = fs::read_to_string(scratch.path().join("variants/ctranslate2/4.8.5.toml")).unwrap();
    assert!(file.contains("kind = \"github-tag\""), "{file}");
    assert!(
        file.contains(&format!("commit = \"{TAG_COMMIT}\"")),
        "{file}"
    );
    assert!(file.contains("subdir = \"CTranslate2-4.8.5\""), "{file}");
    assert!(
        file.contains("[source.submodules.\"third_party/ruy/third_party/cpuinfo\"]"),
        "{file}"
    );
    let names = |plan: &serde_json::Value| -> Vec<String> {
        common::field_of_each(&plan["inputs"], "name")
            .into_iter()
            .map(String::from)
            .collect()
    };
    let plan = plan_json(&scratch);
    let mut expected = vec!["ctranslate2-source".to_string()];
    expected.extend(
        SUBMODULES
            .iter()
            .map(|s| format!("submodule-{}", s.0.replace('/', "-"))),
    );
    let listed = names(&plan);
    for name in &expected {
        assert!(listed.contains(name), "{name} not in {listed:?}");
    }
    let step = common::plan_step(&plan, "assemble-source");
    assert_eq!(step["kind"], "assemble-source");
    assert_eq!(step["submodules"].as_array().unwrap().len(), 9);
    assert!(
        !listed.iter().any(|n| n.starts_with("submodule-")
            && plan["steps"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["id"] == format!("unpack-{n}"))),
        "submodules are not unpacked on their own"
    );

    let run = scratch.run(&[
        "pin",
        "--variant",
        "cpu",
        "--ctranslate2",
        "4.8.5",
        "--mirror",
        &mirror,
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let plan = plan_json(&scratch);
    for input in plan["inputs"].as_array().unwrap() {
        if expected.iter().any(|n| input["name"] == n.as_str()) {
            assert!(input["sha256"].is_string(), "not pinned: {input}");
        }
    }

    // Pinned, the facts are read from the assembled tag + submodule tree, each with its file
    // and line, and the data bump copied from 4.8.4 agrees with them (the tree is 4.8.4's).
    let run = scratch.run(&[
        "upstream",
        "--check",
        "--ctranslate2",
        "4.8.5",
        "--mirror",
        &mirror,
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    for needle in [
        "(python/install_requirements.txt:",
        "(python/tools/prepare_build_environment_windows_rocm.sh:",
        "(python/ctranslate2/__init__.py:",
        "upstream --check: no drift",
    ] {
        assert!(
            run.stdout.contains(needle) || run.stderr.contains(needle),
            "`{needle}` in:\n{}{}",
            run.stdout,
            run.stderr
        );
    }

    // (b) The assembled tree has every file of the crate's tree, byte for byte.
    let out = tempfile::tempdir().unwrap();
    let dest = out.path().join("ctranslate2");
    ct2v_fetch::assemble::assemble(&assembly(&plan, &dest), &Reporter::captured()).unwrap();
    for (rel, (bytes, _)) in &tree {
        let got = fs::read(dest.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert!(got == *bytes, "{rel} differs");
    }

    // (d) A submodule archive that is not the recorded commit is refused; nothing is left.
    let wrong = "f".repeat(40);
    let other = out.path().join("refused");
    let mut bad = assembly(&plan, &other.join("ctranslate2"));
    let cpuinfo = bad
        .submodules
        .iter_mut()
        .find(|s| s.path == "third_party/ruy/third_party/cpuinfo")
        .unwrap();
    let real = cpuinfo.part.commit.clone();
    cpuinfo.part.commit = wrong.clone();
    let err = format!(
        "{:#}",
        ct2v_fetch::assemble::assemble(&bad, &Reporter::captured()).unwrap_err()
    );
    for needle in [
        "third_party/ruy/third_party/cpuinfo",
        &real,
        &wrong,
        "cargo xtask pin",
    ] {
        assert!(err.contains(needle), "`{needle}` not in: {err}");
    }
    assert!(
        fs::read_dir(&other).unwrap().next().is_none(),
        "left behind in {}",
        other.display()
    );

    // (c) The 4.8.4 series (copied by bump) checks on the assembled tree.
    let run = scratch.run(&[
        "patch",
        "--check",
        "--variant",
        "rocm-gfx1010",
        "--platform",
        "linux-x86_64",
        "--ctranslate2",
        "4.8.5",
        "--mirror",
        &mirror,
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("applies") || run.stdout.contains("already"),
        "{}",
        run.stdout
    );
}

/// A version file whose github-tag records are wrong is refused with exit 2, naming the file
/// and the key; an unpinned one keeps the variant out of the matrix.
#[test]
fn bad_github_tag_records_are_refused_with_the_file_and_key() {
    let good = format!(
        "[source]\nkind = \"github-tag\"\n\
         url = \"https://github.com/OpenNMT/CTranslate2/archive/refs/tags/v4.8.5.tar.gz\"\n\
         commit = \"{TAG_COMMIT}\"\n\
         [source.submodules.\"third_party/ruy\"]\n\
         url = \"https://github.com/google/ruy/archive/{c}.tar.gz\"\ncommit = \"{c}\"\n",
        c = commit(5)
    );
    // The rest of 4.8.4's file (what the other variants need for this version), after [source].
    let v484 =
        fs::read_to_string(common::repo_root().join("variants/ctranslate2/4.8.4.toml")).unwrap();
    let rest = &v484[v484.find("\n# Upstream 4.8.4").unwrap()..];
    let good = format!("{good}{rest}");
    let cases: [(String, &[&str]); 4] = [
        (
            good.replace(&format!("commit = \"{TAG_COMMIT}\""), "commit = \"v4.8.5\""),
            &["4.8.5.toml", "not a commit id"],
        ),
        (
            good.replacen(
                &format!("archive/{}.tar.gz", commit(5)),
                &format!("archive/{}.tar.gz", commit(6)),
                1,
            ),
            &[
                "4.8.5.toml",
                "third_party/ruy",
                "must be the archive of its commit",
            ],
        ),
        (
            good.replace("\"third_party/ruy\"]", "\"../ruy\"]"),
            &["4.8.5.toml", "submodule path"],
        ),
        (
            good.replace("kind = \"github-tag\"", "kind = \"archive\""),
            &["`commit` belongs to [source] of kind `github-tag`"],
        ),
    ];
    for (text, needles) in cases {
        let run = plan_485(&with_485_file(&text), &[]);
        common::assert_exit(&run, 2, needles);
    }
    let scratch = with_485_file(&good);
    let run = plan_485(&scratch, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("assemble-source"), "{}", run.stdout);
    let run = scratch.run(&["matrix", "--ctranslate2", "4.8.5"]);
    assert!(
        run.stderr.contains("not pinned yet") && run.stderr.contains("submodule-third_party-ruy"),
        "{}{}",
        run.stdout,
        run.stderr
    );
}
