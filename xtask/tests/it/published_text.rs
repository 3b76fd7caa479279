//! What the tool publishes, read as its readers read it: the Pages front page's install
//! commands pasted into real shells (bash with history on, wine's cmd.exe, with and without
//! delayed expansion), whose programs are stubs that record their argv; RELEASE_NOTES.md
//! rendered by GitHub's Markdown (cmark-gfm, through PyPI's `cmarkgfm`); and names read from
//! a release (wheel names, versions, `--earlier` manifests) refused where they are read when
//! they are not what their rules allow (tags and versions given as flags: `bad_strings.rs`).

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::pasted::{intended, pasted_commands, pasted_into_bash, pasted_into_cmd};
use crate::common::{self, Scratch, assert_exit, github_markdown};
use crate::pages::{ASSETS, newer_manifest, pages_of_newer, two_releases};

/// The file a hostile name's command creates when a shell runs it.
const MARKER: &str = "PWNED";

/// The newer of [`two_releases`] (`v4.7.1-2`, cpu py3.11) copied into `dir`, its manifest
/// changed by `edit` (the release's other files stay: `pages` reads only the manifest).
fn release_copy(web: &Path, dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let from = web.join(ASSETS).join("v4.7.1-2");
    common::copy_tree(&from, dir);
    let path = dir.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    edit(&mut manifest);
    fs::write(&path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
    dir.to_path_buf()
}

/// The CTranslate2 wheel's row of a manifest.
fn wheel_row(manifest: &mut serde_json::Value) -> &mut serde_json::Value {
    manifest["artifacts"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|a| a["kind"] == "wheel")
        .unwrap()
}

/// Nothing of a refused `pages` run is left: no site, no staging folder or lock beside it.
fn assert_nothing_written(site: &Path) {
    assert!(!site.exists(), "{} written", site.display());
    let lock = format!(".{}.lock", site.file_name().unwrap().to_str().unwrap());
    let leftovers: Vec<String> = fs::read_dir(site.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".pages-") || *n == lock)
        .collect();
    assert!(leftovers.is_empty(), "staging left: {leftovers:?}");
}

/// One hostile input of `pages`: what it is, the release folder (its manifest edited), more
/// flags, and what the refusal says.
struct Hostile {
    what: String,
    release: PathBuf,
    flags: Vec<&'static str>,
    said: &'static str,
}

const BASE: &str = "https://github.com/o/r/releases/download/";

/// Every form a name takes to run something when pasted: shell substitutions, quotes,
/// cmd.exe's `%VAR%` and `!VAR!`, a line break, an invisible character, `;`, in the newer
/// release's wheel name; an epoch's `!` (which PEP 440 allows), a version, a `--site-url`
/// with `%VAR%`.
fn hostile_inputs(scratch: &Scratch, web: &Path) -> Vec<Hostile> {
    let sub = format!("$(touch {MARKER})");
    let wheel_forms = [
        format!("+cpu{sub}"),
        format!("+cpu`touch {MARKER}`"),
        format!("+cpu\"{sub}\""),
        format!("+cpu'{sub}'"),
        "+cpu%COMSPEC%".to_string(),
        "+cpu!PATH!".to_string(),
        format!("+cpu\ntouch {MARKER}\n"),
        "+cpu\u{202e}lhw.46x_68".to_string(),
        format!("+cpu;touch${{IFS}}{MARKER};"),
        "1!4.7.1+cpu".to_string(),
    ];
    let mut inputs = Vec::new();
    for (n, form) in wheel_forms.iter().enumerate() {
        let release = release_copy(web, &scratch.path().join(format!("hostile/{n}")), |m| {
            let row = wheel_row(m);
            let path = match form.strip_suffix("+cpu") {
                Some(version) => row["path"].as_str().unwrap().replacen("4.7.1", version, 1),
                None => row["path"].as_str().unwrap().replacen("+cpu", form, 1),
            };
            row["path"] = path.into();
        });
        let epoch = form.starts_with("1!");
        inputs.push(Hostile {
            what: format!("wheel name with {form:?}"),
            release,
            flags: Vec::new(),
            // PEP 440 allows an epoch: the command it would be written into refuses it.
            said: if epoch {
                "which a shell reads"
            } else {
                "names no release writes"
            },
        });
    }
    let release = release_copy(web, &scratch.path().join("hostile/version"), |m| {
        m["version"] = format!("4.7.1{sub}").into();
    });
    inputs.push(Hostile {
        what: "a version".into(),
        release,
        flags: Vec::new(),
        said: "names no release writes",
    });
    inputs.push(Hostile {
        what: "--site-url with %COMSPEC%".into(),
        release: web.join(ASSETS).join("v4.7.1-2"),
        flags: vec!["--site-url", "https://o.github.io/%COMSPEC%/r"],
        said: "which a shell reads",
    });
    inputs
}

