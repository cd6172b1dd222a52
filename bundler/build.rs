//! Compiles the gRPC definitions with protox (pure Rust), so building needs no `protoc`; links
//! `olm` with its hot code grouped where the build allows it.

#[path = "link/hot_text.rs"]
mod hot_text;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    hot_text();
    let protos = ["proto/registry.proto", "proto/serve_cache.proto"];
    for p in protos {
        println!("cargo:rerun-if-changed={p}");
    }
    let mut compiler = protox::Compiler::new(["proto"])?;
    compiler.include_imports(true).open_files(protos)?;
    // Server reflection serves this encoded descriptor set (with google/protobuf/struct.proto).
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("registry_descriptor.bin"),
        compiler.encode_file_descriptor_set(),
    )?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(compiler.file_descriptor_set())?;
    Ok(())
}

/// Links `olm` with the code its everyday commands run grouped together (see
/// link/hot-text.ld) where that applies: see link/hot_text.rs.
fn hot_text() {
    println!("cargo:rerun-if-changed=link/hot_text.rs");
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    hot_text::configure(&std::path::Path::new(&dir).join("link/hot-text.ld"), "olm");
}
