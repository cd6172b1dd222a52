//! Paths named by outside data, and the directory handles they are opened through.
//!
//! An image's labels and layers, a mirror archive's metadata and a catalog's file names are
//! someone else's input. A path they name is parsed once into a [`RelPath`] (plain names
//! only: no absolute path, `..`, empty or NUL component) and opened only through a [`Tree`],
//! relative to a directory handle that cannot leave its root. It never becomes a `PathBuf`
//! joined onto a host path: `bundler/tests/layers.rs` holds the modules that read images and
//! archives to that.

mod rel_path;
mod tree;

pub use rel_path::{PathRefusal, RelPath};
pub use tree::{EntryKind, Meta, Tree, is_escape};
