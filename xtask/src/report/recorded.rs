// SPDX-License-Identifier: GPL-2.0
//! Which catalog features a recorded report has: a report made before a feature was added to
//! the catalog still reads, its cells for that feature "not recorded", so that adding a
//! feature never leaves `cargo xtask docs` unable to regenerate; one that names a feature the
//! catalog does not have, or one twice, is refused.

use crate::catalog::FEATURES;
use anyhow::bail;

/// For each catalog feature in catalog order, the position of its row among `names` (the
/// report's features, in its order, which may be an older catalog's), or `None` where the
/// report was recorded without it.
pub fn recorded_rows(names: &[&str]) -> anyhow::Result<Vec<Option<usize>>> {
    let mut rows = vec![None; FEATURES.len()];
    for (row, name) in names.iter().enumerate() {
        let Some(position) = FEATURES.iter().position(|feature| feature.name == *name) else {
            bail!(
                "the report names the feature `{}`, which the catalog does not have: it was made \
                 from another version of kernel-shim/src/catalog.rs",
                crate::util::output::escape(name)
            )
        };
        if rows[position].replace(row).is_some() {
            bail!("the report has the feature `{name}` twice");
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_may_lack_a_newer_feature_but_not_have_another() {
        let all: Vec<&str> = FEATURES.iter().map(|feature| feature.name).collect();
        let rows = recorded_rows(&all).unwrap();
        assert!(rows
            .iter()
            .enumerate()
            .all(|(index, row)| *row == Some(index)));
        let without_second = [&all[..1], &all[2..]].concat();
        let rows = recorded_rows(&without_second).unwrap();
        assert_eq!((rows[0], rows[1], rows[2]), (Some(0), None, Some(1)));
        let error = recorded_rows(&[all[0], "no_such_feature"]).unwrap_err();
        assert!(error.to_string().contains("`no_such_feature`"), "{error}");
        // Rows are found by name: a catalog that moved an entry still reads its old reports.
        assert_eq!(
            recorded_rows(&[all[1], all[0]]).unwrap()[..2],
            [Some(1), Some(0)]
        );
        assert!(recorded_rows(&[all[0], all[0]]).is_err(), "a feature twice");
    }
}
