//! Private scratch space: the directories and files `olm` makes for its own work (an unpacked
//! image, a staged catalog, a server's temporary cache, a downloaded layer).
//!
//! Every one is made by `tempfile`: a random name, created exclusively (`O_EXCL`, a `mkdir`
//! that fails on an existing name), mode 0700 for a directory and 0600 for a file, in
//! `$TMPDIR` (else `/tmp`). So no other local user can guess a name, plant a link or a
//! directory under it first, or read what is in it. A name built from a fixed word or the
//! process id is never used.
//!
//! Each registers itself while it lives. [`install_signal_cleanup`] (the CLI calls it first
//! thing) starts a thread that, on SIGINT or SIGTERM, removes every registered path and exits
//! with 130 or 143, so Ctrl-C during a pull leaves nothing behind. A process killed with
//! SIGKILL cannot run any handler: its scratch stays in `$TMPDIR` as `olm-*` entries, private
//! to the user and safe to delete.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Paths to remove on a signal, by registration number.
static REGISTERED: Mutex<BTreeMap<u64, PathBuf>> = Mutex::new(BTreeMap::new());
static NEXT: AtomicU64 = AtomicU64::new(0);
/// Set once a signal is being handled: work that creates files stops at its next step.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Set once a listening server owns the process's signals (for the rest of its life).
static DEFERRED: AtomicBool = AtomicBool::new(false);

/// 64 bits no other process can predict (the standard library's per-process random hash
/// keys, fresh for each call): for names that must not be guessed, where `tempfile` cannot make
/// them (a directory made through a handle, an object in a cluster).
pub fn random_u64() -> u64 {
    use std::hash::{BuildHasher as _, Hasher as _};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(CALLS.fetch_add(1, Ordering::Relaxed));
    h.finish()
}

fn registered() -> MutexGuard<'static, BTreeMap<u64, PathBuf>> {
    REGISTERED.lock().unwrap_or_else(|p| p.into_inner())
}

/// A path's place in the registry; dropping it takes the path out (after its owner removed it,
/// since an owner's fields drop in order and this one comes last).
#[derive(Debug)]
struct Registration(u64);

impl Registration {
    fn new(path: &Path) -> Registration {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        registered().insert(id, path.to_path_buf());
        Registration(id)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        registered().remove(&self.0);
    }
}

/// A private temporary directory, removed with everything in it when dropped or when the
/// process is interrupted.
#[derive(Debug)]
pub struct ScratchDir {
    dir: tempfile::TempDir,
    _registration: Registration,
}

impl ScratchDir {
    /// A new directory `$TMPDIR/olm-XXXXXX`.
    pub fn new() -> std::io::Result<ScratchDir> {
        ScratchDir::named("olm-")
    }

