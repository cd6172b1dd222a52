//! Compiles the gRPC definitions with protox (pure Rust), so building needs no `protoc`.

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
/// link/hot-text.ld): on Linux, where GNU ld and lld both take a script that only inserts a
/// section into their default layout.
fn hot_text() {
    let script = "link/hot-text.ld";
    println!("cargo:rerun-if-changed={script}");
    if std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os != "linux") {
        return;
    }
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rustc-link-arg-bin=olm=-Wl,-T,{dir}/{script}");
}
