// SPDX-License-Identifier: GPL-2.0
//! The kernel prelude: what nearly every module imports, as `use kernel::prelude::*;`.

pub use crate::error::{code::*, Error, Result};
pub use crate::module::{Module, ThisModule};
pub use crate::sync::{Arc, ArcBorrow};
pub use crate::{module, pr_debug, pr_err, pr_info, pr_notice, pr_warn};
