// SPDX-License-Identifier: GPL-2.0
//! The one run under `matrix`, `usage`, `bench`, `msrv` and `audit --usage`: the plan, the
//! cache, the judge of a step's processes, the runner of one step, the scheduler and the driver;
//! and any crate root, probed and compiled per compiler (`crate_root`), for `audit` and `msrv`.

pub(crate) mod cache;
pub(crate) mod crate_root;
pub(crate) mod driver;
pub(crate) mod judge;
pub(crate) mod plan;
pub(crate) mod runner;
pub(crate) mod schedule;
