//! Files the program writes (reports, rosters, punch files, archives, metrics), written whole
//! or not at all.
//!
//! Every file goes to a temporary file in the directory of its final name, is synced, renamed
//! over the final name, and the directory is synced. Until the rename, the final name holds
//! what it held before (a previous report stays complete); a failure at any step (a full disk,
//! a read-only directory) removes the temporary file. The temporary name is unique to the
//! writer (`.<name>.<pid>.<n>.tmp`, created exclusively), so two writers of one name never
//! write into each other's file: the last rename wins, whole.
//!
//! A file written over keeps its permission bits; a new one gets the process's umask (0644
//! under the usual 022), or 0600 when asked ([`NewFile::private_at`]). A symbolic link is written
//! through: its target is replaced, not the link. A final name that is not a regular file (a
//! device such as `/dev/null`, a named pipe) cannot be renamed over: it is written in place.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::{Context, Result};

/// A file being written under a temporary name; [`NewFile::commit`] puts it in place, dropping
/// it without a commit removes it.
#[derive(Debug)]
pub(crate) struct NewFile {
    /// The final name (a link's target when the name is a link).
    path: PathBuf,
    /// `None` when the final name is written in place (a device, a pipe).
    tmp: Option<PathBuf>,
    file: File,
    committed: bool,
}

/// Counts the temporary names this process took, so that two files of one name written by
/// one process (threads) differ too.
static TAKEN: AtomicU32 = AtomicU32::new(0);

impl NewFile {
    /// A new file for `path`, with the umask's mode (or the mode of the file it replaces).
    pub(crate) fn create(path: &Path) -> io::Result<NewFile> {
        NewFile::open(path, 0o666, None)
    }

    /// A private file written under a temporary name the caller chose (truncated if it is
    /// there): `archive`'s `<file>.partial`, which an archive never written over may keep.
    pub(crate) fn private_at(path: &Path, tmp: PathBuf) -> io::Result<NewFile> {
        NewFile::open(path, 0o600, Some(tmp))
    }

    fn open(path: &Path, mode: u32, tmp: Option<PathBuf>) -> io::Result<NewFile> {
        let path = final_name(path)?;
        let before = fs::metadata(&path).ok();
        if before.as_ref().is_some_and(|m| !m.is_file() && !m.is_dir()) {
            return Ok(NewFile {
                file: File::create(&path)?,
                path,
                tmp: None,
                committed: false,
            });
        }
        let (tmp, file) = match tmp {
            Some(tmp) => {
                let file = OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .mode(mode)
                    .open(&tmp)?;
                (tmp, file)
            }
            None => unique_temporary(&path, mode)?,
        };
        let new = NewFile {
            path,
            tmp: Some(tmp),
            file,
            committed: false,
        };
        if let Some(m) = before.filter(fs::Metadata::is_file) {
            new.file
                .set_permissions(Permissions::from_mode(m.permissions().mode() & 0o7777))?;
        }
        Ok(new)
    }

    /// Sync the file, rename it over its final name and sync the directory. On an error the
    /// temporary file is removed (when `self` drops) and the final name is as it was.
    pub(crate) fn commit(mut self) -> io::Result<()> {
        self.file.flush()?;
        let Some(tmp) = &self.tmp else {
            self.committed = true;
            return Ok(());
        };
        self.file.sync_all()?;
        fs::rename(tmp, &self.path)?;
        self.committed = true;
        // The rename is durable once the directory is; a filesystem that cannot sync a
        // directory has nothing more to give, and the file is in place either way.
        if let Ok(dir) = File::open(parent(&self.path)) {
            dir.sync_all().ok();
        }
        Ok(())
    }
}

impl Write for NewFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for NewFile {
    fn drop(&mut self) {
        if let (false, Some(tmp)) = (self.committed, &self.tmp) {
            fs::remove_file(tmp).ok();
        }
    }
}

/// `bytes` to `path`, whole or not at all. The error names the file.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    write_with(path, |w| w.write_all(bytes))
}

/// What `fill` writes (through a buffer) to `path`, whole or not at all. The error names the
/// file: `cannot create F` when its temporary file cannot be made (a missing or read-only
/// directory), `writing F` when a later step fails (a full disk).
pub(crate) fn write_with<T>(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<&mut NewFile>) -> io::Result<T>,
) -> Result<T> {
    let mut file = NewFile::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let written = (|| {
        let mut w = BufWriter::new(&mut file);
        let value = fill(&mut w)?;
        w.into_inner().map_err(io::IntoInnerError::into_error)?;
        Ok::<_, io::Error>(value)
    })();
    written
        .and_then(|value| file.commit().map(|()| value))
        .with_context(|| format!("writing {}", path.display()))
}

/// The name the file ends up under: a link's target (a dangling or unreadable link is
/// replaced itself), and never a name with no file part (`/`, `..`).
fn final_name(path: &Path) -> io::Result<PathBuf> {
    if path.file_name().is_none() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"));
    }
    let is_link = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    Ok(match is_link {
        true => fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        false => path.to_path_buf(),
    })
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A temporary file beside `path`, created exclusively under a name no other writer holds.
/// Hidden and ending in `.tmp`, so that a reader of the directory's `*.prom` or `*.csv` never
/// takes it for a finished file.
fn unique_temporary(path: &Path, mode: u32) -> io::Result<(PathBuf, File)> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let pid = std::process::id();
    loop {
        let n = TAKEN.fetch_add(1, Ordering::Relaxed);
        let tmp = parent(path).join(format!(".{name}.{pid}.{n}.tmp"));
        match OpenOptions::new().write(true).create_new(true).mode(mode).open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            // Left by a crashed writer of an earlier process with this pid: take the next.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < u32::MAX => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("att-files-{tag}-{}", std::process::id()));
        fs::remove_dir_all(&d).ok();
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_write_replaces_the_file_whole_and_keeps_its_mode() {
        let d = dir("replace");
        let p = d.join("r.csv");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, Permissions::from_mode(0o640)).unwrap();
        write(&p, b"new\n").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new\n");
        assert_eq!(fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o640);
        assert_eq!(names(&d), ["r.csv"], "no temporary file left");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_failed_fill_leaves_the_old_file_and_no_temporary() {
        let d = dir("fail");
        let p = d.join("r.csv");
        fs::write(&p, "old").unwrap();
        let err = write_with(&p, |w| {
            w.write_all(b"half")?;
            Err::<(), _>(io::Error::other("disk gone"))
        })
        .unwrap_err();
        assert!(format!("{err:#}").contains("r.csv"), "{err:#}");
        assert_eq!(fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(names(&d), ["r.csv"]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn two_writers_of_one_name_have_their_own_temporaries() {
        let d = dir("two");
        let p = d.join("m.prom");
        let mut a = NewFile::create(&p).unwrap();
        let mut b = NewFile::create(&p).unwrap();
        a.write_all(b"a").unwrap();
        b.write_all(b"b").unwrap();
        a.commit().unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "a");
        b.commit().unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "b");
        assert_eq!(names(&d), ["m.prom"]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_link_is_written_through_and_a_device_in_place() {
        let d = dir("link");
        let target = d.join("target.csv");
        fs::write(&target, "old").unwrap();
        let link = d.join("link.csv");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write(&link, b"new").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        write(Path::new("/dev/null"), b"nothing").unwrap();
        assert!(!fs::metadata("/dev/null").unwrap().is_file(), "still the device");
        fs::remove_dir_all(&d).unwrap();
    }
}