    /// A new directory `$TMPDIR/<prefix>XXXXXX` (the prefix says whose it is in a listing).
    pub fn named(prefix: &str) -> std::io::Result<ScratchDir> {
        use std::os::unix::fs::PermissionsExt as _;
        // tempfile's own default for a directory is 0777 less the umask (0755 for most):
        // readable by everyone. Scratch is the user's alone.
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()?;
        let registration = Registration::new(dir.path());
        Ok(ScratchDir {
            dir,
            _registration: registration,
        })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl AsRef<Path> for ScratchDir {
    fn as_ref(&self) -> &Path {
        self.path()
    }
}

/// A private temporary file with a name (for readers that open it again), removed when
/// dropped or when the process is interrupted.
#[derive(Debug)]
pub struct ScratchFile {
    path: tempfile::TempPath,
    _registration: Registration,
}

impl ScratchFile {
    /// A new file `$TMPDIR/olm-XXXXXX`, open for writing.
    pub fn new() -> std::io::Result<(std::fs::File, ScratchFile)> {
        let (file, path) = tempfile::Builder::new()
            .prefix("olm-")
            .tempfile()?
            .into_parts();
        let registration = Registration::new(&path);
        Ok((
            file,
            ScratchFile {
                path,
                _registration: registration,
            },
        ))
    }
}

impl std::ops::Deref for ScratchFile {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for ScratchFile {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// Keeps `path` (a file or directory that must sit elsewhere than `$TMPDIR`, such as a
/// partial blob beside an OCI layout's blobs) on the list an interrupt removes, while it lives.
#[derive(Debug)]
pub struct RemoveOnSignal(#[allow(dead_code)] Registration);

/// See [`RemoveOnSignal`].
pub fn remove_on_signal(path: &Path) -> RemoveOnSignal {
    RemoveOnSignal(Registration::new(path))
}

/// Whether an interrupt is being handled: long work that writes scratch (an unpack) checks
/// this between steps and stops, so the handler's removal is not raced by new files.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// From now on a signal is left to the caller (a listening server, which drains its calls and
/// then drops its scratch itself) instead of ending the process. For the rest of the process:
/// the handler may see a signal after the server has already stopped on it, and must not then
/// exit with another status.
pub fn leave_signals_to_caller() {
    DEFERRED.store(true, Ordering::SeqCst);
}

/// Removes every registered path (what a signal handler does before exiting). Returns the
/// paths that could not be removed.
pub fn remove_registered() -> Vec<PathBuf> {
    INTERRUPTED.store(true, Ordering::SeqCst);
    let paths: Vec<PathBuf> = registered().values().cloned().collect();
    let mut left = Vec::new();
    for path in paths {
        // A worker may still be adding a file as the tree goes: try again a few times.
        let mut gone = false;
        for attempt in 0..5 {
            let removed = match std::fs::symlink_metadata(&path) {
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path),
                Ok(_) => std::fs::remove_file(&path),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(e),
            };
            if removed.is_ok() {
                gone = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20 << attempt));
        }
        if !gone {
            left.push(path);
        }
    }
    left
}

/// Starts the thread that cleans up on SIGINT and SIGTERM: it removes every registered
/// scratch path and exits with 130 (SIGINT) or 143 (SIGTERM), as a shell reports a process
/// those signals ended. After [`leave_signals_to_caller`] signals are the caller's.
/// Call once, from the binary; a library caller keeps its own signal handling.
pub fn install_signal_cleanup() {
    let spawned = std::thread::Builder::new()
        .name("olm-signals".into())
        .spawn(|| {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    tracing::warn!(error = %e, "no cleanup on interrupt");
                    return;
                }
            };
            runtime.block_on(wait_for_signals());
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "no cleanup on interrupt");
    }
}

async fn wait_for_signals() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        tracing::warn!("cannot listen for SIGINT and SIGTERM: no cleanup on interrupt");
        return;
    };
    loop {
        let code = tokio::select! {
            _ = int.recv() => 130,
            _ = term.recv() => 143,
        };
        if DEFERRED.load(Ordering::SeqCst) {
            continue;
        }
        let left = remove_registered();
        for path in &left {
            eprintln!("warning: could not remove {}", path.display());
        }
        std::process::exit(code);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn scratch_is_private_random_and_registered_while_it_lives() {
        let a = ScratchDir::new().unwrap();
        let b = ScratchDir::new().unwrap();
        assert_ne!(a.path(), b.path());
        let name = a.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("olm-") && name.len() > 6, "{name}");
        assert!(!name.contains(&std::process::id().to_string()), "{name}");
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let (_, f) = ScratchFile::new().unwrap();
        let mode = std::fs::metadata(&*f).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let held = |p: &Path| registered().values().any(|r| r == p);
        assert!(held(a.path()) && held(&f));
        let (pa, pf) = (a.path().to_path_buf(), f.to_path_buf());
        drop((a, f));
        assert!(!pa.exists() && !pf.exists());
        assert!(!held(&pa) && !held(&pf));
    }
}
