//! Robustness: the macro never panics, and expands deterministically.
