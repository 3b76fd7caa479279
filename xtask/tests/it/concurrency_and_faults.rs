//! Runs that meet trouble: two runs writing one place at once (`fetch` into one cache,
//! `build` unpacking one input, `bundle`, `release` and `pages` into one `--out`), a full
//! disk and a read-only cache (tmpfs mounts, as root), runs killed with SIGKILL at seeded
//! random points and run again, and the Windows binary's copies of archive links under wine.

use crate::common;
use crate::fetch_pin::{self, CT2_URL_PATH, ONEDNN_URL_PATH};
use crate::release::{fake_build, release};
use ct2v_support::report::Reporter;

use std::collections::BTreeMap;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::command_args::{bundle, cpu_job, job};
use common::fuzz::Rng;
use common::server::{Reply, Server};
use common::windows_exe::{WinXtask, win};
use common::{Run, Scratch, repo_root, skip, xtask_in};

/// What a run refused by another one's lock says.
const BUSY: &str = "another run of xtask is writing it";
/// What the OS says of a full disk (ENOSPC).
const NO_SPACE: &str = "No space left on device";

/// Every file of the output `dir` with its bytes: what two runs must agree on, byte for byte.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    common::wheel::output_files(dir)
        .into_iter()
        .map(|name| {
            let bytes = fs::read(dir.join(&name)).unwrap();
            (name, bytes)
        })
        .collect()
}

/// The hidden entries of `dir`: staging folders, old outputs moved aside, lock files.
fn leftovers(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// `n` bytes no compressor shrinks, the same for the same `seed`.
fn noise(seed: &str, n: usize) -> Vec<u8> {
    let mut rng = Rng::seeded(seed);
    (0..n).map(|_| rng.next() as u8).collect()
}

/// `a` and `b` run in `root` at the same moment (as from two terminals); their results.
fn at_once(root: &Path, a: &[&str], b: &[&str]) -> [Run; 2] {
    let start = Barrier::new(2);
    let run = &|args: &[&str]| {
        start.wait();
        xtask_in(root, args)
    };
    std::thread::scope(|s| {
        let first = s.spawn(move || run(a));
        let second = s.spawn(move || run(b));
        [first.join().unwrap(), second.join().unwrap()]
    })
}

/// How one of two runs at once ended: it did the work, the other run held the output
/// (refused before any work, naming it), or the other run had finished an output that is
/// never replaced. Anything else fails the test.
fn outcome(run: &Run, out: &Path) -> &'static str {
    let shown = out.display().to_string();
    match run.code {
        0 => "done",
        1 if run.stderr.contains(BUSY) && run.stderr.contains(&shown) => "refused: busy",
        2 if run.stderr.contains("is not empty") && run.stderr.contains(&shown) => {
            "refused: exists"
        }
        _ => panic!(
            "neither done nor refused cleanly (exit {}):\n{}",
            run.code, run.stderr
        ),
    }
}

/// `out` holds the `clean` bytes and nothing hidden is left beside it (`when`: "round 2",
/// "after kill 1").
fn assert_clean_output(out: &Path, clean: &BTreeMap<String, Vec<u8>>, when: &str) {
    assert!(contents(out) == *clean, "{when}: not the clean bytes");
    assert_eq!(
        leftovers(out.parent().unwrap()),
        Vec::<String>::new(),
        "{when}"
    );
}

/// Two runs at once wrote `out`: each did its work or refused cleanly, at least one did it,
/// and `out` holds exactly one run's output, `a`'s or `b`'s, never a mix.
fn assert_one_whole_output(
    runs: &[Run; 2],
    out: &Path,
    a: &BTreeMap<String, Vec<u8>>,
    b: &BTreeMap<String, Vec<u8>>,
) {
    let outcomes = runs.each_ref().map(|r| outcome(r, out));
    assert!(outcomes.contains(&"done"), "{outcomes:?}");
    let found = contents(out);
    assert!(
        &found == a || &found == b,
        "{} is neither run's output ({outcomes:?}): {:?}",
        out.display(),
        found.keys().collect::<Vec<_>>()
    );
}

// ---------------------------------------------------------------------------------------
// Inputs: the scratch variants pinned to small archives served on loopback.

/// An archive member: a file and its bytes, or a symbolic link and its target.
enum Member<'a> {
    File(&'a str, &'a [u8]),
    Link(&'a str, &'a str),
}

/// A `.tar.gz` of `members`, each named below `top`.
fn tar_gz_of(top: &str, members: &[Member]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    for member in members {
        let mut header = tar::Header::new_gnu();
        header.set_mtime(0);
        match member {
            Member::File(name, data) => {
                header.set_size(data.len() as u64);
                header.set_mode(0o644);
                tar.append_data(&mut header, format!("{top}{name}"), *data)
                    .unwrap();
            }
            Member::Link(name, target) => {
                header.set_entry_type(tar::EntryType::Symlink);
                header.set_size(0);
                header.set_mode(0o777);
                tar.append_link(&mut header, format!("{top}{name}"), target)
                    .unwrap();
            }
        }
    }
    tar.into_inner().unwrap().finish().unwrap()
}

