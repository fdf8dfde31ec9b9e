//! A generator of random programs in the subset `#[differentiate]` supports.
