//! Registry credentials where container tools keep them, against a real `docker-registry`
//! behind htpasswd: a credential helper named by `credHelpers` and by `credsStore` (a shell
//! script speaking docker's helper protocol, written by the test), the error that lists the
//! files tried, `olm registry login` writing a file `skopeo --authfile` reads, and `logout`.
//! Every `olm` child runs with HOME, XDG_RUNTIME_DIR, XDG_CONFIG_HOME and DOCKER_CONFIG in a
//! temporary directory and REGISTRY_AUTH_FILE unset, so the developer's own files are never
//! read or written; no output may contain the password.
//!
//! Identity tokens need a registry with a token server, which Debian's registry cannot be
//! without a JWT signer: `identity_token_is_traded_for_a_bearer_token` serves a tiny one-image
//! registry and token server of its own on 127.0.0.1 instead.

#[path = "support/registry.rs"]
mod registry;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use registry::{PASSWORD, Registry, USER, Variant, have, skopeo};

/// A temporary home for the `olm` children: every place an auth file can be, and a `bin/`
/// for credential helpers, put first on PATH.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "run", "config", "docker", "bin"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        Home { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// `olm` with the environment of this home only.
    fn olm(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_olm"));
        let path = std::env::join_paths(std::iter::once(self.path("bin")).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .unwrap();
        c.env("HOME", self.path("home"))
            .env("XDG_RUNTIME_DIR", self.path("run"))
            .env("XDG_CONFIG_HOME", self.path("config"))
            .env("DOCKER_CONFIG", self.path("docker"))
            .env_remove("REGISTRY_AUTH_FILE")
            .env_remove("OLM_REGISTRY_CREDS")
            .env_remove("SOURCE_DATE_EPOCH")
            .env("PATH", path);
        c
    }

    fn docker_config(&self, json: &str) {
        std::fs::write(self.path("docker/config.json"), json).unwrap();
    }

    /// Writes `docker-credential-<name>`: it logs each call to `<name>.log`, answers the
    /// registry `addr` with the test user, and says "not found" for any other.
    fn helper(&self, name: &str, addr: &str) {
        let log = self.path(&format!("{name}.log"));
        let script = format!(
            r#"#!/bin/sh
url=$(cat)
echo "$1 $url" >> '{log}'
[ "$1" = get ] || exit 1
if [ "$url" = '{addr}' ]; then
  printf '{{"ServerURL":"%s","Username":"{USER}","Secret":"{PASSWORD}"}}\n' "$url"
else
  echo 'credentials not found in native keychain'
  exit 1
fi
"#,
            log = log.display()
        );
        self.script(name, &script);
    }

    fn script(&self, name: &str, text: &str) {
        use std::os::unix::fs::PermissionsExt as _;
        let p = self.path(&format!("bin/docker-credential-{name}"));
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn calls(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(&format!("{name}.log"))).unwrap_or_default()
    }
}

/// Runs a command (with `stdin` fed to it); asserts that neither stream holds a secret.
fn run(cmd: &mut Command, stdin: &str, secrets: &[&str]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The command line may hold the password (`-p`): never print it.
    eprintln!(
        "$ {}\n{text}",
        format!("{cmd:?}").replace(PASSWORD, "<password>")
    );
    for s in secrets {
        assert!(!text.contains(s), "output shows a secret:\n{text}");
    }
    out
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn fixture_bundle() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/image/bundle")
}

/// `olm bundle build <fixture> -t <reg>/<repo_tag> --push` plus `extra` flags.
fn push(home: &Home, reg: &Registry, repo_tag: &str, extra: &[&str]) -> Output {
    run(
        home.olm()
            .args(["bundle", "build"])
            .arg(fixture_bundle())
            .args(["-t", &reg.image(repo_tag), "--push"])
            .args(extra),
        "",
        &[PASSWORD],
    )
}

fn assert_ok(out: &Output, what: &str) {
    assert!(out.status.success(), "{what} failed: {}", stderr(out));
}

#[test]
fn cred_helpers_entry_supplies_the_push() {
    let Some(reg) = Registry::start(Variant::Htpasswd) else {
        return;
    };
    let home = Home::new();
    home.helper("olmtest", &reg.addr);
    home.docker_config(&format!(
        r#"{{"credHelpers":{{"{}":"olmtest","other.example":"absent"}}}}"#,
        reg.addr
    ));
    let out = push(&home, &reg, "test/bundle:helper", &[]);
    assert_ok(&out, "push with credHelpers");
    assert_eq!(home.calls("olmtest"), format!("get {}\n", reg.addr));
}

