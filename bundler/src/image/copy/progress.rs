//! Progress of image moves on a terminal: one bar per image (bytes of its blobs) and, when
//! several images move, a total. Hidden unless asked for (the CLI asks on a terminal without
//! `--quiet`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The bars of one engine.
#[derive(Debug, Clone)]
pub struct Progress {
    multi: Option<MultiProgress>,
    /// The total bar, made by the first [`Progress::expect`].
    total: Arc<std::sync::OnceLock<ProgressBar>>,
    bytes: Arc<AtomicU64>,
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
}

impl Progress {
    pub fn new(drawn: bool) -> Self {
        Progress {
            multi: drawn.then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr())),
            total: Arc::new(std::sync::OnceLock::new()),
            bytes: Arc::new(AtomicU64::new(0)),
        }
    }

    /// `images` more images will move (a mirror): the total bar counts them.
    pub fn expect(&self, images: u64) {
        if let Some(m) = &self.multi {
            let bar = self.total.get_or_init(|| {
                let bar = m.add(ProgressBar::new(0));
                bar.set_style(style("total: {pos}/{len} images, {msg} [{elapsed}]"));
                bar.set_message("0 B");
                bar
            });
            bar.inc_length(images);
        }
    }

    /// A bar for one image of `bytes` bytes.
    pub fn image(&self, name: &str, bytes: u64) -> ImageBar {
        let bar = self.multi.as_ref().map(|m| {
            let bar = ProgressBar::new(bytes);
            let bar = match self.total.get() {
                Some(t) => m.insert_before(t, bar),
                None => m.add(bar),
            };
            bar.set_style(style(
                "{msg:40!} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec}",
            ));
            bar.set_message(name.to_string());
            bar
        });
        ImageBar {
            bar,
            total: self.total.get().cloned(),
            bytes: self.bytes.clone(),
        }
    }

    pub fn clear(&self) {
        if let Some(t) = self.total.get() {
            t.finish_and_clear();
        }
        if let Some(m) = &self.multi {
            let _ = m.clear();
        }
    }
}

/// The bar of one image; counts bytes into the total too.
#[derive(Debug, Clone)]
pub struct ImageBar {
    bar: Option<ProgressBar>,
    total: Option<ProgressBar>,
    bytes: Arc<AtomicU64>,
}

impl ImageBar {
    pub fn hidden() -> Self {
        ImageBar {
            bar: None,
            total: None,
            bytes: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Adds `n` bytes moved (or found already there).
    pub fn inc(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
        if let Some(t) = &self.total {
            // The total's position counts images; its bytes show in its message.
            let all = self.bytes.fetch_add(n, Ordering::Relaxed) + n;
            t.set_message(crate::image::human_bytes(all));
        }
    }

    /// The image is done: its bar goes, the total counts it.
    pub fn done(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
        if let Some(t) = &self.total {
            t.inc(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_counts_images_and_bytes_as_they_are_announced() {
        let p = Progress::new(true);
        p.expect(2);
        p.expect(1);
        let total = p.total.get().expect("a total bar").clone();
        assert_eq!(total.length(), Some(3));
        let a = p.image("a", 10);
        a.inc(4);
        a.inc(6);
        a.done();
        assert_eq!(total.position(), 1);
        assert_eq!(p.bytes.load(Ordering::Relaxed), 10);
        // Hidden progress keeps no bars at all.
        let quiet = Progress::new(false);
        quiet.expect(5);
        assert!(quiet.total.get().is_none());
        quiet.image("b", 1).done();
    }
}