/// A zip of `members`, each named below `top`.
fn zip_of(top: &str, members: &[Member]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    for member in members {
        match member {
            Member::File(name, data) => {
                zip.start_file(format!("{top}{name}"), options).unwrap();
                zip.write_all(data).unwrap();
            }
            Member::Link(name, target) => zip
                .add_symlink(format!("{top}{name}"), *target, options)
                .unwrap(),
        }
    }
    zip.finish().unwrap().into_inner()
}

/// `n` small source files, as a source tree has many.
fn sources(n: usize) -> Vec<(String, Vec<u8>)> {
    (0..n)
        .map(|i| {
            (
                format!("src/f{i:03}.cc"),
                format!("int f{i}();\n").into_bytes(),
            )
        })
        .collect()
}

/// The two crates the cpu variant unpacks, laid out as its `subdir`s say, and their files.
struct SourceCrates {
    ct2: Vec<u8>,
    onednn: Vec<u8>,
    files: Vec<(String, Vec<u8>)>,
}

fn source_crates() -> SourceCrates {
    let files = sources(200);
    let members: Vec<Member> = files.iter().map(|(n, d)| Member::File(n, d)).collect();
    SourceCrates {
        ct2: tar_gz_of("ct2rs-0.9.17/CTranslate2/", &members),
        onednn: tar_gz_of("onednn-src-0.1.0/oneDNN/", &members),
        files,
    }
}

/// Puts `bytes` into `cache` under their sha256, as a finished download is.
fn put_in_cache(cache: &Path, bytes: &[u8]) {
    let path = cache.join("sha256").join(fetch_pin::sha256(bytes));
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, bytes).unwrap();
}

/// The cpu variant's two crates served on a loopback server (`ct2` in pieces of 256 KiB with
/// `pause` between them), and the scratch variants pinned to them.
fn serve_crates(ct2: &Arc<Vec<u8>>, onednn: &Arc<Vec<u8>>, pause: Duration) -> (Server, Scratch) {
    let scratch = fetch_pin::scratch_pinned_to(ct2, onednn);
    let server = Server::start();
    let served = ct2.clone();
    server.route(CT2_URL_PATH, move |_, _| {
        Reply::ok(served.clone()).trickle(256 << 10, pause)
    });
    server.serve(ONEDNN_URL_PATH, onednn.clone());
    (server, scratch)
}

/// The `.part` files a cache holds.
fn part_files(cache: &Path) -> Vec<String> {
    fs::read_dir(cache.join("partial"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".part"))
                .collect()
        })
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------
// Two runs at once.