#[test]
fn creds_store_supplies_the_push() {
    let Some(reg) = Registry::start(Variant::Htpasswd) else {
        return;
    };
    let home = Home::new();
    home.helper("olmstore", &reg.addr);
    // What Docker Desktop writes: an empty `auths` entry, the secret in the store.
    home.docker_config(&format!(
        r#"{{"auths":{{"{}":{{}}}},"credsStore":"olmstore"}}"#,
        reg.addr
    ));
    let out = push(&home, &reg, "test/bundle:store", &[]);
    assert_ok(&out, "push with credsStore");
    assert!(home.calls("olmstore").contains(&reg.addr));
}

#[test]
fn without_credentials_the_error_lists_the_files_tried() {
    let Some(reg) = Registry::start(Variant::Htpasswd) else {
        return;
    };
    let home = Home::new();
    let out = push(&home, &reg, "test/bundle:none", &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    let want = format!(
        "{}: authentication required (HEAD manifest test/bundle@sha256:",
        reg.addr
    );
    assert!(err.contains(&want), "{err}");
    let tried = format!(
        "no credentials for {} in $XDG_RUNTIME_DIR/containers/auth.json (absent), \
         $XDG_CONFIG_HOME/containers/auth.json (absent), $DOCKER_CONFIG/config.json (absent); \
         log in with `olm registry login {}` or pass --creds USER:PASSWORD",
        reg.addr, reg.addr
    );
    assert!(err.contains(&tried), "{err}");

    // A store that holds nothing for the registry is named; a file with no entry says which
    // parts were read.
    home.helper("olmstore", "elsewhere.example");
    home.docker_config(r#"{"credsStore":"olmstore"}"#);
    std::fs::create_dir_all(home.path("config/containers")).unwrap();
    std::fs::write(
        home.path("config/containers/auth.json"),
        r#"{"auths":{"quay.io":{"auth":"eDp5"}}}"#,
    )
    .unwrap();
    let out = push(&home, &reg, "test/bundle:none", &[]);
    let err = stderr(&out);
    assert!(
        err.contains(
            "$XDG_CONFIG_HOME/containers/auth.json (credHelpers/auths/credsStore), \
             $DOCKER_CONFIG/config.json (docker-credential-olmstore has none)"
        ),
        "{err}"
    );

    // --authfile is the only file read.
    let named = home.path("named.json");
    let out = push(
        &home,
        &reg,
        "test/bundle:none",
        &["--authfile", named.to_str().unwrap()],
    );
    let err = stderr(&out);
    let want = format!(
        "no credentials for {} in --authfile {} (absent);",
        reg.addr,
        named.display()
    );
    assert!(err.contains(&want), "{err}");
}

#[test]
fn a_missing_or_failing_helper_is_an_error_naming_it() {
    let Some(reg) = Registry::start(Variant::Htpasswd) else {
        return;
    };
    let home = Home::new();
    home.docker_config(&format!(r#"{{"credHelpers":{{"{}":"nosuch"}}}}"#, reg.addr));
    let out = push(&home, &reg, "test/bundle:h", &[]);
    assert_eq!(out.status.code(), Some(1));
    let want = format!(
        "{}: credential helper docker-credential-nosuch (credHelpers in \
         $DOCKER_CONFIG/config.json) is not on PATH",
        reg.addr
    );
    assert!(stderr(&out).contains(&want), "{}", stderr(&out));

    home.script(
        "locked",
        "#!/bin/sh\ncat >/dev/null\necho 'keychain is locked' >&2\nexit 1\n",
    );
    home.docker_config(r#"{"credsStore":"locked"}"#);
    let out = push(&home, &reg, "test/bundle:h", &[]);
    assert_eq!(out.status.code(), Some(1));
    let want = format!(
        "{}: credential helper docker-credential-locked (credsStore in \
         $DOCKER_CONFIG/config.json) failed: keychain is locked",
        reg.addr
    );
    assert!(stderr(&out).contains(&want), "{}", stderr(&out));
}

#[test]
fn login_writes_a_file_skopeo_reads_and_logout_ends_it() {
    if !have("skopeo") {
        return;
    }
    let Some(reg) = Registry::start(Variant::Htpasswd) else {
        return;
    };
    let home = Home::new();
    let authfile = home.path("auth.json");
    let flag = ["--authfile", authfile.to_str().unwrap()];

    let wrong = "not-the-Password-42";
    let login = |password: &str| {
        let mut cmd = home.olm();
        cmd.args([
            "registry",
            "login",
            &reg.addr,
            "-u",
            USER,
            "--password-stdin",
        ]);
        run(cmd.args(flag), &format!("{password}\n"), &[wrong, PASSWORD])
    };

    // A wrong password is refused by the registry and writes nothing.
    let out = login(wrong);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("login refused"), "{err}");
    assert!(!authfile.exists());

    let out = login(PASSWORD);
    assert_ok(&out, "olm registry login");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Login Succeeded!\n");
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(&authfile).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    // olm pushes with it; skopeo reads the image with it.
    assert_ok(
        &push(&home, &reg, "test/bundle:login", &flag),
        "push with the login",
    );
    let info = skopeo(&[
        "inspect".into(),
        "--tls-verify=false".into(),
        "--authfile".into(),
        authfile.display().to_string(),
        format!("docker://{}", reg.image("test/bundle:login")),
    ]);
    assert!(
        info.status.success(),
        "skopeo inspect --authfile: {}",
        String::from_utf8_lossy(&info.stderr)
    );

    let out = run(
        home.olm()
            .args(["registry", "logout", &reg.addr])
            .args(flag),
        "",
        &[PASSWORD],
    );
    assert_ok(&out, "olm registry logout");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("Removed login credentials for {}\n", reg.addr)
    );
    let out = push(&home, &reg, "test/bundle:after", &flag);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("authentication required"),
        "{}",
        stderr(&out)
    );
    let out = run(
        home.olm()
            .args(["registry", "logout", &reg.addr])
            .args(flag),
        "",
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not logged in"), "{}", stderr(&out));
}

#[test]
fn login_without_authfile_writes_where_podman_does_and_olm_reads_it_back() {
    let Some(reg) = Registry::start(Variant::Htpasswd) else {
        return;
    };
    let home = Home::new();
    // Without DOCKER_CONFIG and REGISTRY_AUTH_FILE, podman writes to the runtime directory.
    let out = run(
        home.olm()
            .env_remove("DOCKER_CONFIG")
            .args(["registry", "login", &format!("https://{}/", reg.addr)])
            .args(["-u", USER, "-p", PASSWORD]),
        "",
        &[PASSWORD],
    );
    assert_ok(&out, "olm registry login -p");
    assert!(
        stderr(&out).contains("visible to other users"),
        "{}",
        stderr(&out)
    );
    let written = home.path("run/containers/auth.json");
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&written).unwrap()).unwrap();
    assert!(file["auths"][&reg.addr]["auth"].is_string(), "{file}");
    assert_ok(&push(&home, &reg, "test/bundle:podman", &[]), "push");

    // With DOCKER_CONFIG set, podman writes docker's file; logout edits the same one.
    let out = run(
        home.olm().args([
            "registry",
            "login",
            &reg.addr,
            "-u",
            USER,
            "--password-stdin",
        ]),
        PASSWORD,
        &[PASSWORD],
    );
    assert_ok(&out, "olm registry login to $DOCKER_CONFIG");
    assert!(home.path("docker/config.json").exists());
    let out = run(
        home.olm().args(["registry", "logout", &reg.addr]),
        "",
        &[PASSWORD],
    );
    assert_ok(&out, "olm registry logout");
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.path("docker/config.json")).unwrap()).unwrap();
    assert_eq!(file["auths"], serde_json::json!({}));
}

