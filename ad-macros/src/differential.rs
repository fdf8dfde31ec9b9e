//! Differential testing: generated programs through the whole pipeline (see `programs` and `ir::interp`).
