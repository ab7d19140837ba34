//! Shared helpers for kshim's repository-level tests.
