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
    total: Option<ProgressBar>,
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
            total: None,
            bytes: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Adds a total bar of `images` images (for mirrors).
    pub fn with_total(mut self, images: u64) -> Self {
        if let Some(m) = &self.multi {
            let bar = m.add(ProgressBar::new(images));
            bar.set_style(style("total: {pos}/{len} images, {msg} [{elapsed}]"));
            bar.set_message("0 B");
            self.total = Some(bar);
        }
        self
    }

    /// A bar for one image of `bytes` bytes.
    pub fn image(&self, name: &str, bytes: u64) -> ImageBar {
        let bar = self.multi.as_ref().map(|m| {
            let bar = ProgressBar::new(bytes);
            let bar = match &self.total {
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
            total: self.total.clone(),
            bytes: self.bytes.clone(),
        }
    }

    pub fn clear(&self) {
        if let Some(t) = &self.total {
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
