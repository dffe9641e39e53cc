//! The host's queued work: none. Every host operation completes before the call returns
//! (asynchronous copies go to locus's worker threads), so there is no `NativeWork` type.
