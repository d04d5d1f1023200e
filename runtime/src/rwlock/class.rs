//! The kinds of waiter: what each may do with the state word, where each
//! parks, and what a reaped one owes the others.

use super::{
    RawRwLock, ONE_READER, PREFER_WRITERS, READERS_MASK, READERS_PARKED, UPGRADABLE,
    UPGRADABLE_PARKED, UPGRADE_PARKED, WRITER, WRITERS_PARKED, WRITER_FIRST,
};
use crate::parking_lot::{Abandon, UnparkToken};

/// The kinds of waiter, each with its own parked bit and queue address.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Class {
    Reader,
    /// A reader that also enters whenever a read is held (see
    /// `rwlock/recursive.rs`); it parks and is woken as a `Reader`.
    RecursiveReader,
    Writer,
    /// The upgradable holder waiting for the other readers to leave.
    Upgrade,
    Upgradable,
}

impl Class {
    /// Whether a hold of this class has one owner, recorded by the
    /// diagnostics (reads are shared: not recorded).
    pub(super) fn has_owner(self) -> bool {
        matches!(self, Class::Writer | Class::Upgradable | Class::Upgrade)
    }

    /// What its waits are, for the diagnostics.
    pub(super) fn kind(self) -> crate::diagnostics::Kind {
        use crate::diagnostics::Kind;
        match self {
            Class::Reader | Class::RecursiveReader => Kind::RwLockRead,
            Class::Writer => Kind::RwLockWrite,
            Class::Upgrade | Class::Upgradable => Kind::RwLockUpgradable,
        }
    }

    /// Its parked bit.
    #[inline]
    pub(super) fn parked(self) -> u32 {
        match self {
            Class::Reader | Class::RecursiveReader => READERS_PARKED,
            Class::Writer => WRITERS_PARKED,
            Class::Upgrade => UPGRADE_PARKED,
            Class::Upgradable => UPGRADABLE_PARKED,
        }
    }

    /// Its queue's offset from the word's address (the word is four bytes,
    /// so each class has an address of its own that no other object uses).
    #[inline]
    pub(super) fn key_offset(self) -> usize {
        match self {
            Class::Reader | Class::RecursiveReader => 0,
            Class::Writer => 1,
            Class::Upgrade => 2,
            Class::Upgradable => 3,
        }
    }

    /// The word after this class enters, if the word `s` lets it.
    #[inline]
    pub(super) fn enter(self, s: u32) -> Option<u32> {
        match self {
            Class::Reader | Class::Upgradable => {
                let writer_waits = s & PREFER_WRITERS != 0 && s & WRITERS_PARKED != 0;
                if s & (WRITER | WRITER_FIRST) != 0 || writer_waits {
                    return None;
                }
                if self == Class::Upgradable {
                    if s & UPGRADABLE != 0 {
                        return None;
                    }
                    return add_reader(s).map(|s| s | UPGRADABLE);
                }
                add_reader(s)
            }
            // With WRITER set, a holder is a read other than the upgrader's
            // (which waits for the others to leave).
            Class::RecursiveReader => match readers(s).saturating_sub(u32::from(s & WRITER != 0)) {
                0 => Class::Reader.enter(s),
                _ => add_reader(s),
            },
            Class::Writer => (s & (WRITER | READERS_MASK) == 0).then_some(s | WRITER),
            // Only the upgrader sets UPGRADE_PARKED, so once in it is stale.
            Class::Upgrade => (readers(s) == 1)
                .then(|| ((s - ONE_READER - UPGRADABLE) | WRITER) & !UPGRADE_PARKED),
        }
    }
}

impl Class {
    /// Whether this is a writer that readers keep out. Spinning cannot help
    /// it: new readers keep entering while its parked bit is clear (under
    /// either policy), so the gap it waits for may never come, and until the
    /// bit is set no hand-off can be owed to it. Under the writer preference
    /// the bit also stops new readers at once.
    #[inline]
    pub(super) fn stopped_by_readers(self, s: u32) -> bool {
        self == Class::Writer && s & WRITER == 0
    }

    /// The class a const parameter names (for the `Abandon` tables).
    pub(super) const fn of(code: u8) -> Class {
        match code {
            0 => Class::Reader,
            1 => Class::Writer,
            2 => Class::Upgrade,
            _ => Class::Upgradable,
        }
    }

    /// What a waiter of this class owes the others if its owner is reaped.
    pub(super) fn abandon(self) -> &'static Abandon {
        match self {
            Class::Reader | Class::RecursiveReader => &ABANDON[0],
            Class::Writer => &ABANDON[1],
            Class::Upgrade => &ABANDON[2],
            Class::Upgradable => &ABANDON[3],
        }
    }
}

/// What a waiter owes the others if its owner is reaped while queued or
/// before it acted on its wakeup (see [`parking_lot::Abandon`](Abandon)): as the last
/// one queued, its class's parked bit, and then a look at whether that lets
/// others in (a writer's `WRITER_FIRST` may be keeping readers out); a hand-off it never took, the lock
/// (released, which wakes whoever is next); a wake to compete, that wake
/// (the lock is taken and released if free, which passes it on).
static ABANDON: [Abandon; 4] = [
    abandon_of::<0>(),
    abandon_of::<1>(),
    abandon_of::<2>(),
    abandon_of::<3>(),
];

/// The debt of the waiters of class index `CLASS` (`ABANDON`'s order).
const fn abandon_of<const CLASS: u8>() -> Abandon {
    Abandon {
        dequeued: abandon_dequeued::<CLASS>,
        settle: abandon_settle,
        claimed: abandon_claimed::<CLASS>,
    }
}

/// The lock a reaped waiter was queued on.
fn owed_rwlock<'a>(object: *const ()) -> &'a RawRwLock {
    // SAFETY: `RawRwLock::owed` is the only maker of these debts, and a lock
    // outlives its waiters (park_owing's contract).
    unsafe { &*object.cast::<RawRwLock>() }
}

fn abandon_dequeued<const CLASS: u8>(object: *const (), was_last: bool) {
    owed_rwlock(object).forget_parked_if_last(Class::of(CLASS), was_last);
}

/// As a waiter that timed out does: its parked bit (or a `WRITER_FIRST`
/// owed to it) may have been what kept others out.
fn abandon_settle(object: *const ()) {
    owed_rwlock(object).unblock(false);
}

fn abandon_claimed<const CLASS: u8>(object: *const (), token: UnparkToken) {
    owed_rwlock(object).pass_on(Class::of(CLASS), token);
}

#[inline]
pub(super) fn readers(s: u32) -> u32 {
    s >> ONE_READER.trailing_zeros()
}

/// `s` with one more reader; `None` (treated as "may not enter") at the
/// 2^24 - 1 readers the word can count.
#[inline]
pub(super) fn add_reader(s: u32) -> Option<u32> {
    s.checked_add(ONE_READER)
}