#[test]
fn login_takes_the_tls_flags_and_other_password_sources() {
    let Some(reg) = Registry::start(Variant::Tls) else {
        return;
    };
    let home = Home::new();
    let authfile = home.path("auth.json");
    let secret = "tls-Pa55word";
    let login = |extra: &[&str], stdin: &str| {
        run(
            home.olm()
                .args(["registry", "login", &reg.addr, "--authfile"])
                .arg(&authfile)
                .args(extra),
            stdin,
            &[secret],
        )
    };
    // The registry's certificate is checked as for any registry command.
    let out = login(&["-u", "someone", "--password-stdin"], secret);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--ca-file"), "{}", stderr(&out));
    let ca = reg.ca_cert();
    let ca_flag = ["--ca-file", ca.to_str().unwrap()];
    // This registry asks for no login: it lets anyone in, so the login succeeds.
    let out = login(
        &[&ca_flag[..], &["-u", "someone", "--password-stdin"]].concat(),
        secret,
    );
    assert_ok(&out, "login with --ca-file");
    assert!(authfile.exists());

    // --creds (or OLM_REGISTRY_CREDS) are the credentials when no user is given.
    std::fs::remove_file(&authfile).unwrap();
    let creds = format!("someone:{secret}");
    let out = login(&[&ca_flag[..], &["--creds", &creds]].concat(), "");
    assert_ok(&out, "login with --creds");
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&authfile).unwrap()).unwrap();
    assert!(file["auths"][&reg.addr]["auth"].is_string(), "{file}");

    // Nothing to ask on: stdin is not a terminal here.
    let out = login(&ca_flag, "");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not a terminal"), "{}", stderr(&out));
    let out = login(&[&ca_flag[..], &["--password-stdin"]].concat(), secret);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("needs --username"),
        "{}",
        stderr(&out)
    );
}

