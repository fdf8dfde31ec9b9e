//! Test machinery shared by the workspace's tests, never by users' code:
//!
//! - [`programs`]: the random program generator. The macro's in-process
//!   differential tests run its programs on the IR interpreter; the
//!   `ad-tests` crate compiles a corpus of them with the real attribute.

pub mod programs;
