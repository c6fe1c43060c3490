//! Advisory whole-file locks between processes (`flock` through std's `File::lock`): the one
//! helper behind the project directories' locks ([`crate::project::ProjectLock`]), `mase demo`'s
//! output directory and mase-sim's build cache (its per-key and per-tool locks).
//!
//! A lock file is never deleted: a process waiting on it holds it open, and deleting it would let
//! a third process lock a new file of the same name while the waiter locks the old one.

use std::fs::{File, TryLockError};
use std::path::Path;

/// How a lock is shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One holder, no readers (writing).
    Exclusive,
    /// Any number of holders, no exclusive one (reading).
    Shared,
}

/// A lock held until dropped (closing the file releases it).
#[derive(Debug)]
pub struct Lock(#[allow(dead_code)] File);

/// Takes the `kind` lock of the file `path`, blocking until it is free. An exclusive lock creates
/// the file when missing; a shared one opens an existing file for reading only (so a read-only
/// directory can still be read under its lock). When another process holds the lock, `waiting`
/// runs once before blocking, so the caller can say on stderr what it waits for.
pub fn lock(path: &Path, kind: Kind, waiting: impl FnOnce()) -> std::io::Result<Lock> {
    let file = match kind {
        Kind::Exclusive => File::options().create(true).truncate(false).write(true).open(path)?,
        Kind::Shared => File::open(path)?,
    };
    let tried = match kind {
        Kind::Exclusive => file.try_lock(),
        Kind::Shared => file.try_lock_shared(),
    };
    match tried {
        Ok(()) => return Ok(Lock(file)),
        Err(TryLockError::WouldBlock) => waiting(),
        Err(TryLockError::Error(e)) => return Err(e),
    }
    match kind {
        Kind::Exclusive => file.lock()?,
        Kind::Shared => file.lock_shared()?,
    }
    Ok(Lock(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_exclusive_holder_waits_and_shared_holders_coexist() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.lock");
        let first = lock(&path, Kind::Exclusive, || panic!("the file was free")).unwrap();
        // A second open file description conflicts with the first even in one process (flock).
        let (tx, rx) = std::sync::mpsc::channel();
        let p = path.clone();
        let waiter = std::thread::spawn(move || {
            let l = lock(&p, Kind::Exclusive, || tx.send("waiting").unwrap()).unwrap();
            tx.send("locked").unwrap();
            drop(l);
        });
        assert_eq!(rx.recv().unwrap(), "waiting");
        assert!(rx.recv_timeout(std::time::Duration::from_millis(200)).is_err(), "locked while held");
        drop(first);
        assert_eq!(rx.recv().unwrap(), "locked");
        waiter.join().unwrap();
        let a = lock(&path, Kind::Shared, || panic!("no exclusive holder")).unwrap();
        let b = lock(&path, Kind::Shared, || panic!("shared locks coexist")).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let p = path.clone();
        let writer = std::thread::spawn(move || {
            let _l = lock(&p, Kind::Exclusive, || tx.send("waiting").unwrap()).unwrap();
        });
        assert_eq!(rx.recv().unwrap(), "waiting", "a writer waits for the readers");
        drop((a, b));
        writer.join().unwrap();
    }
}
