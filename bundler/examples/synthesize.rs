//! Writes a synthetic catalog of opm's benchmark shape (300 packages, 450 channels, 3,000
//! bundles per unit of scale) for the benchmarks in BENCHMARKS.md:
//!
//!     cargo run --release -p olm-bundler --example synthesize -- DIR [--scale N] [--format yaml|json]

#[path = "../tests/support/synth.rs"]
mod synth;

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut dir = None;
    let mut scale = 1usize;
    let mut syntax = synth::Syntax::Yaml;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--scale" => match args.next().and_then(|v| v.parse().ok()) {
                Some(n) => scale = n,
                None => return usage("--scale takes a whole number"),
            },
            "--format" => match args.next().as_deref() {
                Some("yaml") => syntax = synth::Syntax::Yaml,
                Some("json") => syntax = synth::Syntax::Json,
                _ => return usage("--format takes yaml or json"),
            },
            _ if dir.is_none() && !a.starts_with('-') => dir = Some(a),
            _ => return usage(&format!("unexpected argument {a:?}")),
        }
    }
    let Some(dir) = dir else {
        return usage("the output directory is required");
    };
    match synth::write(
        std::path::Path::new(&dir),
        &synth::Shape::opm(scale),
        syntax,
    ) {
        Ok(bytes) => {
            println!("{dir}: {bytes} bytes");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("error: {msg}\nusage: synthesize DIR [--scale N] [--format yaml|json]");
    ExitCode::from(2)
}
