//! Transfer modes (HAMR's `buffer_transfer`): in `Async` mode a move returns before it
//! has run (its work is gated here on a user event that opens later), and a host slice
//! is never handed out before its data arrived; `SyncHost` completes moves into host
//! memory only; `Sync` completes every move. Run at every location, to every other.

#[macro_use]
mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use locus::{Buffer, Event, Location, Transfer};

/// A user event gating a buffer's moves, opened by a thread of its own when told to
/// ([`Gate::open`]) or after `delay`, whichever comes first; `opened` says whether it
/// has. A call that should return before the gate opens is checked before `open`: if
/// it waited, the gate opened on its timer first and the check fails.
struct Gate {
    event: Event,
    opened: Arc<AtomicBool>,
    tell: mpsc::Sender<()>,
    opener: JoinHandle<()>,
}

impl Gate {
    fn new(delay: Duration) -> Gate {
        let (event, trigger) = Event::user();
        let opened = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&opened);
        let (tell, told) = mpsc::channel();
        let opener = std::thread::spawn(move || {
            let _ = told.recv_timeout(delay);
            flag.store(true, Ordering::SeqCst);
            trigger.complete();
        });
        Gate {
            event,
            opened,
            tell,
            opener,
        }
    }

    fn is_open(&self) -> bool {
        self.opened.load(Ordering::SeqCst)
    }

    fn open(self) {
        let _ = self.tell.send(());
        self.opener.join().unwrap();
    }
}

/// Long enough that no call returns this late on a loaded machine.
const LATE: Duration = Duration::from_secs(20);

fn data() -> Vec<u32> {
    (0..4099u32).map(|i| i.wrapping_mul(2654435761)).collect()
}

pub fn async_access_returns_before_its_data(l: Location) {
    for to in common::required_locations() {
        let b = Buffer::from_slice(l, &data()).unwrap();
        assert_eq!(b.transfer(), Transfer::Async, "HAMR's default");
        let gate = Gate::new(LATE);
        b.order_after(&gate.event);
        let g = b.access(to).unwrap();
        assert!(!gate.is_open(), "{l} -> {to}: access waited for the gate");
        assert!(!g.is_ready(), "{l} -> {to}: ready before the gate opened");
        assert!(!g.events().is_empty());
        // The gate opens from another thread a little later; a host slice handed out
        // before that would find `opened` false.
        let opened = Arc::clone(&gate.opened);
        let opener = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            gate.open();
        });
        match g.as_slice() {
            Ok(slice) => {
                assert!(
                    opened.load(Ordering::SeqCst),
                    "{l} -> {to}: a slice before the data"
                );
                assert_eq!(slice, data().as_slice(), "{l} -> {to}");
            }
            Err(_) => {
                // No host view here: wait, then read the memory.
                g.wait().unwrap();
                assert!(opened.load(Ordering::SeqCst));
                let mut out = vec![0u8; 4099 * 4];
                g.memory().read(0, &mut out).unwrap();
                assert_eq!(out, bytemuck::cast_slice::<u32, u8>(&data()), "{l} -> {to}");
            }
        }
        opener.join().unwrap();
    }
}

pub fn async_copies_return_before_their_data(l: Location) {
    for to in locus::available() {
        let src = Buffer::from_slice(l, &data()).unwrap();
        let mut dst = Buffer::<u32>::zeroed(to, 4099).unwrap();
        let gate = Gate::new(LATE);
        src.order_after(&gate.event);
        dst.copy_from(0, &src, 0..4099).unwrap();
        dst.prefetch(l).unwrap();
        assert!(!gate.is_open(), "{l} -> {to}: copy_from waited");
        assert!(!dst.pending().is_empty());
        gate.open();
        assert_eq!(
            dst.to_vec().unwrap(),
            data(),
            "{l} -> {to}: to_vec waits for the data"
        );
        assert!(dst.pending().is_empty());
    }
}

