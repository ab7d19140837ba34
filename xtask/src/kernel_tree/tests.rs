//! Tests of the kernel tree reader against the real trees.
