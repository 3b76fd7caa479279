//! The tree an archive is unpacked into: a staging folder and, in memory, what each
//! relative path already is, so that every entry is checked against what this unpack wrote
//! (links inside, no clashes, Windows' names and lengths) without following anything on disk.

use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use super::{Format, Limits, Refusal, UnpackError, Unpacked, components, is_absolute, resolve};

/// What is on disk under the staging root, by `/`-joined relative path. Kept in memory so
/// that links are checked against what this unpack wrote, without following anything on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Node {
    Dir,
    File,
    Symlink(String),
}

pub(super) struct Tree<'a> {
    pub(super) archive: &'a Path,
    pub(super) format: Format,
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
    pub(super) entries: u64,
    pub(super) unpacked: Unpacked,
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
        }
    }

    pub(super) fn count_entry(&mut self) -> Result<(), UnpackError> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(self.too_many_entries());
        }
        Ok(())
    }

    /// The path below the root where entry `name` goes, or `None` when it is skipped (outside
    /// `subdir`, or the root folder itself).
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
        let rel = match &self.subdir {
            None => parts,
            // `*`: the archive's one top-level folder, whatever its name.
            Some(sub) if sub.len() == 1 && sub[0] == super::ANY_TOP_FOLDER => {
                let top = &parts[0];
                match &self.single_top {
                    Some(seen) if seen != top => {
                        let other = seen.clone();
                        return Err(self.refuse(name, Refusal::SecondTopFolder { other }));
                    }
                    Some(_) => {}
                    None if parts.len() == 1 && !is_dir => {
                        return Err(self.refuse(
                            name,
                            Refusal::SecondTopFolder {
                                other: String::new(),
                            },
                        ));
                    }
                    None => self.single_top = Some(top.clone()),
                }
                self.subdir_found = true;
                parts[1..].to_vec()
            }
            Some(sub) if parts.starts_with(sub) => {
                self.subdir_found = true;
                parts[sub.len()..].to_vec()
            }
            Some(_) => return Ok(None),
        };
        match (rel.is_empty(), is_dir) {
            (false, _) => Ok(Some(rel)),
            (true, true) => Ok(None),
            (true, false) => Err(self.refuse(name, Refusal::ReplacesRoot)),
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
        let mut path = self.root.to_path_buf();
        for depth in 1..rel.len() {
            let key = rel[..depth].join("/");
            path.push(&rel[depth - 1]);
            match self.nodes.get(&key) {
                Some(Node::Dir) => {}
                Some(Node::Symlink(_)) => {
                    return Err(self.refuse(name, Refusal::UnderSymlink { link: key }));
                }
                Some(Node::File) => return Err(self.refuse(name, Refusal::Clash { path: key })),
                None => {
                    fs::create_dir(&path).map_err(|e| self.write_error(&path, e))?;
                    self.nodes.insert(key, Node::Dir);
                }
            }
        }
        path.push(&rel[rel.len() - 1]);
        let key = rel.join("/");
        self.check_windows_limits(name, &key)?;
        match (self.nodes.get(&key), is_dir) {
            (None, _) | (Some(Node::Dir), true) => {}
            (Some(Node::Dir), false) | (Some(_), true) => {
                return Err(self.refuse(name, Refusal::Clash { path: key }));
            }
            (Some(_), false) => {
                // A later entry of the same name wins, as with tar itself.
                fs::remove_file(&path).map_err(|e| self.write_error(&path, e))?;
                self.nodes.remove(&key);
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
        let length = self.dest_length + 1 + key.chars().count();
        if let Some(longest) = self.limits.longest_path
            && length > longest
        {
            let path = crate::paths::shown(&crate::paths::join_slashed(self.dest, key));
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
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| self.write_error(&path, e))?;
        self.nodes.insert(rel.join("/"), Node::File);
        let remaining = self.limits.max_bytes - self.unpacked.bytes;
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
            written += n as u64;
        }
        if written > remaining {
            return Err(UnpackError::TooLarge {
                archive: self.archive.to_path_buf(),
                entry: name.to_string(),
                limit: self.limits.max_bytes,
            });
        }
        self.unpacked.bytes += written;
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
        #[cfg(unix)]
        std::os::unix::fs::symlink(target, &path).map_err(|e| self.write_error(&path, e))?;
        // Windows: a symlink needs a privilege (SeCreateSymbolicLinkPrivilege, or Developer
        // Mode) that an ordinary account lacks (error 1314), so each in-tree link becomes a
        // copy of what it points to, made in `finish` once every entry is in.
        #[cfg(not(unix))]
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
        match resolve(&self.nodes, &rel[..rel.len() - 1], target) {
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
        let target_rel = match &self.subdir {
            None => &parts[..],
            Some(sub) if parts.starts_with(sub) => &parts[sub.len()..],
            Some(_) => {
                return Err(self.refuse(name, Refusal::LinkEscapes { target: owned() }));
            }
        };
        let target_key = target_rel.join("/");
        if self.nodes.get(&target_key) != Some(&Node::File) || target_rel == rel {
            return Err(self.refuse(name, Refusal::HardlinkMissing { target: owned() }));
        }
        let path = self.prepare(name, rel, false)?;
        let original = self.root.join(target_rel.iter().collect::<PathBuf>());
        fs::hard_link(&original, &path).map_err(|e| self.write_error(&path, e))?;
        self.nodes.insert(rel.join("/"), Node::File);
        self.unpacked.files += 1;
        Ok(())
    }

    /// Each symlink, checked to stay in the tree, replaced by a copy of the file or folder it
    /// points to (a dangling one by nothing); the bytes count against the limits.
    #[cfg(not(unix))]
    pub(super) fn copy_symlinks(&mut self) -> Result<(), UnpackError> {
        for (name, rel) in self.symlinks.clone() {
            let Some(Node::Symlink(target)) = self.nodes.get(&rel.join("/")) else {
                continue;
            };
            let Some(to) = resolve(&self.nodes, &rel[..rel.len() - 1], target) else {
                continue;
            };
            let (from, dest) = (self.root.join(to.join("/")), self.root.join(rel.join("/")));
            let pairs = if from.is_dir() {
                let files = crate::fsx::files_below(&from)
                    .map_err(|e| self.write_error(&dest, io::Error::other(format!("{e:#}"))))?;
                files
                    .into_iter()
                    .map(|(r, p)| (p, crate::paths::join_slashed(&dest, &r)))
                    .collect()
            } else {
                vec![(from, dest)]
            };
            for (source, copy) in pairs {
                let Ok(meta) = fs::metadata(&source) else {
                    continue;
                };
                self.unpacked.bytes += meta.len();
                if self.unpacked.bytes > self.limits.max_bytes {
                    return Err(UnpackError::TooLarge {
                        archive: self.archive.to_path_buf(),
                        entry: name,
                        limit: self.limits.max_bytes,
                    });
                }
                if let Some(parent) = copy.parent() {
                    fs::create_dir_all(parent).map_err(|e| self.write_error(parent, e))?;
                }
                fs::copy(&source, &copy).map_err(|e| self.write_error(&copy, e))?;
            }
        }
        Ok(())
    }

    /// The checks that need every entry: the subdir was there, and no symlink leaves the tree
    /// through another one (`a/up -> ..` then `a/b -> up/..`). Then folder modes are applied.
    #[cfg_attr(unix, allow(unused_mut))] // mutated only where links become copies
    pub(super) fn finish(mut self) -> Result<Unpacked, UnpackError> {
        if let (Some(subdir), false) = (&self.subdir_name, self.subdir_found) {
            let mut top: Vec<String> = self.top_level.iter().map(|t| format!("`{t}`")).collect();
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
        #[cfg(not(unix))]
        self.copy_symlinks()?;
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
