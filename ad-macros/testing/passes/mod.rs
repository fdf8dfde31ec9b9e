//! Tests of the passes, each through the whole pipeline (`stages_of`).

mod extrema;
mod fuse;
mod hoist;
mod keep;
mod normal;
mod order;
mod records;
mod tapes;
