use super::super::layer::{LayerBuilder, Owner};
use super::super::model::ImageBuilder;
use super::*;

#[test]
fn layers_apply_in_order_with_whiteouts() {
    let mut a = LayerBuilder::new(0);
    a.file("etc/keep", &b"1"[..], 0o644, Owner::Root).unwrap();
    a.file("etc/gone", &b"2"[..], 0o644, Owner::Root).unwrap();
    a.file("opq/x", &b"3"[..], 0o644, Owner::Root).unwrap();
    let mut b = LayerBuilder::new(0);
    b.file("etc/.wh.gone", &b""[..], 0o644, Owner::Root)
        .unwrap();
    b.file("opq/.wh..wh..opq", &b""[..], 0o644, Owner::Root)
        .unwrap();
    b.file("etc/keep", &b"new"[..], 0o755, Owner::Root).unwrap();
    let image = ImageBuilder::new("linux", "amd64", 0)
        .layer(a.finish().unwrap(), "a")
        .layer(b.finish().unwrap(), "b")
        .build();
    let dir = tempfile::tempdir().unwrap();
    unpack_image(&image, dir.path()).unwrap();
    assert_eq!(std::fs::read(dir.path().join("etc/keep")).unwrap(), b"new");
    assert!(!dir.path().join("etc/gone").exists());
    assert!(!dir.path().join("opq/x").exists());
}