mod identity_token {
    //! A one-image registry whose `/v2/` asks for a bearer token, and its token server, which
    //! takes only the refresh-token grant: enough to see an identity token traded and used.

    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};

    use axum::body::Bytes;
    use axum::extract::{Path, State};
    use axum::http::{HeaderMap, StatusCode, header};
    use axum::response::{IntoResponse, Response};
    use axum::routing::{get, post};

    pub const REFRESH: &str = "refresh-S3cret-token";
    pub const ACCESS: &str = "access-token-42";

    #[derive(Default)]
    pub struct Seen {
        /// The form fields of each token request.
        pub token_requests: Vec<BTreeMap<String, String>>,
    }

    #[derive(Clone)]
    struct App {
        addr: String,
        manifest: Bytes,
        config: Bytes,
        config_digest: String,
        seen: Arc<Mutex<Seen>>,
    }

    fn sha256(b: &[u8]) -> String {
        use sha2::Digest as _;
        format!("sha256:{}", hex::encode(sha2::Sha256::digest(b)))
    }

    fn authorized(headers: &HeaderMap) -> bool {
        headers
            .get(header::AUTHORIZATION)
            .is_some_and(|v| v == format!("Bearer {ACCESS}").as_str())
    }

    fn challenge(app: &App) -> Response {
        let value = format!(
            r#"Bearer realm="http://{}/token",service="fake-registry""#,
            app.addr
        );
        (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, value)],
        )
            .into_response()
    }

    async fn v2(State(app): State<App>, headers: HeaderMap) -> Response {
        if authorized(&headers) {
            StatusCode::OK.into_response()
        } else {
            challenge(&app)
        }
    }

    async fn token(State(app): State<App>, body: String) -> Response {
        let url = reqwest::Url::parse(&format!("http://form.invalid/?{body}")).unwrap();
        let form: BTreeMap<String, String> = url.query_pairs().into_owned().collect();
        let good = form.get("grant_type").map(String::as_str) == Some("refresh_token")
            && form.get("refresh_token").map(String::as_str) == Some(REFRESH);
        app.seen.lock().unwrap().token_requests.push(form);
        if good {
            let body = format!(r#"{{"access_token":"{ACCESS}","expires_in":300}}"#);
            (StatusCode::OK, body).into_response()
        } else {
            (StatusCode::BAD_REQUEST, r#"{"error":"invalid_grant"}"#).into_response()
        }
    }

    async fn manifest(
        State(app): State<App>,
        Path((ns, name, tag)): Path<(String, String, String)>,
        headers: HeaderMap,
    ) -> Response {
        if !authorized(&headers) {
            return challenge(&app);
        }
        if (ns.as_str(), name.as_str(), tag.as_str()) != ("test", "img", "v1") {
            return StatusCode::NOT_FOUND.into_response();
        }
        let digest = sha256(&app.manifest);
        (
            [
                (
                    header::CONTENT_TYPE,
                    "application/vnd.oci.image.manifest.v1+json".to_string(),
                ),
                (
                    header::HeaderName::from_static("docker-content-digest"),
                    digest,
                ),
            ],
            app.manifest.clone(),
        )
            .into_response()
    }

    async fn blob(
        State(app): State<App>,
        Path((_, _, digest)): Path<(String, String, String)>,
        headers: HeaderMap,
    ) -> Response {
        if !authorized(&headers) {
            return challenge(&app);
        }
        if digest != app.config_digest {
            return StatusCode::NOT_FOUND.into_response();
        }
        app.config.clone().into_response()
    }

    /// Serves on 127.0.0.1 until the returned sender is dropped; returns the address.
    pub fn serve(seen: Arc<Mutex<Seen>>) -> (String, tokio::sync::oneshot::Sender<()>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let config = Bytes::from_static(
            br#"{"architecture":"amd64","os":"linux","config":{},"rootfs":{"type":"layers","diff_ids":[]}}"#,
        );
        let config_digest = sha256(&config);
        let manifest_bytes = Bytes::from(format!(
            r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"{config_digest}","size":{}}},"layers":[]}}"#,
            config.len()
        ));
        let app = App {
            addr: addr.clone(),
            manifest: manifest_bytes,
            config,
            config_digest,
            seen,
        };
        let router = axum::Router::new()
            .route("/v2/", get(v2))
            .route("/token", post(token))
            .route("/v2/{ns}/{name}/manifests/{tag}", get(manifest))
            .route("/v2/{ns}/{name}/blobs/{digest}", get(blob))
            .with_state(app);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, router)
                    .with_graceful_shutdown(async {
                        let _ = rx.await;
                    })
                    .await
                    .unwrap();
            });
        });
        (addr, tx)
    }
}

