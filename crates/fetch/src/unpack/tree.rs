//! The tree an archive is unpacked into: a staging folder and, in memory, what each
//! relative path already is, so that every entry is checked against what this unpack wrote
//! (links inside, no clashes, Windows' names and lengths) without following anything on disk.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use super::{
    ArchiveFormat, Limits, MIN_ENTRY_BYTES, Refusal, UnpackError, Unpacked, components,
    is_absolute, resolve,
};

/// What is on disk under the staging root, by `/`-joined relative path. Kept in memory so
/// that links are checked against what this unpack wrote, without following anything on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Node {
    Dir,
    /// A file: its index in `Tree::contents` (hard links share one).
    File(usize),
    Symlink(String),
}

pub(super) struct Tree<'a> {
    pub(super) archive: &'a Path,
    pub(super) format: ArchiveFormat,
    pub(super) root: &'a Path,
    pub(super) subdir: Option<Vec<String>>,
    pub(super) subdir_name: Option<String>,
    pub(super) limits: &'a Limits,
    pub(super) nodes: HashMap<String, Node>,
    /// Lower-cased relative path → the first entry's spelling (`Limits::case_insensitive`).
    pub(super) folded: HashMap<String, String>,
    /// With `subdir = "*"`: the one top-level folder seen so far.
    pub(super) single_top: Option<String>,
    /// The destination's length in characters (entries are checked against
    /// `Limits::longest_path` where they will end up, not in the staging folder).
    pub(super) dest_length: usize,
    pub(super) dest: &'a Path,
    /// (entry name, relative path) of every symlink, checked again once all are in.
    pub(super) symlinks: Vec<(String, Vec<String>)>,
    pub(super) dir_modes: Vec<(PathBuf, u32)>,
    /// Files, folders and links made, counted against `Limits::max_entries`.
    pub(super) entries: u64,
    /// What counts against `Limits::max_bytes` (see there): more than `unpacked.bytes`.
    pub(super) charged: u64,
    pub(super) unpacked: Unpacked,
    /// Each file's content: its size and how many paths have it (a hard link adds one), so
    /// that `unpacked` stays what is on disk when a later entry replaces a file.
    pub(super) contents: Vec<(u64, u64)>,
    pub(super) subdir_found: bool,
    pub(super) top_level: Vec<String>,
    pub(super) more_top_level: bool,
    pub(super) buffer: Vec<u8>,
}