/// Two `fetch` runs of the same inputs into one cache at once: the first downloads, the
/// second waits for its lock and finds the file there; both succeed, the server is asked
/// once, and the cache holds the pinned bytes.
#[test]
fn two_fetches_into_one_cache_download_once_and_both_succeed() {
    let ct2 = fetch_pin::bytes(3 << 20, 3);
    let onednn = fetch_pin::bytes(100_000, 5);
    let (server, scratch) = serve_crates(&ct2, &onednn, Duration::from_millis(40));
    let cache = tempfile::tempdir().unwrap();
    let mirror = fetch_pin::mirror(&server);
    let args = fetch_pin::fetch_args(cache.path().to_str().unwrap(), &mirror, &[]);
    let runs = at_once(scratch.path(), &args, &args);
    for run in &runs {
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    assert_eq!(server.hits(CT2_URL_PATH).len(), 1, "downloaded once");
    let downloaded = |run: &Run| {
        run.stdout
            .lines()
            .any(|l| l.starts_with("ctranslate2-source ") && l.contains(" downloaded "))
    };
    assert_eq!(
        runs.iter().filter(|r| downloaded(r)).count(),
        1,
        "one run downloads, the other finds it: {}\n{}",
        runs[0].stdout,
        runs[1].stdout
    );
    let blob = cache.path().join("sha256").join(fetch_pin::sha256(&ct2));
    assert_eq!(fs::read(blob).unwrap(), *ct2);
    assert_eq!(part_files(cache.path()), Vec::<String>::new());
}

/// Two builds of one variant unpacking its inputs into the same folders at once (the fetch
/// and unpack steps of two terminals' `build`): each unpacks or refuses while the other
/// writes; the trees are the archives' and nothing is left beside them.
#[test]
fn two_builds_unpacking_one_input_at_once_leave_whole_trees() {
    let crates = source_crates();
    let scratch = fetch_pin::scratch_pinned_to(&crates.ct2, &crates.onednn);
    let cache = tempfile::tempdir().unwrap();
    put_in_cache(cache.path(), &crates.ct2);
    put_in_cache(cache.path(), &crates.onednn);
    let cache_dir = cache.path().to_str().unwrap();
    let build = [
        "--compiler-cache",
        "off",
        "--offline",
        "--until",
        "unpack-onednn",
    ];
    let args = [&["--cache-dir", cache_dir][..], &cpu_job("build", &build)].concat();
    let work = scratch.path().join("target/xtask/cpu/linux-x86_64");
    let expected: BTreeMap<String, Vec<u8>> = crates.files.iter().cloned().collect();
    for round in 0..3 {
        // Without the state of the last round's steps, both runs unpack again.
        let _ = fs::remove_dir_all(scratch.path().join("target/xtask/state"));
        let runs = at_once(scratch.path(), &args, &args);
        let dests = [work.join("src/ctranslate2"), work.join("deps/onednn")];
        for run in &runs {
            let refused = run.code == 1
                && run.stderr.contains(BUSY)
                && dests
                    .iter()
                    .any(|d| run.stderr.contains(&d.display().to_string()));
            assert!(
                run.code == 0 || refused,
                "round {round}: exit {}:\n{}",
                run.code,
                run.stderr
            );
        }
        assert!(runs.iter().any(|r| r.code == 0), "round {round}");
        for dest in &dests {
            assert_clean_output(
                dest,
                &expected,
                &format!("round {round}: {}", dest.display()),
            );
        }
    }
}

/// Two bundles of different wheels into one `--out` at once, over an earlier output and
/// over none: `--out` ends up one run's whole output, never a mix, and nothing is left
/// beside it.
#[test]
fn two_bundles_into_one_out_at_once_leave_one_whole_output() {
    let dir = tempfile::tempdir().unwrap();
    let wheel_a = common::wheel::linux_wheel(&dir.path().join("a"), &[("ctranslate2/a.txt", b"a")]);
    let wheel_b = common::wheel::linux_wheel(&dir.path().join("b"), &[("ctranslate2/b.txt", b"b")]);
    let out = dir.path().join("out");
    let mut clean = Vec::new();
    for wheel in [&wheel_a, &wheel_b] {
        let run = common::xtask(&bundle(wheel, &out, &[]));
        assert_eq!(run.code, 0, "{}", run.stderr);
        clean.push(contents(&out));
    }
    assert_ne!(clean[0], clean[1]);
    for round in 0..6 {
        if round % 2 == 0 {
            fs::remove_dir_all(&out).unwrap();
        }
        let runs = at_once(
            &repo_root(),
            &bundle(&wheel_a, &out, &[]),
            &bundle(&wheel_b, &out, &[]),
        );
        assert_one_whole_output(&runs, &out, &clean[0], &clean[1]);
        assert_eq!(leftovers(dir.path()), Vec::<String>::new(), "round {round}");
    }
}

/// `release` of the cpu build for Python 3.12 into `out`, its index linking `base`.
fn release_args<'a>(out: &'a Path, base: &'a str) -> Vec<&'a str> {
    let base = ["--index-base-url", base];
    common::command_args::release_cpu(out.to_str().unwrap(), "3.12", &base)
}

const BASES: [&str; 2] = ["https://a.example.org/r/", "https://b.example.org/r/"];

/// `args` as owned strings, for a closure that returns them.
fn owned(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

fn as_strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// Two runs into one `--out` at once, each writing `args(out, base)` for one of `BASES`
/// (run in `root`): each alone first (into `parent/clean-{i}`), then `rounds` times both at
/// once into `parent/{name}` (removed first). Each round leaves one run's whole output and
/// nothing hidden in `parent`; `each_round` checks the round's runs further.
fn race_over_bases(
    root: &Path,
    parent: &Path,
    name: &str,
    rounds: usize,
    args: impl Fn(&Path, &str) -> Vec<String>,
    each_round: impl Fn(usize, &[Run; 2]),
) {
    let clean: Vec<_> = BASES
        .iter()
        .enumerate()
        .map(|(i, base)| {
            let out = parent.join(format!("clean-{i}"));
            let run = xtask_in(root, &as_strs(&args(&out, base)));
            assert_eq!(run.code, 0, "{}", run.stderr);
            contents(&out)
        })
        .collect();
    let out = parent.join(name);
    for round in 0..rounds {
        let _ = fs::remove_dir_all(&out);
        let [a, b] = BASES.map(|base| args(&out, base));
        let runs = at_once(root, &as_strs(&a), &as_strs(&b));
        assert_one_whole_output(&runs, &out, &clean[0], &clean[1]);
        each_round(round, &runs);
        assert_eq!(leftovers(parent), Vec::<String>::new(), "round {round}");
    }
}

/// Two releases (their indexes linking other places) into one `--out` at once: one is
/// published whole, the other refused (the folder is being written, or is a release now);
/// never a mix, never a late failure, nothing left beside it.
#[test]
fn two_releases_into_one_out_at_once_publish_one_whole_release() {
    let scratch = Scratch::new();
    fake_build(&scratch, "3.12");
    let dist = scratch.path().join("target/dist");
    let args = |out: &Path, base: &str| owned(&release_args(out, base));
    race_over_bases(scratch.path(), &dist, "4.7.1", 3, args, |round, runs| {
        assert_eq!(
            runs.iter().filter(|r| r.code == 0).count(),
            1,
            "round {round}: a release is written once"
        );
    });
}

/// A scratch checkout holding a release of the cpu build for Python 3.12 at `rel`; both.
fn scratch_with_a_release() -> (Scratch, PathBuf) {
    let scratch = Scratch::new();
    let rel = scratch.path().join("rel");
    fake_build(&scratch, "3.12");
    let run = release(&scratch, &rel, "3.12");
    assert_eq!(run.code, 0, "{}", run.stderr);
    (scratch, rel)
}

/// `pages` of the release `release` into `out`, linking its wheels below `base`.
fn pages_args<'a>(release: &'a Path, base: &'a str, out: &'a Path) -> [&'a str; 9] {
    [
        "pages",
        "--release",
        release.to_str().unwrap(),
        "--tag",
        "v4.7.1",
        "--download-base",
        base,
        "--out",
        out.to_str().unwrap(),
    ]
}

/// Two `pages` runs (linking other places) into one `--out` at once: one site, whole.
#[test]
fn two_pages_runs_into_one_out_at_once_write_one_whole_site() {
    let (scratch, rel) = scratch_with_a_release();
    let sites = scratch.path().join("sites");
    let args = |out: &Path, base: &str| owned(&pages_args(&rel, base, out));
    race_over_bases(scratch.path(), &sites, "site", 4, args, |_, _| {});
}

// ---------------------------------------------------------------------------------------
// A full disk, a read-only cache.

/// A tmpfs mounted on a fresh folder, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// A tmpfs of `size` (`mount -o size=…`); `None` where this run may not mount one (not
    /// root, or no CAP_SYS_ADMIN): a counted skip, a failure under `CI=true`.
    fn mount(size: &str) -> Option<Tmpfs> {
        if skip::not_root("mounting a tmpfs (a full disk, a read-only cache)") {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "ct2v-test"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            let ci = std::env::var("CI").is_ok_and(|v| v == "true");
            skip::missing_in(
                "permission to mount a tmpfs",
                "run the tests as root where mount(8) may mount",
                ci,
                &skip::record_file(),
            );
            return None;
        }
        Some(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `mount -o remount,OPTIONS`: another size, `ro` or `rw`.
    fn remount(&self, options: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(self.path())
            .status()
            .unwrap();
        assert!(status.success(), "remount,{options}");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.path()).status();
    }
}

/// `write(out)`, with `out` on a tmpfs too small for it at each of `sizes` (so that it fails
/// at other points of its work): exit 1 naming a path on that disk and that it is full, no
/// output and nothing left beside it; given room again, the bytes of a run that never lacked
/// it.
fn full_disk_then_room(sizes: &[&str], write: impl Fn(&Path) -> Run) {
    let Some(disk) = Tmpfs::mount("64m") else {
        return;
    };
    let out = disk.path().join("out");
    let run = write(&out);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let clean = contents(&out);
    fs::remove_dir_all(&out).unwrap();
    let shown = disk.path().display().to_string();
    for size in sizes {
        disk.remount(&format!("size={size}"));
        let run = write(&out);
        assert_eq!(run.code, 1, "size={size}: {}", run.stderr);
        assert!(
            run.stderr.contains(NO_SPACE) && run.stderr.contains(&shown),
            "size={size}: names the path and the full disk: {}",
            run.stderr
        );
        assert!(!out.exists(), "size={size}: no half-written output");
        assert_eq!(leftovers(disk.path()), Vec::<String>::new(), "size={size}");
        disk.remount("size=64m");
        let rerun = write(&out);
        assert_eq!(rerun.code, 0, "size={size}: {}", rerun.stderr);
        assert!(contents(&out) == clean, "size={size}: not the clean bytes");
        fs::remove_dir_all(&out).unwrap();
    }
}

/// A bundle whose wheel holds 600 KiB that does not compress, on disks too small for its
/// unpacked tree, its fat wheel, its portable folder.
#[test]
fn a_bundle_onto_a_full_disk_names_it_and_a_rerun_with_room_is_the_clean_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let payload = noise("bundle payload", 600 << 10);
    let wheel = common::wheel::linux_wheel(dir.path(), &[("ctranslate2/model.bin", &payload)]);
    full_disk_then_room(&["256k", "1m", "1600k"], |out| {
        common::xtask(&bundle(&wheel, out, &[]))
    });
}