#[test]
fn identity_token_is_traded_for_a_bearer_token() {
    use identity_token::{ACCESS, REFRESH, Seen};
    use olm_bundler::image::registry::{RegistryClient, RegistryError, RegistryOptions};
    use std::sync::{Arc, Mutex};

    let seen = Arc::new(Mutex::new(Seen::default()));
    let (addr, _stop) = identity_token::serve(seen.clone());
    let home = Home::new();
    // docker's form: the identity token beside a user name in `auth`.
    use base64::Engine as _;
    let user = base64::engine::general_purpose::STANDARD.encode("someone:");
    home.docker_config(&format!(
        r#"{{"auths":{{"{addr}":{{"auth":"{user}","identitytoken":"{REFRESH}"}}}}}}"#
    ));
    let out = run(
        home.olm()
            .args(["image", "inspect", &format!("{addr}/test/img:v1")]),
        "",
        &[REFRESH, ACCESS],
    );
    assert_ok(&out, "olm image inspect with an identity token");
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(info["Os"], "linux");
    {
        let seen = seen.lock().unwrap();
        let form = seen.token_requests.first().expect("a token request");
        let want: Vec<(&str, &str)> = vec![
            ("client_id", "olm"),
            ("grant_type", "refresh_token"),
            ("refresh_token", REFRESH),
            ("scope", "repository:test/img:pull"),
            ("service", "fake-registry"),
        ];
        let got: Vec<(&str, &str)> = form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(got, want);
    }

    // A token the server does not take: bad credentials, named by where they came from.
    home.docker_config(&format!(
        r#"{{"auths":{{"{addr}":{{"identitytoken":"expired-S3cret"}}}}}}"#
    ));
    let out = run(
        home.olm()
            .args(["image", "inspect", &format!("{addr}/test/img:v1")]),
        "",
        &["expired-S3cret"],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("authentication failed")
            && err.contains(&format!("$DOCKER_CONFIG/config.json (auths entry {addr})")),
        "{err}"
    );

    // The login check goes through the same exchange, with no scope.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let check = |token: &str| {
        let file = home.path("login-check.json");
        std::fs::write(
            &file,
            format!(r#"{{"auths":{{"{addr}":{{"identitytoken":"{token}"}}}}}}"#),
        )
        .unwrap();
        let opts = RegistryOptions {
            authfile: Some(file),
            plain_http: true,
            ..RegistryOptions::default()
        };
        rt.block_on(async {
            RegistryClient::connect(&addr, &opts)
                .await
                .unwrap()
                .check_login()
                .await
        })
    };
    check(REFRESH).unwrap();
    let err = check("nope").unwrap_err();
    assert!(matches!(err, RegistryError::BadCredentials { .. }), "{err}");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.token_requests.last().unwrap()["scope"], "");
}