/// `pages` of `input` into its own folder refuses it: exit 2, what it says, no raw ESC, line
/// break or override, nothing written. A page written anyway is pasted into the shells, and
/// what that ran is the failure's message.
fn assert_refused(scratch: &Scratch, n: usize, input: &Hostile) {
    let site = scratch.path().join(format!("sites/{n}/site"));
    fs::create_dir_all(site.parent().unwrap()).unwrap();
    let mut args = vec![
        "pages",
        "--release",
        input.release.to_str().unwrap(),
        "--tag",
        "v4.7.1-2",
        "--out",
        site.to_str().unwrap(),
        "--download-base",
        BASE,
    ];
    args.extend(&input.flags);
    let run = scratch.run(&args);
    if run.code == 0 {
        let page = fs::read_to_string(site.join("index.html")).unwrap();
        let commands = pasted_commands(&page);
        panic!(
            "{}: pages wrote the page (exit 0); its commands {commands:?}\n\
             pasted into bash ran {:?}\npasted into cmd.exe ran {:?}",
            input.what,
            pasted_into_bash(&commands),
            pasted_into_cmd(&commands)
        );
    }
    assert_exit(&run, 2, &[input.said]);
    assert!(
        !run.stderr.contains(['\u{1b}', '\u{202e}']) && !run.stderr.contains("cpu\ntouch"),
        "{}: printed raw: {}",
        input.what,
        run.stderr
    );
    assert_nothing_written(&site);
}

/// A wheel name or version a manifest gives `pages` that PEP 427 / PEP 440 do not allow
/// (shell substitutions, quotes, cmd.exe variables, history and delayed-expansion `!`, a line
/// break, an invisible character), and a `--site-url` with a cmd.exe variable, are refused
/// (exit 2, named escaped, nothing written); the front page of a real release, every
/// command pasted into bash and into cmd.exe (plain and with delayed expansion), runs
/// exactly pip, uv and the PyApp exe with the intended arguments and nothing else.
#[test]
fn every_command_of_the_front_page_runs_exactly_its_program_when_pasted_into_a_shell() {
    let scratch = Scratch::new();
    let web = scratch.path().join("web");
    two_releases(&scratch, &web);
    for (n, input) in hostile_inputs(&scratch, &web).iter().enumerate() {
        assert_refused(&scratch, n, input);
    }

    // The real page, with a site URL of every character the commands may hold.
    let site = scratch.path().join("site");
    let url = "https://o.github.io/r,x=y@z~w+v";
    let run = pages_of_newer(
        &scratch,
        &web,
        &site,
        &["--download-base", BASE, "--site-url", url],
    );
    assert_exit(&run, 0, &["1 release(s)"]);
    let page = fs::read_to_string(site.join("index.html")).unwrap();
    assert!(
        page.contains("each command runs as it is in sh, bash, zsh, cmd.exe and PowerShell"),
        "the page says which shells it is written for"
    );
    let commands = pasted_commands(&page);
    let want = intended(&["ctranslate2==4.7.1+cpu"], &format!("{url}/whl/cpu"));
    assert_eq!(commands.len(), want.len(), "{commands:?}");
    let bash = pasted_into_bash(&commands);
    assert_eq!(bash.calls, want, "bash: {commands:?}");
    assert!(bash.created.is_empty(), "bash: {:?}", bash.created);
    let Some(cmd) = pasted_into_cmd(&commands) else {
        return;
    };
    for (ran, how) in cmd.iter().zip(["cmd /c", "cmd /v:on /c"]) {
        assert_eq!(ran.calls, want, "{how}: {commands:?}");
        assert!(ran.created.is_empty(), "{how}: {:?}", ran.created);
    }
}