/// A release whose portable folder holds 600 KiB that does not compress, on disks too small
/// for its first files and for its portable zip.
#[test]
fn a_release_onto_a_full_disk_names_it_and_a_rerun_with_room_is_the_clean_release() {
    let scratch = Scratch::new();
    let wheel = fake_build(&scratch, "3.12");
    let payload = wheel.parent().unwrap().join("portable/_internal/model.bin");
    fs::write(payload, noise("release payload", 600 << 10)).unwrap();
    full_disk_then_room(&["16k", "400k"], |out| release(&scratch, out, "3.12"));
}

/// A Pages site on a disk with room for two of its files.
#[test]
fn a_pages_site_onto_a_full_disk_names_it_and_a_rerun_with_room_is_the_clean_site() {
    let (scratch, rel) = scratch_with_a_release();
    full_disk_then_room(&["8k"], |out| scratch.run(&pages_args(&rel, BASES[0], out)));
}

/// A fetch into a cache on a disk smaller than the download: exit 1 naming the part file,
/// the full disk and the next step; nothing under the pinned file's name; with room, the
/// next fetch completes the download to the pinned bytes.
#[test]
fn a_fetch_into_a_full_cache_names_it_and_a_rerun_with_room_completes_the_pinned_file() {
    let Some(disk) = Tmpfs::mount("2m") else {
        return;
    };
    let ct2 = fetch_pin::bytes(3 << 20, 7);
    let onednn = fetch_pin::bytes(100_000, 8);
    let (server, scratch) = serve_crates(&ct2, &onednn, Duration::ZERO);
    let cache = disk.path().join("cache");
    let mirror = fetch_pin::mirror(&server);
    let args = fetch_pin::fetch_args(cache.to_str().unwrap(), &mirror, &[]);
    let run = xtask_in(scratch.path(), &args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let part = cache
        .join("partial")
        .join(format!("{}.part", fetch_pin::sha256(&ct2)));
    for needle in [&part.display().to_string(), NO_SPACE, "--cache-dir"] {
        assert!(run.stderr.contains(needle), "`{needle}` in {}", run.stderr);
    }
    let blob = cache.join("sha256").join(fetch_pin::sha256(&ct2));
    assert!(!blob.exists(), "nothing unverified under the pinned name");
    disk.remount("size=16m");
    let rerun = xtask_in(scratch.path(), &args);
    assert_eq!(rerun.code, 0, "{}", rerun.stderr);
    assert_eq!(fs::read(&blob).unwrap(), *ct2);
    assert_eq!(part_files(&cache), Vec::<String>::new());
}

/// A cache on a read-only disk: empty, or with a damaged file, a fetch fails with exit 1 (the
/// disk, not a value given, is at fault: the same cache serves a fetch once it holds every
/// file) naming the cache path and the next step; complete, it serves the fetch without
/// writing. A complete cache of read-only files in read-only folders serves it too.
#[test]
fn a_read_only_cache_is_named_with_the_next_step_and_a_complete_one_still_serves() {
    let Some(disk) = Tmpfs::mount("16m") else {
        return;
    };
    let ct2 = fetch_pin::bytes(300_000, 1);
    let onednn = fetch_pin::bytes(100_000, 2);
    let (server, scratch) = serve_crates(&ct2, &onednn, Duration::ZERO);
    let cache = disk.path().join("cache");
    fs::create_dir_all(&cache).unwrap();
    let mirror = fetch_pin::mirror(&server);
    let args = fetch_pin::fetch_args(cache.to_str().unwrap(), &mirror, &[]);
    let fetch = || xtask_in(scratch.path(), &args);
    let assert_refused = |run: &Run, what: &str| {
        assert_eq!(run.code, 1, "{what}: {}", run.stderr);
        for needle in [
            &cache.display().to_string(),
            "Read-only file system",
            "--cache-dir",
        ] {
            assert!(
                run.stderr.contains(needle),
                "{what}: `{needle}` in {}",
                run.stderr
            );
        }
    };

    disk.remount("ro");
    assert_refused(&fetch(), "empty");
    disk.remount("rw");
    assert_eq!(fetch().code, 0);
    disk.remount("ro");
    let served = fetch();
    assert_eq!(served.code, 0, "complete: {}", served.stderr);
    assert_eq!(
        server.hits(CT2_URL_PATH).len(),
        1,
        "nothing downloaded again"
    );

    disk.remount("rw");
    let blob = cache.join("sha256").join(fetch_pin::sha256(&ct2));
    fs::write(&blob, b"damaged").unwrap();
    disk.remount("ro");
    assert_refused(&fetch(), "damaged");
    disk.remount("rw");
    assert_eq!(fetch().code, 0);

    for (path, mode) in [
        (blob.clone(), 0o444),
        (blob.parent().unwrap().to_path_buf(), 0o555),
        (cache.clone(), 0o555),
    ] {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
    }
    let served = fetch();
    assert_eq!(served.code, 0, "read-only files: {}", served.stderr);
}

// ---------------------------------------------------------------------------------------
// kill -9 at random points.

/// Runs `args` in `root` and kills it with SIGKILL (no cleanup runs) after a delay drawn
/// from `rng`, up to a little more than `clean` (how long a whole run took), so that some
/// runs are killed before they start writing and some after they are done.
fn killed_at_random(root: &Path, args: &[&str], rng: &mut Rng, clean: Duration) {
    let most = clean.as_millis() as usize * 6 / 5 + 1;
    let delay = Duration::from_millis(rng.below(most) as u64);
    let mut child = common::xtask_command(root, args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(delay);
    let _ = child.kill();
    child.wait().unwrap();
}

/// Times one run of `args` in `root`, which must succeed.
fn timed(root: &Path, args: &[&str]) -> Duration {
    let started = Instant::now();
    let run = xtask_in(root, args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    started.elapsed()
}

/// Kills per command; each kill is followed by a run to completion.
const KILLS: usize = 4;

/// The run after a kill (`after`, as "after kill 2") succeeded and [`assert_clean_output`].
fn assert_clean_rerun(rerun: &Run, out: &Path, clean: &BTreeMap<String, Vec<u8>>, after: &str) {
    assert_eq!(rerun.code, 0, "{after}: {}", rerun.stderr);
    assert_clean_output(out, clean, after);
}

/// `bundle` killed at random points, then run again: the output is the clean run's, byte
/// for byte, and the rerun's sweep leaves nothing beside it.
#[test]
fn killed_bundles_rerun_to_the_bytes_of_a_clean_run() {
    let dir = tempfile::tempdir().unwrap();
    let payload = noise("killed bundle", 300 << 10);
    let wheel = common::wheel::linux_wheel(dir.path(), &[("ctranslate2/model.bin", &payload)]);
    let out = dir.path().join("out");
    let args = bundle(&wheel, &out, &[]);
    let took = timed(&repo_root(), &args);
    let clean = contents(&out);
    let mut rng = Rng::seeded("killed_bundles");
    for kill in 0..KILLS {
        killed_at_random(&repo_root(), &args, &mut rng, took);
        let rerun = common::xtask(&args);
        assert_clean_rerun(&rerun, &out, &clean, &format!("after kill {kill}"));
    }
}

/// `release` and `pages` killed at random points: the output is whole or not there (a
/// killed run may have finished), and the next run writes the clean run's bytes and sweeps
/// what the killed one left.
#[test]
fn killed_releases_and_pages_rerun_to_the_bytes_of_a_clean_run() {
    let (scratch, rel) = scratch_with_a_release();
    let release_out = scratch.path().join("target/dist/4.7.1");
    let site = scratch.path().join("sites/site");
    let cases: [(&str, Vec<&str>, &Path); 2] = [
        (
            "release",
            release_args(&release_out, BASES[0]),
            &release_out,
        ),
        ("pages", pages_args(&rel, BASES[0], &site).to_vec(), &site),
    ];
    for (name, args, out) in cases {
        let took = timed(scratch.path(), &args);
        let clean = contents(out);
        let mut rng = Rng::seeded(name);
        for kill in 0..KILLS {
            fs::remove_dir_all(out).unwrap();
            killed_at_random(scratch.path(), &args, &mut rng, took);
            if out.exists() {
                assert!(
                    contents(out) == clean,
                    "{name}: killed once done, but not whole"
                );
                fs::remove_dir_all(out).unwrap();
            }
            let rerun = scratch.run(&args);
            let after = format!("{name} after kill {kill}");
            assert_clean_rerun(&rerun, out, &clean, &after);
        }
    }
}

/// `fetch` killed at random points of a download, then run again: the cache holds the
/// pinned bytes and no part file.
#[test]
fn killed_fetches_rerun_to_the_pinned_bytes() {
    let ct2 = fetch_pin::bytes(2 << 20, 9);
    let onednn = fetch_pin::bytes(50_000, 4);
    let (server, scratch) = serve_crates(&ct2, &onednn, Duration::from_millis(25));
    let mirror = fetch_pin::mirror(&server);
    let clean_cache = tempfile::tempdir().unwrap();
    let took = timed(
        scratch.path(),
        &fetch_pin::fetch_args(clean_cache.path().to_str().unwrap(), &mirror, &[]),
    );
    let mut rng = Rng::seeded("killed_fetches");
    for kill in 0..KILLS {
        let cache = tempfile::tempdir().unwrap();
        let args = fetch_pin::fetch_args(cache.path().to_str().unwrap(), &mirror, &[]);
        killed_at_random(scratch.path(), &args, &mut rng, took);
        let rerun = xtask_in(scratch.path(), &args);
        assert_eq!(rerun.code, 0, "after kill {kill}: {}", rerun.stderr);
        assert!(
            contents(&cache.path().join("sha256")) == contents(&clean_cache.path().join("sha256")),
            "after kill {kill}: not the pinned bytes"
        );
        assert_eq!(
            part_files(cache.path()),
            Vec::<String>::new(),
            "after kill {kill}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// The Windows binary's link copies.

/// One of the four inputs the Windows cpu build unpacks (mkl off), and where its pin is.
struct LinkInput {
    name: &'static str,
    /// The file holding its pin, the pinned sha256 and size, and its `subdir`.
    file: &'static str,
    sha256: &'static str,
    size: &'static str,
    subdir: Option<&'static str>,
    format: ct2v_fetch::unpack::ArchiveFormat,
}

const LINK_INPUTS: [LinkInput; 4] = {
    use ct2v_fetch::unpack::ArchiveFormat::{TarGz, Zip};
    [
        LinkInput {
            name: "ctranslate2-source",
            file: "variants/ctranslate2/4.7.1.toml",
            sha256: "616201b950832f4dd5fe95fd34fb557e3187233641235a5bb98f9432fe513bb1",
            size: "size = 6151405",
            subdir: Some("ct2rs-0.9.17/CTranslate2"),
            format: TarGz,
        },
        LinkInput {
            name: "onednn",
            file: "variants/defaults.toml",
            sha256: "c9422f8af979ab9dca0fc4b58677897208c591a7dddb34bd3bf3963aa4255f21",
            size: "size = 8205358",
            subdir: Some("onednn-src-0.1.0/oneDNN"),
            format: TarGz,
        },
        LinkInput {
            name: "intel-openmp",
            file: "variants/defaults.toml",
            sha256: "8ff899d01a41b92ffe0e618b221ea633127d16df726086082d381c431c31339d",
            size: "size = 32083814",
            subdir: None,
            format: Zip,
        },
        LinkInput {
            name: "msvc-runtime",
            file: "variants/defaults.toml",
            sha256: "89f70d1a37bb64164cdb09d02dd82d6b1400e1310be2995b4ed5a9f23efe2222",
            size: "size = 2052033",
            subdir: None,
            format: Zip,
        },
    ]
};

/// The Windows cpu build's inputs replaced by `archives` (one per [`LINK_INPUTS`], members
/// below its `subdir`), put into `cache`: a scratch checkout whose `build --offline` unpacks
/// them with no download.
fn scratch_unpacking(archives: &[&[Member]; 4], cache: &Path) -> (Scratch, Vec<Vec<u8>>) {
    let scratch = Scratch::new();
    scratch.edit(
        "variants/cpu.toml",
        "\nmkl.enabled = true",
        "\nmkl.enabled = false",
    );
    let mut bytes = Vec::new();
    for (input, members) in LINK_INPUTS.iter().zip(archives) {
        let top = input.subdir.map_or(String::new(), |s| format!("{s}/"));
        let archive = match input.format {
            ct2v_fetch::unpack::ArchiveFormat::Zip => zip_of(&top, members),
            _ => tar_gz_of(&top, members),
        };
        scratch.edit(input.file, input.sha256, &fetch_pin::sha256(&archive));
        scratch.edit(input.file, input.size, &format!("size = {}", archive.len()));
        put_in_cache(cache, &archive);
        bytes.push(archive);
    }
    (scratch, bytes)
}

/// The symbolic links below `dir`.
fn links_below(dir: &Path) -> Vec<String> {
    let mut links = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in fs::read_dir(&at).unwrap().flatten() {
            let kind = entry.file_type().unwrap();
            if kind.is_symlink() {
                links.push(entry.path().display().to_string());
            } else if kind.is_dir() {
                pending.push(entry.path());
            }
        }
    }
    links
}

/// What the unpacker gives `archive` under Windows' rules (links become copies), run here
/// in-process on Linux: the tree the unit tests check, or the refusal's reason.
fn windows_rules(input: &LinkInput, archive: &[u8]) -> Result<BTreeMap<String, Vec<u8>>, String> {
    use ct2v_fetch::unpack::{Limits, unpack};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("archive");
    fs::write(&file, archive).unwrap();
    let out = dir.path().join("out");
    let windows = Limits {
        links_as_copies: true,
        case_insensitive: true,
        ..Limits::default()
    };
    match unpack(
        &file,
        input.format,
        input.subdir,
        &out,
        &windows,
        &Reporter::captured(),
    ) {
        Ok(_) => Ok(contents(&out)),
        Err(e) => Err(e.message(&"")),
    }
}

/// The Windows cpu build (`xtask.exe` under wine) unpacking `archives` up to its last
/// unpack step, offline from a cache that holds them.
fn unpack_under_wine(wine: &WinXtask, archives: &[&[Member]; 4]) -> (Scratch, Vec<Vec<u8>>, Run) {
    let cache = tempfile::tempdir().unwrap();
    let (scratch, bytes) = scratch_unpacking(archives, cache.path());
    let cache_dir = win(cache.path());
    let until = [
        "--compiler-cache",
        "off",
        "--offline",
        "--until",
        "unpack-msvc-runtime",
    ];
    let build = job("build", "cpu", "windows-x86_64", "3.12", &until);
    let args = [&["--cache-dir", &cache_dir][..], &build].concat();
    let run = wine.run(scratch.path(), &args, &[]);
    (scratch, bytes, run)
}

/// Archives with links (to files, to folders, chains of links, to `.`, dangling) unpacked by
/// the real Windows binary: each tree is what the unpacker's Windows rules give (copies, as
/// the unit tests check them), and the links it refuses (out of the tree through another
/// link, a file written through a link, copies past the byte limit) are refused by the
/// binary with the same reason.
#[test]
fn the_windows_binary_copies_links_as_the_unit_tests_promise() {
    let Some(wine) = WinXtask::new() else {
        return;
    };
    let big = vec![0u8; 2 << 20];
    let accepted: [&[Member]; 4] = [
        &[
            Member::File("d/f1", b"one"),
            Member::File("d/sub/f2", b"two"),
            Member::Link("to-file", "d/f1"),
            Member::Link("to-folder", "d"),
            Member::Link("chain", "chain-2"),
            Member::Link("chain-2", "to-file"),
            Member::Link("d/sub/up", "../f1"),
            Member::Link("dangling", "nowhere"),
        ],
        &[
            Member::File("f", b"ab"),
            Member::Link("l00", "."),
            Member::Link("l01", "."),
        ],
        &[
            Member::File("lib/a.dll", b"MZ a"),
            Member::Link("lib/alias.dll", "a.dll"),
            Member::Link("bin", "lib"),
        ],
        &[
            Member::File("x/y/z.txt", b"z"),
            Member::Link("x/here", "."),
            Member::Link("top", "x/y/../y"),
        ],
    ];
    let (scratch, archives, run) = unpack_under_wine(&wine, &accepted);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let deps = scratch.path().join("target/xtask/cpu/windows-x86_64");
    let dests = [
        "src/ctranslate2",
        "deps/onednn",
        "deps/intel-openmp",
        "deps/msvc-runtime",
    ];
    for ((input, archive), dest) in LINK_INPUTS.iter().zip(&archives).zip(dests) {
        let expected = windows_rules(input, archive).unwrap();
        assert_eq!(contents(&deps.join(dest)), expected, "{}", input.name);
        assert_eq!(
            links_below(&deps.join(dest)),
            Vec::<String>::new(),
            "copies, not links"
        );
    }
    // What the unit tests promise, said plainly: copies of files and folders, chains
    // followed, `.` copied as it was when reached, a dangling link left out.
    let tree = |dest: &str| contents(&deps.join(dest));
    let source = tree("src/ctranslate2");
    for (name, bytes) in [
        ("to-file", &b"one"[..]),
        ("chain", b"one"),
        ("chain-2", b"one"),
        ("to-folder/f1", b"one"),
        ("to-folder/sub/f2", b"two"),
        ("d/sub/up", b"one"),
    ] {
        assert_eq!(source.get(name).map(Vec::as_slice), Some(bytes), "{name}");
    }
    assert!(!source.contains_key("dangling"));
    let onednn = tree("deps/onednn");
    let names: Vec<&str> = onednn.keys().map(String::as_str).collect();
    assert_eq!(names, ["f", "l00/f", "l01/f", "l01/l00/f"]);

    // Refused: each its own run, as a refused step ends the build.
    let refusals: [(&[Member], &str); 3] = [
        (
            &[
                Member::Link("a/b/t", "up/.."),
                Member::Link("a/b/up", "../.."),
            ],
            "it links to `up/..`, which is outside the unpacked tree",
        ),
        (
            &[
                Member::File("real/x", b"x"),
                Member::Link("alias", "real"),
                Member::File("alias/y", b"y"),
            ],
            "it would be written through the symbolic link `alias`",
        ),
        (
            &[
                Member::File("big", &big),
                Member::Link("c01", "big"),
                Member::Link("c02", "big"),
                Member::Link("c03", "big"),
                Member::Link("folder", "."),
                Member::Link("folder2", "."),
                Member::Link("folder3", "."),
                Member::Link("folder4", "."),
                Member::Link("folder5", "."),
            ],
            "expands past the limit of 67108864 bytes",
        ),
    ];
    for (members, reason) in refusals {
        let archives: [&[Member]; 4] = [members, accepted[1], accepted[2], accepted[3]];
        let (scratch, bytes, run) = unpack_under_wine(&wine, &archives);
        assert_eq!(run.code, 1, "{reason}: {}", run.stderr);
        let unit = windows_rules(&LINK_INPUTS[0], &bytes[0]).unwrap_err();
        assert!(unit.contains(reason), "the unit's reason: {unit}");
        assert!(run.stderr.contains(reason), "`{reason}` in {}", run.stderr);
        assert!(
            !scratch
                .path()
                .join("target/xtask/cpu/windows-x86_64/src/ctranslate2")
                .exists(),
            "{reason}: nothing unpacked"
        );
    }
}
