// SPDX-License-Identifier: GPL-2.0
//! `cargo xtask kernel`: the trees `--tree` names (or every pinned one) with the compilers the
//! matrix would resolve, handed to [`crate::kernel::run`] (a disagreement between a prediction
//! and the real build is a finding, exit 1), or with `--dry-run` to [`crate::kernel::plan`].

#[cfg(test)]
pub(crate) mod tests;

use crate::commands::flags;
use crate::kernel::run::{find_compilers, run, Settings};
use crate::kernel::{plan, trees};
use crate::run::cache::StableHasher;
use crate::toolchains::debian::Provisioning;
use crate::toolchains::pins::{Pins, TreePin, TreeSource};
use crate::util::json;
use crate::util::output::{Format, Output};
use crate::Verdict;
use anyhow::{bail, ensure};
use std::path::{Path, PathBuf};
use std::time::Duration;
use xshell::Shell;

/// How long one `make` may run unless `--timeout` says otherwise.
const MAKE_TIMEOUT: Duration = Duration::from_secs(1800);

impl flags::Kernel {
    pub fn run(&self, sh: &Shell, output: Output) -> anyhow::Result<Verdict> {
        let format = Format::parse(self.format.as_deref().unwrap_or("human"))?;
        let timeout = crate::run::driver::timeout(self.timeout, MAKE_TIMEOUT)?;
        let jobs = crate::run::driver::jobs("kernel", self.jobs)?;
        let pins_path = self.pins.clone().unwrap_or_else(Pins::default_path);
        let pins = Pins::load(&pins_path)?;
        let trees = select_trees(&pins, &self.tree)?;
        if self.dry_run {
            // The plan of the run, changing nothing (no provisioning, lock or directory).
            let compilers = find_compilers(sh, &pins_path, &self.toolchain, Provisioning::Refused)?;
            let dir = crate::project_root().join("target/kernel");
            let text = plan::plan(&dir, &trees, &compilers, !self.no_cache, self.boot);
            print!("{}", crate::util::output::fit(&text, output.width));
            return Ok(Verdict::Success);
        }
        let settings = Settings {
            timeout,
            jobs,
            use_cache: !self.no_cache,
            boot: self.boot,
        };
        let report = crate::util::interrupt::run_interruptible(|| {
            run(sh, &pins_path, &trees, &self.toolchain, settings)
        })?;
        Ok(format.print_report(
            report.verdict(self.strict),
            output,
            || json::to_value(&report),
            || report.markdown(),
            |style| report.human_in(style),
        ))
    }
}

/// The trees `--tree` names (pin ids, or paths of local trees), or every pinned tree.
fn select_trees(pins: &Pins, wanted: &[String]) -> anyhow::Result<Vec<TreePin>> {
    if wanted.is_empty() {
        ensure!(
            !pins.trees.is_empty(),
            "{} pins no kernel tree (`[[tree]]`); add one or name a path with --tree",
            pins.path.display()
        );
        return Ok(pins.trees.clone());
    }
    let mut chosen = Vec::new();
    let mut local: Vec<PathBuf> = Vec::new();
    for name in wanted {
        let path = Path::new(name);
        if let Some(pin) = pins.trees.iter().find(|pin| &pin.id == name) {
            chosen.push(pin.clone());
        } else if !name.contains('/') && !path.is_dir() {
            return Err(trees::no_such_tree(pins, name));
        } else if !path.is_dir() {
            let what = match path.exists() {
                true => "is not a directory",
                false => "no such directory",
            };
            bail!(
                "--tree {}: {what} (a local kernel tree is a directory)",
                crate::util::output::escape(name)
            );
        } else {
            // The same tree named twice is one tree.
            let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
            if !local.contains(&canonical) {
                local.push(canonical);
                chosen.push(TreePin {
                    id: String::new(), // named below, once every local tree is known
                    source: TreeSource::Path(PathBuf::from(name)),
                    note: None,
                    line: 0,
                });
            }
        }
    }
    let unnamed = chosen.iter_mut().filter(|pin| pin.id.is_empty());
    for (pin, id) in unnamed.zip(local_tree_ids(&local)) {
        pin.id = id;
    }
    Ok(chosen)
}

/// The ids of local trees, one per (canonical) path: `path-NAME` after the directory's name, and
/// where two share a name (`a/linux`, `b/linux`), with the first 8 hex digits of the path's hash
/// (`path-linux-3f2a9c1b`), so that two trees never share an id or a build directory.
fn local_tree_ids(paths: &[PathBuf]) -> Vec<String> {
    let name = |path: &PathBuf| {
        let file_name = path.file_name().map(|name| name.to_string_lossy());
        format!(
            "path-{}",
            crate::run::plan::directory_name(&file_name.unwrap_or("local".into()))
        )
    };
    paths
        .iter()
        .map(|path| {
            let id = name(path);
            if paths.iter().filter(|other| name(other) == id).count() == 1 {
                return id;
            }
            let hash = StableHasher::new()
                .field(path.as_os_str().as_encoded_bytes())
                .finish();
            format!("{id}-{}", &hash.to_string()[..8])
        })
        .collect()
}
