//! The images a catalog makes a cluster pull: each bundle's image and its `relatedImages`
//! (the operator, its operands), and rewriting them to where a mirror put them.

use std::collections::BTreeMap;

use super::declcfg::DeclarativeConfig;

/// One image and the bundles that reference it (`package/bundle`), for messages such as "an
/// image that cannot be pulled, and the bundle that references it".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageUse {
    pub image: String,
    pub used_by: Vec<String>,
}

/// Every image the catalog's bundles reference, once each, sorted; empty references (a
/// bundle rendered from a directory has no image) are left out.
pub fn referenced(cfg: &DeclarativeConfig) -> Vec<ImageUse> {
    let mut uses: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for b in &cfg.bundles {
        let who = format!("{}/{}", b.package, b.name);
        let images = std::iter::once(b.image.as_str())
            .chain(b.related_images.iter().map(|r| r.image.as_str()))
            .filter(|i| !i.is_empty());
        for image in images {
            let list = uses.entry(image).or_default();
            if !list.contains(&who) {
                list.push(who.clone());
            }
        }
    }
    uses.into_iter()
        .map(|(image, used_by)| ImageUse {
            image: image.to_string(),
            used_by,
        })
        .collect()
}

/// Replaces every bundle image and related image `to` maps (an image it returns `None` for
/// stays). Returns how many references changed.
pub fn rewrite(cfg: &mut DeclarativeConfig, to: impl Fn(&str) -> Option<String>) -> usize {
    let mut changed = 0;
    for b in &mut cfg.bundles {
        let refs =
            std::iter::once(&mut b.image).chain(b.related_images.iter_mut().map(|r| &mut r.image));
        for image in refs {
            if let Some(new) = to(image)
                && new != *image
            {
                *image = new;
                changed += 1;
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::declcfg::{Bundle, RelatedImage};

    fn bundle(name: &str, image: &str, related: &[&str]) -> Bundle {
        Bundle {
            name: name.into(),
            package: "p".into(),
            image: image.into(),
            related_images: related
                .iter()
                .map(|i| RelatedImage {
                    name: String::new(),
                    image: (*i).into(),
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn images_are_listed_once_with_every_bundle_using_them() {
        let cfg = DeclarativeConfig {
            bundles: vec![
                bundle(
                    "p.v1",
                    "q.io/b@sha256:1",
                    &["q.io/b@sha256:1", "q.io/op:v1"],
                ),
                bundle("p.v2", "q.io/b@sha256:2", &["q.io/op:v1", ""]),
            ],
            ..Default::default()
        };
        let uses = referenced(&cfg);
        let names: Vec<&str> = uses.iter().map(|u| u.image.as_str()).collect();
        assert_eq!(names, ["q.io/b@sha256:1", "q.io/b@sha256:2", "q.io/op:v1"]);
        assert_eq!(uses[2].used_by, ["p/p.v1", "p/p.v2"]);
        assert_eq!(uses[0].used_by, ["p/p.v1"]);
    }

    #[test]
    fn rewrite_changes_only_mapped_references() {
        let mut cfg = DeclarativeConfig {
            bundles: vec![bundle(
                "p.v1",
                "q.io/b@sha256:1",
                &["q.io/op:v1", "keep/me:v1"],
            )],
            ..Default::default()
        };
        let n = rewrite(&mut cfg, |i| {
            i.strip_prefix("q.io/")
                .map(|rest| format!("mirror.local/{rest}"))
        });
        assert_eq!(n, 2);
        assert_eq!(cfg.bundles[0].image, "mirror.local/b@sha256:1");
        assert_eq!(cfg.bundles[0].related_images[0].image, "mirror.local/op:v1");
        assert_eq!(cfg.bundles[0].related_images[1].image, "keep/me:v1");
    }
}
