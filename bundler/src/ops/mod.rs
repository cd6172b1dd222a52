//! One module per user operation: plain functions over plain option structs, returning an
//! outcome for the CLI to print (cargo's `ops`). They compose the domain modules; they hold no
//! clap types and print nothing, so every operation runs as a library call in tests.

pub mod bundle_generate;
pub mod bundle_source;
pub mod bundle_validate;
pub mod catalog_filter;
pub mod catalog_migrate;
pub mod catalog_render;
pub mod catalog_site;
pub mod catalog_source;
pub mod catalog_template;
pub mod catalog_validate;
pub mod check;
pub mod deploy_generate;
pub mod image_output;
pub mod image_trust;
pub mod install;
pub mod mirror;
pub mod olmv1;
pub mod progress;
pub mod prompt;
pub mod registry_login;
pub mod release;
pub mod scorecard;
pub mod serve;
pub mod upgrade_check;
