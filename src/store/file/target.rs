//! Where an output goes, and writing it without damaging what is there.
//!
//! An output path is one of three things, decided when the command starts:
//!
//! - a regular file, or a path that does not exist yet: **replaced atomically**. The bytes go to a
//!   temporary file in the same folder (`.NAME.tmp-PID-SEQ`), which is renamed over the path only
//!   when complete, so a failed, interrupted or killed run leaves the old file (or none), never half
//!   a file;
//! - a symbolic link: **followed**. Its final target is replaced atomically as above (the temporary
//!   file sits beside the target) and the link stays a link;
//! - a character device, a FIFO or another special file (`/dev/null`, `/dev/stdout`, a named pipe),
//!   or `-` for standard output: **streamed**. It is opened for writing, without truncating or
//!   replacing it, and written as the bytes come; a reader sees them at once.
//!
//! [`same_file`] tells whether two paths name one file (device and inode, following links), so that
//! an output is never the input it is made from.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::readahead::{remove_stale_temp_files, temp_name, TempFile};

/// How an output path is written (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Standard output.
    Stdout,
    /// A regular file or a new path, after following links: replaced atomically.
    Replace(PathBuf),
    /// A character device, FIFO or other special file: opened for writing and streamed to.
    Stream(PathBuf),
}

impl Target {
    /// What `path` is; `-` is standard output.
    pub fn resolve(path: &Path) -> io::Result<Target> {
        if path.as_os_str() == "-" {
            return Ok(Target::Stdout);
        }
        let path = follow_links(path)?;
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "it is a directory",
            )),
            Ok(m) if m.is_file() => Ok(Target::Replace(path)),
            Ok(_) => Ok(Target::Stream(path)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Target::Replace(path)),
            Err(e) => Err(e),
        }
    }

    /// The folder and file name a replaced target's temporary files go beside.
    pub(crate) fn beside(&self) -> Option<(PathBuf, String)> {
        let Target::Replace(path) = self else {
            return None;
        };
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let name = path.file_name()?.to_string_lossy().into_owned();
        Some((dir, name))
    }

    /// A temporary file for the new contents of a replaced target, created now (which proves that
    /// the folder takes files); stale ones a killed run left beside it are removed first.
    pub(crate) fn create_temp(&self) -> io::Result<Option<TempFile>> {
        let Some((dir, name)) = self.beside() else {
            return Ok(None);
        };
        remove_stale_temp_files(&dir, Some(&name));
        let tmp = TempFile::new(temp_name(&dir, Some(&name), "tmp"));
        File::create(&tmp.0)?;
        Ok(Some(tmp))
    }

    /// Opens the sink the contents are written to: the temporary file `tmp` of a replaced target
    /// (see [`Target::create_temp`]), the special file, or standard output.
    pub(crate) fn sink(&self, tmp: Option<&TempFile>) -> io::Result<Box<dyn Write>> {
        Ok(match (self, tmp) {
            (Target::Replace(_), Some(t)) => Box::new(File::create(&t.0)?),
            (Target::Replace(p), None) => Box::new(File::create(p)?),
            // No create, no truncate: a device or a pipe takes the bytes as they come.
            (Target::Stream(p), _) => Box::new(OpenOptions::new().write(true).open(p)?),
            (Target::Stdout, _) => Box::new(io::stdout().lock()),
        })
    }

    /// Makes the written temporary file the target (a rename in one folder), keeping the mode of
    /// the file it replaces. Nothing to do for a stream.
    pub(crate) fn finish(&self, tmp: Option<TempFile>) -> io::Result<()> {
        if let (Target::Replace(path), Some(tmp)) = (self, tmp) {
            if let Ok(old) = std::fs::metadata(path) {
                let _ = std::fs::set_permissions(&tmp.0, old.permissions());
            }
            File::open(&tmp.0)?.sync_all()?;
            std::fs::rename(&tmp.0, path)?;
            tmp.keep();
        }
        Ok(())
    }

    /// Whether this is standard output or a path to it.
    pub fn is_stdout(&self) -> bool {
        matches!(self, Target::Stdout)
    }
}

/// Writes `bytes` to `path` as the module doc says: a regular file atomically, a special file as a
/// stream, `-` to standard output.
pub fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = Target::resolve(path)?;
    let tmp = target.create_temp()?;
    let mut sink = target.sink(tmp.as_ref())?;
    sink.write_all(bytes)?;
    sink.flush()?;
    drop(sink);
    target.finish(tmp)
}

/// `path` with every symbolic link along its last component followed (at most 40, as the kernel
/// does); a link whose target does not exist yet gives that target.
pub fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(path),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Whether `a` and `b` name one file: the same device and inode (links followed, so a symbolic or
/// hard link to a file is that file), or, when neither exists yet, the same place.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        (Err(_), Err(_)) => match (place(a), place(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
        _ => false,
    }
}

/// Whether `path` is a character device (`/dev/null`): writing it twice harms nothing.
pub fn is_char_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_char_device())
}

/// A path that does not exist yet as its canonical folder and its name.
fn place(path: &Path) -> Option<PathBuf> {
    let path = follow_links(path).ok()?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let dir = std::fs::canonicalize(dir.unwrap_or(Path::new("."))).ok()?;
    Some(dir.join(path.file_name()?))
}