pub fn sync_modes_complete_what_they_say(l: Location) {
    for to in locus::available() {
        for mode in [Transfer::Sync, Transfer::SyncHost] {
            let b = Buffer::from_slice(l, &data()).unwrap().with_transfer(mode);
            let waits = mode == Transfer::Sync || to.is_host();
            // A call that must wait finds the gate opening on its own after 150 ms.
            let gate = Gate::new(if waits {
                Duration::from_millis(150)
            } else {
                LATE
            });
            b.order_after(&gate.event);
            // In place or moved alike: the guard comes ready where the mode says so.
            let g = b.access(to).unwrap();
            if waits {
                assert!(gate.is_open(), "{mode:?} {l} -> {to}: returned early");
                assert!(g.is_ready() && g.events().is_empty());
            } else {
                assert!(!gate.is_open(), "{mode:?} {l} -> {to}: waited");
            }
            gate.open();
            drop(g);
            b.synchronize().unwrap();
            assert!(b.pending().is_empty());
            assert_eq!(b.to_vec().unwrap(), data());
        }
    }
}

/// A buffer at `l` whose every use waits for an event the test fails or completes.
fn gated(l: Location) -> (Buffer<u32>, locus::EventTrigger) {
    let b = Buffer::from_slice(l, &data()).unwrap();
    let (event, trigger) = Event::user();
    b.order_after(&event);
    (b, trigger)
}

pub fn a_failed_move_is_an_error_not_stale_data(l: Location) {
    for to in locus::available().into_iter().filter(|&t| t != l) {
        let (b, trigger) = gated(l);
        let g = b.access(to).unwrap();
        if g.is_in_place() {
            continue;
        }
        trigger.fail("the producer's work failed");
        let err = g.as_slice().map(|_| ()).or_else(|_| g.wait()).unwrap_err();
        assert!(err.to_string().contains("producer"), "{err}");
        drop(g);
        assert!(
            b.synchronize().is_err(),
            "{l} -> {to}: the failure was not reported"
        );
        // The source is still current: the data is not lost.
        assert_eq!(b.to_vec().unwrap(), data(), "{l} -> {to}");
    }
}

/// A move that failed while nobody waited for it leaves its target stale: the next
/// access there makes a new move from the source (fails on the old code, where the
/// finished move was dropped and its target read as current).
pub fn a_failed_move_is_never_read(l: Location) {
    for to in locus::available().into_iter().filter(|&t| t != l) {
        let (b, trigger) = gated(l);
        let g = b.access(to).unwrap();
        if g.is_in_place() {
            continue;
        }
        trigger.fail("the producer's work failed");
        assert!(g.wait().is_err());
        drop(g);
        assert_eq!(common::contents(&b, to), data(), "{l} -> {to}");
    }
}

/// A move into the only current replica (a write access elsewhere) that failed loses
/// nothing: the replica it came from is current again, and `synchronize` reports the
/// failure (fails on the old code: "internal: buffer has no valid replica").
pub fn a_failed_move_for_a_write_loses_nothing(l: Location) {
    for to in locus::available().into_iter().filter(|&t| t != l) {
        let (mut b, trigger) = gated(l);
        let g = b.access_mut(to).unwrap();
        if g.is_in_place() {
            continue;
        }
        trigger.fail("the producer's work failed");
        assert!(g.wait().is_err());
        drop(g);
        assert!(
            b.synchronize().is_err(),
            "{l} -> {to}: the failure was not reported"
        );
        b.synchronize().unwrap();
        assert_eq!(b.to_vec().unwrap(), data(), "{l} -> {to}");
        assert_eq!(common::contents(&b, to), data(), "{l} -> {to}");
    }
}

