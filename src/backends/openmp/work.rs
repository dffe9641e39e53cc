//! OpenMP's queued work: none. Every copy and kernel runs to completion before the call
//! returns (asynchronous copies go to locus's worker threads), so there is no
//! `NativeWork` type here.