impl Tree<'_> {
    pub(super) fn read_error(&self, source: io::Error) -> UnpackError {
        UnpackError::Read {
            archive: self.archive.to_path_buf(),
            format: self.format,
            source,
        }
    }

    pub(super) fn write_error(&self, path: &Path, source: io::Error) -> UnpackError {
        UnpackError::Write {
            archive: self.archive.to_path_buf(),
            path: path.to_path_buf(),
            source,
        }
    }

    pub(super) fn refuse(&self, entry: &str, reason: Refusal) -> UnpackError {
        UnpackError::Refused {
            archive: self.archive.to_path_buf(),
            entry: entry.to_string(),
            reason,
        }
    }

    pub(super) fn too_many_entries(&self) -> UnpackError {
        UnpackError::TooManyEntries {
            archive: self.archive.to_path_buf(),
            limit: self.limits.max_entries,
            link: None,
        }
    }

    pub(super) fn too_large(&self, entry: &str) -> UnpackError {
        UnpackError::TooLarge {
            archive: self.archive.to_path_buf(),
            entry: entry.to_string(),
            limit: self.limits.max_bytes,
        }
    }

    pub(super) fn count_entry(&mut self) -> Result<(), UnpackError> {
        self.entries = self.entries.saturating_add(1);
        if self.entries > self.limits.max_entries {
            return Err(self.too_many_entries());
        }
        Ok(())
    }

    /// Counts `bytes` (at least [`MIN_ENTRY_BYTES`]) of entry `name` against the byte limit.
    pub(super) fn charge(&mut self, name: &str, bytes: u64) -> Result<(), UnpackError> {
        self.charged = self.charged.saturating_add(bytes.max(MIN_ENTRY_BYTES));
        if self.charged > self.limits.max_bytes {
            return Err(self.too_large(name));
        }
        Ok(())
    }

    fn is_any_top(&self) -> bool {
        matches!(self.subdir.as_deref(), Some([any]) if any == super::ANY_TOP_FOLDER)
    }

    /// The path below the root where entry `name` goes, or `None` when it is skipped (outside
    /// `subdir`, or the root folder itself: `./`, as `tar -C dir .` writes first).
    pub(super) fn locate(
        &mut self,
        name: &str,
        is_dir: bool,
    ) -> Result<Option<Vec<String>>, UnpackError> {
        let parts = components(name).map_err(|r| self.refuse(name, r))?;
        if let Some(first) = parts.first()
            && !self.top_level.contains(first)
        {
            if self.top_level.len() < 10 {
                self.top_level.push(first.clone());
            } else {
                self.more_top_level = true;
            }
        }
        let rel = if self.is_any_top() {
            // `*`: the archive's one top-level folder, whatever its name.
            let Some((top, below)) = parts.split_first() else {
                return self.root_entry(name, is_dir);
            };
            match &self.single_top {
                Some(seen) if seen != top => {
                    let other = seen.clone();
                    return Err(self.refuse(name, Refusal::SecondTopFolder { other }));
                }
                Some(_) => {}
                None if below.is_empty() && !is_dir => {
                    let other = String::new();
                    return Err(self.refuse(name, Refusal::SecondTopFolder { other }));
                }
                None => self.single_top = Some(top.clone()),
            }
            self.subdir_found = true;
            below.to_vec()
        } else {
            match self.below_subdir(&parts) {
                Some(below) => {
                    self.subdir_found |= self.subdir.is_some();
                    below.to_vec()
                }
                None => return Ok(None),
            }
        };
        if rel.is_empty() {
            return self.root_entry(name, is_dir);
        }
        Ok(Some(rel))
    }

    /// An entry naming the root itself: a folder is skipped, anything else refused.
    fn root_entry(&self, name: &str, is_dir: bool) -> Result<Option<Vec<String>>, UnpackError> {
        if is_dir {
            Ok(None)
        } else {
            Err(self.refuse(name, Refusal::ReplacesRoot))
        }
    }

    /// `parts` (an archive path) below `subdir`, or `None` when it is outside it. With `*`,
    /// below the top folder seen so far.
    fn below_subdir<'p>(&self, parts: &'p [String]) -> Option<&'p [String]> {
        match &self.subdir {
            None => Some(parts),
            Some(_) if self.is_any_top() => {
                let (top, below) = parts.split_first()?;
                (self.single_top.as_ref() == Some(top)).then_some(below)
            }
            Some(sub) => parts.strip_prefix(sub.as_slice()),
        }
    }

    /// Creates the missing parents of `rel` and clears the way for a new entry there,
    /// refusing to go through a symlink or to turn a folder into something else.
    pub(super) fn prepare(
        &mut self,
        name: &str,
        rel: &[String],
        is_dir: bool,
    ) -> Result<PathBuf, UnpackError> {
        let Some((last, parents)) = rel.split_last() else {
            return Err(self.refuse(name, Refusal::ReplacesRoot));
        };
        let mut path = self.root.to_path_buf();
        for depth in 1..=parents.len() {
            let key = parents[..depth].join("/");
            path.push(&parents[depth - 1]);
            match self.nodes.get(&key) {
                Some(Node::Dir) => {}
                Some(Node::Symlink(_)) => {
                    return Err(self.refuse(name, Refusal::UnderSymlink { link: key }));
                }
                Some(Node::File(_)) => {
                    return Err(self.refuse(name, Refusal::Clash { path: key }));
                }
                None => {
                    self.count_entry()?;
                    self.charge(name, 0)?;
                    fs::create_dir(&path).map_err(|e| self.write_error(&path, e))?;
                    self.nodes.insert(key, Node::Dir);
                }
            }
        }
        path.push(last);
        let key = rel.join("/");
        self.check_windows_limits(name, &key)?;
        match (self.nodes.get(&key), is_dir) {
            (None, _) | (Some(Node::Dir), true) => {}
            (Some(Node::Dir), false) | (Some(_), true) => {
                return Err(self.refuse(name, Refusal::Clash { path: key }));
            }
            (Some(node), false) => {
                // A later entry of the same name wins, as with tar itself. A symlink that is
                // to become a copy is not on disk yet.
                let on_disk = !(matches!(node, Node::Symlink(_)) && self.limits.copies_links());
                if on_disk {
                    fs::remove_file(&path).map_err(|e| self.write_error(&path, e))?;
                }
                if let Some(Node::File(content)) = self.nodes.remove(&key) {
                    let (size, paths) = &mut self.contents[content];
                    *paths = paths.saturating_sub(1);
                    self.unpacked.files = self.unpacked.files.saturating_sub(1);
                    if *paths == 0 {
                        self.unpacked.bytes = self.unpacked.bytes.saturating_sub(*size);
                    }
                }
            }
        }
        Ok(path)
    }

    /// The limits of a Windows file system, for the entry at `key`: its full length, and no
    /// other entry of the same name but for case.
    pub(super) fn check_windows_limits(
        &mut self,
        name: &str,
        key: &str,
    ) -> Result<(), UnpackError> {
        let length = self
            .dest_length
            .saturating_add(1)
            .saturating_add(key.chars().count());
        if let Some(longest) = self.limits.longest_path
            && length > longest
        {
            let path =
                ct2v_support::paths::shown(&ct2v_support::paths::join_slashed(self.dest, key));
            return Err(self.refuse(name, Refusal::TooLong { path, length }));
        }
        if self.limits.case_insensitive {
            let folded = key.to_lowercase();
            match self.folded.get(&folded) {
                Some(first) if first != key => {
                    let other = first.clone();
                    return Err(self.refuse(name, Refusal::CaseClash { other }));
                }
                Some(_) => {}
                None => {
                    self.folded.insert(folded, key.to_string());
                }
            }
        }
        Ok(())
    }

    pub(super) fn add_dir(
        &mut self,
        name: &str,
        rel: &[String],
        mode: u32,
    ) -> Result<(), UnpackError> {
        let path = self.prepare(name, rel, true)?;
        let key = rel.join("/");
        if !self.nodes.contains_key(&key) {
            self.charge(name, 0)?;
            fs::create_dir(&path).map_err(|e| self.write_error(&path, e))?;
            self.nodes.insert(key, Node::Dir);
        }
        // Applied at the end, so a read-only folder does not stop its own files landing.
        self.dir_modes.push((path, mode));
        Ok(())
    }

    pub(super) fn add_file(
        &mut self,
        name: &str,
        rel: &[String],
        mode: u32,
        data: &mut dyn Read,
    ) -> Result<(), UnpackError> {
        let path = self.prepare(name, rel, false)?;
        // `create_new` never follows a symlink that might be at `path`.
        let mut file =
            ct2v_support::regular_file::open(&path, ct2v_support::regular_file::Mode::CreateNew)
                .map_err(|e| self.write_error(&path, e))?;
        let content = self.contents.len();
        self.contents.push((0, 1));
        self.nodes.insert(rel.join("/"), Node::File(content));
        let remaining = self.limits.max_bytes.saturating_sub(self.charged);
        // One byte more than allowed, so that going over the limit shows.
        let mut data = data.take(remaining.saturating_add(1));
        let mut written = 0u64;
        loop {
            let n = match data.read(&mut self.buffer) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.read_error(e)),
            };
            file.write_all(&self.buffer[..n])
                .map_err(|e| self.write_error(&path, e))?;
            written = written.saturating_add(n as u64);
        }
        if written > remaining {
            return Err(self.too_large(name));
        }
        self.charge(name, written)?;
        self.contents[content].0 = written;
        self.unpacked.bytes = self.unpacked.bytes.saturating_add(written);
        self.unpacked.files += 1;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // The owner keeps read and write, so the tree can be patched and deleted later;
            // setuid, setgid and sticky bits are dropped.
            let permissions = fs::Permissions::from_mode(mode & 0o777 | 0o600);
            file.set_permissions(permissions)
                .map_err(|e| self.write_error(&path, e))?;
        }
        #[cfg(not(unix))]
        let _ = mode;
        Ok(())
    }

    pub(super) fn add_symlink(
        &mut self,
        name: &str,
        rel: &[String],
        target: &str,
    ) -> Result<(), UnpackError> {
        if is_absolute(target) {
            let target = target.to_string();
            return Err(self.refuse(name, Refusal::LinkAbsolute { target }));
        }
        self.check_symlink(name, rel, target)?;
        let path = self.prepare(name, rel, false)?;
        self.charge(name, 0)?;
        // Windows: a symlink needs a privilege (SeCreateSymbolicLinkPrivilege, or Developer
        // Mode) that an ordinary account lacks (error 1314), so each in-tree link becomes a
        // copy of what it points to, made in `finish` once every entry is in.
        #[cfg(unix)]
        if !self.limits.copies_links() {
            std::os::unix::fs::symlink(target, &path).map_err(|e| self.write_error(&path, e))?;
        }
        let _ = path;
        self.nodes
            .insert(rel.join("/"), Node::Symlink(target.to_string()));
        self.symlinks.push((name.to_string(), rel.to_vec()));
        Ok(())
    }

    pub(super) fn check_symlink(
        &self,
        name: &str,
        rel: &[String],
        target: &str,
    ) -> Result<(), UnpackError> {
        let folder = rel.split_last().map_or(&[][..], |(_, folder)| folder);
        match resolve(&self.nodes, folder, target) {
            Some(_) => Ok(()),
            None => {
                let target = target.to_string();
                Err(self.refuse(name, Refusal::LinkEscapes { target }))
            }
        }
    }

    /// `target` is a path from the top of the archive, as tar writes hard links.
    pub(super) fn add_hardlink(
        &mut self,
        name: &str,
        rel: &[String],
        target: &str,
    ) -> Result<(), UnpackError> {
        let owned = || target.to_string();
        let parts = components(target).map_err(|r| {
            let reason = match r {
                Refusal::Absolute => Refusal::LinkAbsolute { target: owned() },
                _ => Refusal::LinkEscapes { target: owned() },
            };
            self.refuse(name, reason)
        })?;
        let Some(target_rel) = self.below_subdir(&parts) else {
            return Err(self.refuse(name, Refusal::LinkEscapes { target: owned() }));
        };
        let target_key = target_rel.join("/");
        let Some(&Node::File(content)) = self.nodes.get(&target_key) else {
            return Err(self.refuse(name, Refusal::HardlinkMissing { target: owned() }));
        };
        if target_rel == rel {
            return Err(self.refuse(name, Refusal::HardlinkMissing { target: owned() }));
        }
        let path = self.prepare(name, rel, false)?;
        let original = self.root.join(target_rel.iter().collect::<PathBuf>());
        // Whoever reads or copies the tree sees the file's bytes once more.
        let size = fs::metadata(&original)
            .map_err(|e| self.write_error(&original, e))?
            .len();
        self.charge(name, size)?;
        fs::hard_link(&original, &path).map_err(|e| self.write_error(&path, e))?;
        self.contents[content].1 += 1;
        self.nodes.insert(rel.join("/"), Node::File(content));
        self.unpacked.files += 1;
        Ok(())
    }

    /// Each symlink, checked to stay in the tree, replaced by a copy of the file or folder it
    /// points to as it is on disk then (a dangling one by nothing). Every file and folder of
    /// a copy counts against the limits, as an entry of the archive does.
    pub(super) fn copy_links(&mut self) -> Result<(), UnpackError> {
        let mut done = std::collections::HashSet::new();
        for (name, rel) in self.symlinks.clone() {
            let key = rel.join("/");
            // A link replaced by a later one of the same name is copied once, as the last.
            let Some(Node::Symlink(target)) = self.nodes.get(&key) else {
                continue;
            };
            if !done.insert(key) {
                continue;
            }
            let Some((_, folder)) = rel.split_last() else {
                continue;
            };
            let Some(to) = resolve(&self.nodes, folder, target) else {
                continue;
            };
            let source = below_path(self.root, &to);
            if fs::symlink_metadata(&source).is_err() {
                continue;
            }
            // Listed before anything is made, so that a link to a folder holding it copies
            // that folder as it was, not the copy growing inside it.
            for (below, is_dir) in self.listing(&source, to.is_empty(), &name)? {
                let parts: Vec<&str> = rel
                    .iter()
                    .map(String::as_str)
                    .chain(below.iter().map(String::as_str))
                    .collect();
                let key = parts.join("/");
                let copy = self.root.join(&key);
                let from = below_path(&source, &below);
                self.entries = self.entries.saturating_add(1);
                if self.entries > self.limits.max_entries {
                    return Err(UnpackError::TooManyEntries {
                        archive: self.archive.to_path_buf(),
                        limit: self.limits.max_entries,
                        link: Some(name),
                    });
                }
                self.check_windows_limits(&name, &key)?;
                if is_dir {
                    self.charge(&name, 0)?;
                    fs::create_dir(&copy).map_err(|e| self.write_error(&copy, e))?;
                } else {
                    let size = fs::metadata(&from)
                        .map_err(|e| self.write_error(&from, e))?
                        .len();
                    self.charge(&name, size)?;
                    // The size asked before, not what `fs::copy` returns: under wine that is 0.
                    ct2v_support::regular_file::copy(&from, &copy)
                        .map_err(|e| self.write_error(&copy, e))?;
                    self.unpacked.bytes = self.unpacked.bytes.saturating_add(size);
                    self.unpacked.files += 1;
                }
            }
        }
        Ok(())
    }

    /// `source` and, when it is a folder, everything below it, parents first: (path below
    /// `source`, is a folder). Stops at the entry limit: a listing past it could not be copied.
    /// At the root (`is_root`) the staging folder's marker is no part of the tree.
    fn listing(
        &self,
        source: &Path,
        is_root: bool,
        link: &str,
    ) -> Result<Vec<(Vec<String>, bool)>, UnpackError> {
        let mut out = Vec::new();
        let mut pending = vec![Vec::<String>::new()];
        while let Some(below) = pending.pop() {
            let at = below_path(source, &below);
            let meta = fs::symlink_metadata(&at).map_err(|e| self.write_error(&at, e))?;
            let is_dir = meta.is_dir();
            out.push((below.clone(), is_dir));
            if out.len() as u64 > self.limits.max_entries.saturating_sub(self.entries) {
                return Err(UnpackError::TooManyEntries {
                    archive: self.archive.to_path_buf(),
                    limit: self.limits.max_entries,
                    link: Some(link.to_string()),
                });
            }
            if is_dir {
                let mut names = Vec::new();
                for entry in fs::read_dir(&at).map_err(|e| self.write_error(&at, e))? {
                    let entry = entry.map_err(|e| self.write_error(&at, e))?;
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if !(is_root && below.is_empty() && name == ct2v_support::staging::MARKER) {
                        names.push(name);
                    }
                }
                names.sort();
                for child in names.into_iter().rev() {
                    let mut next = below.clone();
                    next.push(child);
                    pending.push(next);
                }
            }
        }
        Ok(out)
    }

    /// The checks that need every entry: the subdir was there, and no symlink leaves the tree
    /// through another one (`a/up -> ..` then `a/b -> up/..`). Then links become copies where
    /// they must, and folder modes are applied.
    pub(super) fn finish(mut self) -> Result<Unpacked, UnpackError> {
        if let (Some(subdir), false) = (&self.subdir_name, self.subdir_found) {
            let mut top: Vec<String> = self
                .top_level
                .iter()
                .map(|t| format!("`{}`", super::escaped(t)))
                .collect();
            if self.more_top_level {
                top.push("…".to_string());
            }
            let top = if top.is_empty() {
                "none, the archive is empty".to_string()
            } else {
                top.join(", ")
            };
            return Err(UnpackError::NoSubdir {
                archive: self.archive.to_path_buf(),
                subdir: subdir.clone(),
                top,
            });
        }
        for (name, rel) in &self.symlinks {
            if let Some(Node::Symlink(target)) = self.nodes.get(&rel.join("/")) {
                self.check_symlink(name, rel, target)?;
            }
        }
        if self.limits.copies_links() {
            self.copy_links()?;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            for (path, mode) in &self.dir_modes {
                fs::set_permissions(path, fs::Permissions::from_mode(mode & 0o777 | 0o700))
                    .map_err(|e| self.write_error(path, e))?;
            }
            fs::set_permissions(self.root, fs::Permissions::from_mode(0o755))
                .map_err(|e| self.write_error(self.root, e))?;
        }
        Ok(self.unpacked)
    }
}

/// `base` joined with `below` (none: `base` itself, without the trailing separator that
/// joining "" adds, which Windows refuses after a file's name).
fn below_path(base: &Path, below: &[String]) -> PathBuf {
    below
        .iter()
        .fold(base.to_path_buf(), |path, part| path.join(part))
}