macro_rules! suite {
    ($(#[$m:meta])*) => {
        $(#[$m])* #[test] fn async_access_returns_before_its_data() { run(super::async_access_returns_before_its_data) }
        $(#[$m])* #[test] fn async_copies_return_before_their_data() { run(super::async_copies_return_before_their_data) }
        $(#[$m])* #[test] fn sync_modes_complete_what_they_say() { run(super::sync_modes_complete_what_they_say) }
        $(#[$m])* #[test] fn a_failed_move_is_an_error_not_stale_data() { run(super::a_failed_move_is_an_error_not_stale_data) }
        $(#[$m])* #[test] fn a_failed_move_is_never_read() { run(super::a_failed_move_is_never_read) }
        $(#[$m])* #[test] fn a_failed_move_for_a_write_loses_nothing() { run(super::a_failed_move_for_a_write_loses_nothing) }
    };
}

at_every_location!();

/// Buffers on one queue (HAMR's stream): a move of one waits for the moves submitted
/// there before, even of another buffer; a stream-ordered buffer from a pool comes
/// after the queue's work.
#[test]
fn moves_on_one_queue_run_in_order() {
    let _serial = common::serial();
    let all = locus::available();
    // A location the host's memory is copied to (not used in place there).
    let copied = |l: &&Location| {
        !locus::access::location_accessibility(locus::registry(), Location::Host, **l)
            .unwrap()
            .0
    };
    let to = *all.iter().find(copied).unwrap_or(&Location::Host);
    let q = locus::Queue::new();
    let a = Buffer::from_slice(Location::Host, &data())
        .unwrap()
        .with_queue(q);
    let b = Buffer::from_slice(Location::Host, &data())
        .unwrap()
        .with_queue(q);
    assert_eq!(b.queue(), Some(q));
    let gate = Gate::new(LATE);
    a.order_after(&gate.event);
    let ga = a.access(to).unwrap();
    let gb = b.access(to).unwrap();
    if !gb.is_in_place() {
        std::thread::sleep(Duration::from_millis(200));
        assert!(
            !gb.is_ready(),
            "b's move ran before a's, submitted first on the queue"
        );
    }
    gate.open();
    gb.wait().unwrap();
    ga.wait().unwrap();
    drop((ga, gb));
    assert_eq!((a.to_vec().unwrap(), b.to_vec().unwrap()), (data(), data()));
    // RMM's device_uvector / device_scalar on a queue: stream-ordered from a pool.
    let pool: Arc<dyn locus::resource::MemoryResource> = Arc::new(locus::resource::Pool::new(
        locus::resource::default_for(to).unwrap(),
        1 << 16,
        1 << 22,
    ));
    let mut u = Buffer::<u32>::uninit_on(&pool, 4099, q).unwrap();
    u.set(0, &data()).unwrap();
    assert_eq!(u.to_vec().unwrap(), data());
    let mut s = locus::Scalar::<u64>::uninit_on(&pool, q).unwrap();
    s.set(u64::MAX - 1).unwrap();
    assert_eq!(s.value().unwrap(), u64::MAX - 1);
}

/// RMM's `set_value_async`: `Scalar::set` returns before its upload, which waits for the
/// work the scalar is ordered after; the value arrives once that work is done (on the
/// old code the staging buffer's drop waited for the upload, so `set` blocked).
#[test]
fn a_scalar_s_set_returns_before_its_upload() {
    let _serial = common::serial();
    for l in locus::available() {
        let mut s = locus::Scalar::new(l, 1u32).unwrap();
        let (event, trigger) = Event::user();
        s.buffer().order_after(&event);
        let (done, returned) = mpsc::channel();
        let setter = std::thread::spawn(move || {
            s.set(42).unwrap();
            done.send(()).unwrap();
            s
        });
        let in_time = returned.recv_timeout(Duration::from_secs(5));
        trigger.complete();
        let s = setter.join().unwrap();
        assert!(in_time.is_ok(), "{l}: set waited for the gated work");
        assert_eq!(s.value().unwrap(), 42, "{l}");
    }
}