/// A `--from` folder for a partial release of the cpu and cuda py3.12 Linux entries, named
/// with a heading, raw HTML, a mention, `javascript:` links, ESC and a right-to-left
/// override: cpu's build is there (its provenance report is the test's to write), cuda's
/// check failed (`failed-<artifact>`, as CI uploads it).
struct HostileFrom {
    from: PathBuf,
    /// cpu's artifact folder, holding its `provenance.json`.
    cpu: PathBuf,
}

impl HostileFrom {
    fn new(scratch: &Scratch) -> HostileFrom {
        let matrix = scratch.run(&["matrix", "--json"]);
        assert_eq!(matrix.code, 0, "{}", matrix.stderr);
        let matrix: serde_json::Value = serde_json::from_str(&matrix.stdout).unwrap();
        let entry = |variant: &str| -> serde_json::Value {
            let linux_312 = |e: &&serde_json::Value| {
                e["variant"] == variant && e["platform"] == "linux-x86_64" && e["python"] == "3.12"
            };
            matrix["include"]
                .as_array()
                .unwrap()
                .iter()
                .find(linux_312)
                .cloned()
                .unwrap()
        };
        let (cpu, cuda) = (entry("cpu"), entry("cuda"));
        let hostile = "x\n# Owned @everyone <img src=x onerror=alert(1)> \
                       [click](javascript:alert(1)) <javascript:alert(2)> \u{1b}[31m\u{202e}";
        let from = scratch.path().join(format!("from {hostile}"));
        crate::release::fake_entry(scratch, &cpu);
        crate::release::artifacts_of(scratch, &[&cpu], &from);
        let failed = from.join(format!("failed-{}", cuda["artifact"].as_str().unwrap()));
        fs::create_dir_all(failed).unwrap();
        let cpu = from.join(cpu["artifact"].as_str().unwrap());
        HostileFrom { from, cpu }
    }

    /// cpu's provenance report, of one bundled file.
    fn provenance(&self, path: &str, package: &str) {
        let report = serde_json::json!({"files": [{
            "path": path, "package": package, "sha256": "ab", "size": 1, "reason": "x"
        }]});
        fs::write(self.cpu.join("provenance.json"), report.to_string()).unwrap();
    }

    /// `release --partial` of the two entries from this folder into `out`.
    fn release(&self, scratch: &Scratch, out: &Path) -> common::Run {
        scratch.run(&[
            "release",
            "--variants",
            "cpu,cuda",
            "--platforms",
            "linux-x86_64",
            "--pythons",
            "3.12",
            "--from",
            self.from.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--partial",
        ])
    }
}

/// What GitHub shows of `notes` (the file at `file`) has no element but the notes' own
/// (headings, paragraphs, lists, code), no link but https, no `@` outside code (a mention),
/// and only the notes' own headings.
fn assert_rendered_as_text(python: &Path, file: &Path, notes: &str) {
    let shown = github_markdown::rendered(python, file);
    let html = &shown["html"];
    let allowed = ["code", "h1", "h2", "li", "p", "ul"];
    for tag in shown["tags"].as_array().unwrap() {
        assert!(
            allowed.contains(&tag.as_str().unwrap()),
            "<{tag}> in the notes:\n{html}"
        );
    }
    for href in shown["hrefs"].as_array().unwrap() {
        let https = href.as_str().unwrap().starts_with("https://");
        assert!(https, "a link to {href}:\n{html}");
    }
    let text = shown["text"].as_str().unwrap();
    assert!(!text.contains('@'), "a mention outside code: {text}");
    let headings = html.as_str().unwrap().matches("<h").count();
    let sections = notes.matches("\n## ").count() + 1;
    assert_eq!(headings, sections, "only the notes' own headings:\n{notes}");
}

