//! The simulated driver's streams: each device's own (locus's) and the ones a user
//! created, each running its queued work in order and only when something waits for
//! it. A stream may wait for another's event (`cuStreamWaitEvent`): running it up to that
//! point first runs the other stream up to the event.

use std::collections::{HashMap, VecDeque};

/// Queued work: runs when something waits for it.
pub(super) type Op = Box<dyn FnOnce() + Send>;

/// The handle of device `ordinal`'s own stream (locus's).
pub(super) fn device_stream_handle(ordinal: u32) -> u64 {
    0x5000 + u64::from(ordinal)
}

/// Which stream: a device's own, or one a user created (by its handle).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(super) enum StreamId {
    Device(u32),
    User(u64),
}

enum Item {
    Op(Op),
    /// Wait until that stream has run that many items.
    Wait(StreamId, u64),
}

/// Work queued in order, of which the first `ran` items have run.
#[derive(Default)]
struct Stream {
    pending: VecDeque<Item>,
    ran: u64,
}

impl Stream {
    fn queued(&self) -> u64 {
        self.ran + self.pending.len() as u64
    }
}

/// Every stream of one simulated driver.
#[derive(Default)]
pub(super) struct Streams {
    device: Vec<Stream>,
    /// User streams: handle -> (device, stream).
    user: HashMap<u64, (u32, Stream)>,
    next_user: u64,
}

impl Streams {
    /// One stream per device.
    pub(super) fn new(devices: u32) -> Streams {
        Streams {
            device: (0..devices).map(|_| Stream::default()).collect(),
            user: HashMap::new(),
            next_user: 0x7000_0000,
        }
    }

    /// How many devices.
    pub(super) fn devices(&self) -> usize {
        self.device.len()
    }

    fn get(&self, id: StreamId) -> Option<&Stream> {
        match id {
            StreamId::Device(d) => self.device.get(d as usize),
            StreamId::User(h) => self.user.get(&h).map(|(_, s)| s),
        }
    }

    fn get_mut(&mut self, id: StreamId) -> Option<&mut Stream> {
        match id {
            StreamId::Device(d) => self.device.get_mut(d as usize),
            StreamId::User(h) => self.user.get_mut(&h).map(|(_, s)| s),
        }
    }

    /// A new user stream of device `ordinal`; its handle.
    pub(super) fn create(&mut self, ordinal: u32) -> u64 {
        self.next_user += 1;
        self.user
            .insert(self.next_user, (ordinal, Stream::default()));
        self.next_user
    }

    /// The stream `handle` names for a caller whose current device is `ordinal`: its own
    /// device stream or a user stream of that device; `None` for anything else (a
    /// destroyed stream, another device's).
    pub(super) fn resolve(&self, handle: u64, ordinal: u32) -> Option<StreamId> {
        if handle == device_stream_handle(ordinal) {
            return Some(StreamId::Device(ordinal));
        }
        match self.user.get(&handle) {
            Some((d, _)) if *d == ordinal => Some(StreamId::User(handle)),
            _ => None,
        }
    }

    /// Queues `op` on `id`; its position (what an event recorded now waits for).
    pub(super) fn push(&mut self, id: StreamId, op: Op) -> u64 {
        self.push_item(id, Item::Op(op))
    }

    /// Makes `id`'s later work wait until `on` has run `at` items.
    pub(super) fn push_wait(&mut self, id: StreamId, on: StreamId, at: u64) -> u64 {
        self.push_item(id, Item::Wait(on, at))
    }

    fn push_item(&mut self, id: StreamId, item: Item) -> u64 {
        match self.get_mut(id) {
            Some(stream) => {
                stream.pending.push_back(item);
                stream.queued()
            }
            None => 0,
        }
    }

    /// How many items were ever queued on `id`.
    pub(super) fn queued(&self, id: StreamId) -> u64 {
        self.get(id).map_or(0, Stream::queued)
    }

    /// How many items of `id` have run.
    pub(super) fn ran(&self, id: StreamId) -> u64 {
        self.get(id).map_or(u64::MAX, |s| s.ran)
    }

    /// Runs `id`'s queued work up to position `upto` (and what it waits for).
    pub(super) fn run_to(&mut self, id: StreamId, upto: u64) {
        loop {
            let Some(stream) = self.get_mut(id) else {
                return;
            };
            if stream.ran >= upto {
                return;
            }
            let Some(item) = stream.pending.pop_front() else {
                return;
            };
            stream.ran += 1;
            match item {
                Item::Op(op) => op(),
                Item::Wait(on, at) => self.run_to(on, at),
            }
        }
    }

    /// Runs everything queued on `id`.
    pub(super) fn run_all(&mut self, id: StreamId) {
        self.run_to(id, self.queued(id));
    }
}
