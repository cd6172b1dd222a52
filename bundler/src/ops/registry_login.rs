//! `olm registry login` and `logout`: check a user's credentials against the registry
//! (`GET /v2/` through its auth flow), then store them where podman and skopeo read them, or
//! remove them again. Which file: [`Env::login_file`].

use std::io::Read as _;
use std::path::Path;

use crate::image::auth::{self, AuthError, AuthFile, Credentials, Env};
use crate::image::registry::{RegistryClient, RegistryError, RegistryOptions};
use crate::ops::prompt;

/// Where the password comes from.
#[derive(Debug)]
pub enum Password {
    /// `-p PASSWORD` (visible to other users of the machine: a warning says so).
    Given(String),
    /// `--password-stdin`: all of stdin, less one trailing newline.
    Stdin,
    /// Not given: `--creds` (or `OLM_REGISTRY_CREDS`) when set and no user name was given,
    /// else asked on the terminal without echo.
    Prompt,
}

impl Password {
    /// From the flags: `-p PASSWORD`, `--password-stdin`, or neither.
    pub fn from_flags(given: Option<String>, stdin: bool) -> Password {
        match (given, stdin) {
            (Some(p), _) => Password::Given(p),
            (None, true) => Password::Stdin,
            (None, false) => Password::Prompt,
        }
    }
}

#[derive(Debug)]
pub struct LoginRequest {
    /// As typed: `quay.io`, `https://127.0.0.1:5000/`, `https://index.docker.io/v1/`.
    pub registry: String,
    /// Asked on the terminal when not given.
    pub username: Option<String>,
    pub password: Password,
}

/// Where a login was stored, or removed from.
#[derive(Debug)]
pub struct Stored {
    /// `host[:port]`, as the auth file keys it.
    pub registry: String,
    pub file: AuthFile,
    pub logged_in: bool,
}

/// What podman prints: `Login Succeeded!`, `Removed login credentials for quay.io`.
impl std::fmt::Display for Stored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.logged_in {
            true => write!(f, "Login Succeeded!"),
            false => write!(f, "Removed login credentials for {}", self.registry),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// A usage mistake (exit 2).
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Auth(#[from] AuthError),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("cannot read the {what}: {source}")]
    Input {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("{registry}: login refused: the registry rejected the user name or password")]
    Rejected { registry: String },
    #[error("{registry}: not logged in: {file} has no entry for it")]
    NotLoggedIn { registry: String, file: String },
}

fn registry_host(input: &str) -> Result<String, LoginError> {
    auth::registry_host(input).map_err(|e| LoginError::Usage(e.to_string()))
}

fn input(what: &'static str) -> impl FnOnce(std::io::Error) -> LoginError {
    move |source| LoginError::Input { what, source }
}

/// Checks the credentials against the registry, then writes them into the login file
/// (`opts.authfile`, else podman's choice); nothing is written when the registry refuses them.
pub async fn login(req: LoginRequest, opts: &RegistryOptions) -> Result<Stored, LoginError> {
    let registry = registry_host(&req.registry)?;
    let req = match (&req.username, &req.password, &opts.creds) {
        (None, Password::Prompt, Some(c)) => LoginRequest {
            username: Some(c.username.clone()),
            password: Password::Given(c.password().to_string()),
            ..req
        },
        (_, Password::Given(_), _) => {
            tracing::warn!(
                "a password on the command line is visible to other users; prefer --password-stdin"
            );
            req
        }
        _ => req,
    };
    let ask = |what: &str| {
        if prompt::can_ask() {
            Ok(())
        } else {
            Err(LoginError::Usage(format!(
                "no {what}: stdin is not a terminal to ask on; pass --username and \
                 --password-stdin"
            )))
        }
    };
    let username = match (req.username, &req.password) {
        (Some(u), _) => u,
        (None, Password::Stdin) => {
            return Err(LoginError::Usage(
                "--password-stdin needs --username".into(),
            ));
        }
        (None, _) => {
            ask("user name")?;
            prompt::line("Username: ").map_err(input("user name"))?
        }
    };
    let password = match req.password {
        Password::Given(p) => p,
        Password::Stdin => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(input("password from stdin"))?;
            let text = text.strip_suffix('\n').unwrap_or(&text);
            text.strip_suffix('\r').unwrap_or(text).to_string()
        }
        Password::Prompt => {
            ask("password")?;
            prompt::secret("Password: ").map_err(input("password"))?
        }
    };
    if username.is_empty() || password.is_empty() {
        return Err(LoginError::Usage(
            "a user name and a password are both needed".into(),
        ));
    }
    let creds = Credentials::new(username, password);
    let opts = RegistryOptions {
        creds: Some(creds.clone()),
        ..opts.clone()
    };
    let client = RegistryClient::connect(&registry, &opts).await?;
    match client.check_login().await {
        Err(RegistryError::BadCredentials { .. }) => {
            return Err(LoginError::Rejected { registry });
        }
        other => other?,
    }
    let file = Env::from_process().login_file(opts.authfile.as_deref());
    auth::store_login(&file.path, &registry, &creds)?;
    tracing::debug!(registry, file = %file.path.display(), "login stored");
    Ok(Stored {
        registry,
        file,
        logged_in: true,
    })
}

/// Removes the registry's entries from the login file; an error when it has none.
pub fn logout(registry: &str, authfile: Option<&Path>) -> Result<Stored, LoginError> {
    let registry = registry_host(registry)?;
    let file = Env::from_process().login_file(authfile);
    if !auth::remove_login(&file.path, &registry)? {
        return Err(LoginError::NotLoggedIn {
            registry,
            file: file.shown,
        });
    }
    Ok(Stored {
        registry,
        file,
        logged_in: false,
    })
}