/// A `--from` folder and a failed entry's folder named with a heading, raw HTML, a mention, a
/// `javascript:` link, ESC and a right-to-left override, and a provenance report whose
/// package and path carry the same markup: the release's notes (and so the job summary, their
/// last section) render with no raw HTML, no mention and no link but https, its manifest and
/// stderr hold no ESC or override, and nothing published names a folder of this machine.
#[test]
fn names_from_a_build_reach_the_notes_the_manifest_and_stderr_as_text_only() {
    let Some(python) = github_markdown::renderer() else {
        return;
    };
    let scratch = Scratch::new();
    let from = HostileFrom::new(&scratch);
    from.provenance(
        "ctranslate2/li`b`<b>x</b>@everyone.so",
        "<img src=x onerror=alert(1)> @everyone [x](javascript:alert(1)) # h `b` | t",
    );
    let out = scratch.path().join("dist/ok");
    let run = from.release(&scratch, &out);
    assert_exit(&run, 0, &["note: left out of this release"]);
    assert!(
        !run.stderr.contains(['\u{1b}', '\u{202e}']),
        "{}",
        run.stderr
    );

    let notes_file = out.join("RELEASE_NOTES.md");
    let notes = fs::read_to_string(&notes_file).unwrap();
    let manifest = fs::read_to_string(out.join("manifest.json")).unwrap();
    let local = scratch.path().to_str().unwrap();
    for (name, text) in [("RELEASE_NOTES.md", &notes), ("manifest.json", &manifest)] {
        assert!(!text.contains(local), "{name} names {local}:\n{text}");
        let hidden = text.contains(['\u{1b}', '\u{202e}']);
        assert!(!hidden, "{name} holds ESC or an override:\n{text}");
    }
    assert_rendered_as_text(&python, &notes_file, &notes);
    // The job summary is the notes' last section, from its heading on (release.yml).
    let summary = &notes[notes.find("## Not in this release").unwrap()..];
    assert!(summary.contains("failed-cuda-"), "{summary}");
}

/// A provenance row with a control or invisible character, a path out of the wheel, or a
/// package naming an absolute folder (of Linux or Windows) is refused (exit 2, escaped) and
/// nothing is released.
#[test]
fn a_provenance_row_that_cannot_be_published_stops_the_release() {
    let scratch = Scratch::new();
    let from = HostileFrom::new(&scratch);
    let control = "control or invisible";
    let local = "a folder of the build machine";
    for (n, (path, package, said)) in [
        ("ctranslate2/lib\u{1b}[2J.so", "p", control),
        ("ctranslate2/lib.so", "p\u{202e}", control),
        ("ctranslate2/lib.so", "line\n## Owned", control),
        ("/home/runner/lib.so", "p", "path `/home/runner/lib.so`"),
        ("../../lib.so", "p", "path `../../lib.so`"),
        ("ctranslate2/lib.so", "from /home/runner/work/sdk", local),
        ("ctranslate2/lib.so", r"C:\Users\runner\sdk", local),
    ]
    .into_iter()
    .enumerate()
    {
        from.provenance(path, package);
        let out = scratch.path().join(format!("dist/bad{n}"));
        let run = from.release(&scratch, &out);
        assert_exit(&run, 2, &["provenance.json: names no bundle writes", said]);
        assert!(!out.exists(), "{path:?} {package:?}: released");
        assert!(
            !run.stderr.contains(['\u{1b}', '\u{202e}']),
            "{}",
            run.stderr
        );
    }
}

/// A wheel a build left whose file name PEP 427 does not allow (a shell substitution, a
/// backtick, a quote, a line break, an invisible character) stops `release` before anything
/// is written (exit 2, the name escaped): its name would be published in the manifest, the
/// notes' pip command and the index.
#[test]
fn a_built_wheel_whose_name_pep_427_refuses_stops_the_release() {
    let scratch = Scratch::new();
    let wheel = crate::release::fake_build(&scratch, "3.11");
    let name = wheel.file_name().unwrap().to_str().unwrap().to_string();
    let mut at = wheel.clone();
    for (n, form) in [
        format!("$(touch {MARKER})"),
        format!("`touch {MARKER}`"),
        "\"x".to_string(),
        "'x".to_string(),
        "\n## x".to_string(),
        "\u{202e}x".to_string(),
    ]
    .iter()
    .enumerate()
    {
        let renamed = wheel.with_file_name(name.replacen(".whl", &format!("{form}.whl"), 1));
        fs::rename(&at, &renamed).unwrap();
        at = renamed;
        let out = scratch.path().join(format!("dist/{n}"));
        let run = crate::release::release(&scratch, &out, "3.11");
        assert_exit(&run, 2, &["is not named as PEP 427 names a wheel"]);
        assert!(!out.exists(), "{form:?}: released");
        assert!(
            !run.stderr.contains(['\u{1b}', '\u{202e}']),
            "{}",
            run.stderr
        );
        assert!(!scratch.path().join(MARKER).exists());
    }
}

