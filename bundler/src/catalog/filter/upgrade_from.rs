//! `--upgrade-from V`: in each channel, only the bundles OLM would install one after another
//! from V to the head, as `olm catalog upgrade-path` walks them ([`upgrade::upgrade_path`]).
//!
//! The installed bundle V itself is not kept: a cluster that runs it needs only what it
//! upgrades to (OLM finds the next step by V's name in `replaces`/`skips` or its version in a
//! `skipRange`, none of which needs V in the catalog). A step OLM takes through a `skipRange`
//! leaves the bundle below it unnamed by any kept entry, which `opm validate` would count as
//! a second channel head; such a kept entry gets `replaces` pointing at the kept bundle below
//! it, an edge OLM offers the same step through, so the channel stays one chain.

use std::collections::{BTreeSet, HashMap};

use semver::Version;

use super::{FilterError, FilterSpec, Select};
use crate::catalog::declcfg::{Channel, DeclarativeConfig};
use crate::catalog::model::Model;
use crate::catalog::upgrade::{self, UpgradeError};

/// The upgrade graphs of the packages filtered with `--upgrade-from`.
pub(super) struct Graphs {
    models: HashMap<String, Model>,
}

impl Graphs {
    /// Builds the model of each package the spec walks (its blobs as the catalog has them),
    /// which fails when the package does not validate.
    pub(super) fn new(cfg: &DeclarativeConfig, spec: &FilterSpec) -> Result<Graphs, FilterError> {
        let mut models = HashMap::new();
        for p in spec.packages() {
            if !matches!(p.select, Select::UpgradeFrom(_)) {
                continue;
            }
            let package = DeclarativeConfig {
                packages: cfg
                    .packages
                    .iter()
                    .filter(|q| q.name == p.name)
                    .cloned()
                    .collect(),
                channels: cfg
                    .channels
                    .iter()
                    .filter(|c| c.package == p.name)
                    .cloned()
                    .collect(),
                bundles: cfg
                    .bundles
                    .iter()
                    .filter(|b| b.package == p.name)
                    .cloned()
                    .collect(),
                ..Default::default()
            };
            let (model, _) =
                Model::from_declcfg_owned(package).map_err(|report| FilterError::UpgradeGraph {
                    package: p.name.clone(),
                    report: Box::new(report),
                })?;
            models.insert(p.name.clone(), model);
        }
        Ok(Graphs { models })
    }

    /// Cuts `ch` to the path from `from` to its head and returns the bundles kept; the inner
    /// error says the channel offers no update from `from` (the caller decides whether that
    /// empties the channel or stops the filter).
    pub(super) fn walk(
        &self,
        ch: &mut Channel,
        from: &Version,
    ) -> Result<Result<BTreeSet<String>, UpgradeError>, FilterError> {
        let Some(model) = self.models.get(&ch.package) else {
            return Ok(Ok(BTreeSet::new()));
        };
        let steps =
            match upgrade::upgrade_path(model, &ch.package, &from.to_string(), Some(&ch.name)) {
                Ok((_, steps)) => steps,
                Err(stuck @ UpgradeError::Stuck { .. }) => return Ok(Err(stuck)),
                Err(error) => {
                    return Err(FilterError::Upgrade {
                        package: ch.package.clone(),
                        channel: ch.name.clone(),
                        error: Box::new(error),
                    });
                }
            };
        let path: Vec<String> = match steps.is_empty() {
            // Already at the head: the head is what there is to keep.
            true => model
                .channel(&ch.package, &ch.name)
                .map(|c| vec![c.head().name.clone()])
                .unwrap_or_default(),
            false => steps.into_iter().map(|s| s.to).collect(),
        };
        ch.entries.retain(|e| path.contains(&e.name));
        for pair in path.windows(2) {
            let (lower, upper) = (&pair[0], &pair[1]);
            let named = ch
                .entries
                .iter()
                .any(|e| e.replaces == *lower || e.skips.contains(lower));
            if !named && let Some(e) = ch.entries.iter_mut().find(|e| e.name == *upper) {
                e.replaces = lower.clone();
            }
        }
        Ok(Ok(path.into_iter().collect()))
    }
}
