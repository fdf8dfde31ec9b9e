//! An interpreter for the IR, to test the passes without rustc.