/// The tags of the earlier releases of the chain, oldest first.
const CHAIN: [&str; 4] = ["v4.4.0", "v4.5.0", "v4.6.0", "v4.7.0"];

/// One folder per tag of [`CHAIN`] in `earlier`, each holding `newer`'s manifest as that
/// release's (its version in every name, other digests); with `hostile`, the third's wheel
/// name carries it after `+cpu`.
fn earlier_chain(newer: &serde_json::Value, earlier: &Path, hostile: Option<&str>) {
    for tag in CHAIN {
        let version = &tag[1..];
        let mut manifest = newer.clone();
        manifest["version"] = version.into();
        for a in manifest["artifacts"].as_array_mut().unwrap() {
            let path = a["path"].as_str().unwrap().replace("4.7.1", version);
            a["path"] = path.into();
            a["sha256"] = format!("{:0>64}", version.replace('.', "")).into();
        }
        if tag == "v4.6.0"
            && let Some(form) = hostile
        {
            let row = wheel_row(&mut manifest);
            let path = row["path"].as_str().unwrap().replacen("+cpu", form, 1);
            row["path"] = path.into();
        }
        fs::create_dir_all(earlier.join(tag)).unwrap();
        let text = serde_json::to_string_pretty(&manifest).unwrap();
        fs::write(earlier.join(tag).join("manifest.json"), text).unwrap();
    }
}

/// `pages --earlier` over four earlier releases and this one renders every release (each
/// wheel in the index, each tag in the front page's table); one hostile wheel name in the
/// third earlier release stops it (exit 2) naming that release's manifest, and nothing is
/// written.
#[test]
fn an_earlier_chain_of_releases_renders_whole_or_is_refused_naming_the_release() {
    let scratch = Scratch::new();
    let web = scratch.path().join("web");
    two_releases(&scratch, &web);
    let newer = newer_manifest(&web);
    let earlier = scratch.path().join("earlier");
    let write_chain = |hostile: Option<&str>| earlier_chain(&newer, &earlier, hostile);
    write_chain(None);
    let site = scratch.path().join("site");
    let args = [
        "--earlier",
        earlier.to_str().unwrap(),
        "--download-base",
        BASE,
    ];
    let run = pages_of_newer(&scratch, &web, &site, &args);
    assert_exit(
        &run,
        0,
        &["5 release(s): v4.4.0, v4.5.0, v4.6.0, v4.7.0, v4.7.1-2"],
    );
    let index = fs::read_to_string(site.join("whl/cpu/ctranslate2/index.html")).unwrap();
    for version in ["4.4.0", "4.5.0", "4.6.0", "4.7.0", "4.7.1"] {
        assert!(
            index.contains(&format!("ctranslate2-{version}%2Bcpu-cp311")),
            "{version}: {index}"
        );
    }
    let front = fs::read_to_string(site.join("index.html")).unwrap();
    for tag in CHAIN.iter().chain(&["v4.7.1-2"]) {
        assert!(front.contains(&format!("<tr><td>{tag}</td>")), "{tag}");
    }

    for form in [
        "+cpu$(touch${IFS}PWNED)",
        "+cpu`id`",
        "+cpu\u{202e}",
        "+cpu\"x",
    ] {
        write_chain(Some(form));
        let site = scratch.path().join("site2");
        let run = pages_of_newer(&scratch, &web, &site, &args);
        let manifest = earlier.join("v4.6.0/manifest.json");
        assert_exit(
            &run,
            2,
            &[
                manifest.to_str().unwrap(),
                "names no release writes",
                "wheel `",
            ],
        );
        for other in ["v4.4.0", "v4.5.0", "v4.7.0"] {
            assert!(
                !run.stderr.contains(&format!("{other}/manifest.json")),
                "{form}: only v4.6.0 is named: {}",
                run.stderr
            );
        }
        assert!(!run.stderr.contains('\u{202e}'), "{}", run.stderr);
        assert_nothing_written(&site);
    }
}
