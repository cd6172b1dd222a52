//! `olm registry login|logout`: credentials stored where podman, skopeo and olm read them.

use std::process::ExitCode;

use clap::Subcommand;
use olm_bundler::ops::registry_login::{self, LoginError, LoginRequest, Password};

use super::args::RegistryArgs;
use super::output::{print, usage};

#[derive(Debug, Subcommand)]
pub enum RegistryCommand {
    /// Check a user name and password against a registry, then store them in the auth file
    /// (--authfile, else $REGISTRY_AUTH_FILE, $DOCKER_CONFIG/config.json or
    /// $XDG_RUNTIME_DIR/containers/auth.json, as podman chooses).
    #[command(
        after_help = "Examples:\n  olm registry login quay.io -u me\n  echo \"$TOKEN\" | olm registry login 127.0.0.1:5000 -u ci --password-stdin"
    )]
    Login {
        /// The registry: host[:port].
        registry: String,
        /// User name [default: from --creds, else asked on the terminal].
        #[arg(short, long)]
        username: Option<String>,
        /// Password, seen by anyone listing processes [default: asked without echo].
        #[arg(short, long, conflicts_with = "password_stdin")]
        password: Option<String>,
        /// Read the password from stdin.
        #[arg(long)]
        password_stdin: bool,
        #[command(flatten)]
        registry_args: RegistryArgs,
    },
    /// Remove a registry's credentials from the auth file login writes (or --authfile).
    #[command(after_help = "Examples:\n  olm registry logout quay.io")]
    Logout {
        /// The registry: host[:port].
        registry: String,
        /// The auth file to edit.
        #[arg(long, value_name = "FILE")]
        authfile: Option<std::path::PathBuf>,
    },
}

pub async fn run(cmd: RegistryCommand) -> anyhow::Result<ExitCode> {
    let done = match cmd {
        RegistryCommand::Login {
            registry,
            username,
            password,
            password_stdin,
            registry_args,
        } => {
            let password = Password::from_flags(password, password_stdin);
            let req = LoginRequest {
                registry,
                username,
                password,
            };
            registry_login::login(req, &registry_args.options()?).await
        }
        RegistryCommand::Logout { registry, authfile } => {
            registry_login::logout(&registry, authfile.as_deref())
        }
    };
    match done {
        Ok(stored) => print(&format!("{stored}\n")).map(|()| ExitCode::SUCCESS),
        Err(LoginError::Usage(msg)) => Ok(usage(msg)),
        Err(e) => Err(e.into()),
    }
}
