//! A real registry for tests: the Debian `docker-registry` (distribution 2.8) on
//! 127.0.0.1:<random port>, in a temp dir with a generated config, in one of three variants:
//! plain HTTP, htpasswd basic auth (bcrypt entries from `htpasswd -Bbn`), or TLS with a
//! self-signed CA made by `openssl`. Killed on drop.
//!
//! Also helpers for `skopeo`, the independent client the tests check our images with.

#![allow(dead_code)]

#[path = "prerequisite.rs"]
pub mod prerequisite;

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const USER: &str = "olmtest";
pub const PASSWORD: &str = "s3cret-Pa55";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Plain,
    Htpasswd,
    Tls,
}

/// Whether `tool` is on PATH; when it is not, fails under CI or prints a SKIP line
/// ([`prerequisite::missing`]).
pub fn have(tool: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(tool).is_file()));
    if !found {
        prerequisite::missing(&format!("{tool} not installed"));
    }
    found
}

pub struct Registry {
    pub variant: Variant,
    /// `127.0.0.1:<port>`.
    pub addr: String,
    pub dir: tempfile::TempDir,
    config: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Starts `docker-registry serve config`, logging to `log`, and waits until it listens on
/// `addr`; `None` when it exited instead (its port was taken meanwhile).
fn serve(config: &Path, log: &Path, addr: &str) -> Option<Child> {
    let read_log = || std::fs::read_to_string(log).unwrap_or_default();
    let listening_before = read_log().matches("listening on").count();
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("open registry log");
    let mut child = Command::new("docker-registry")
        .arg("serve")
        .arg(config)
        .stdout(Stdio::from(file.try_clone().expect("dup log")))
        .stderr(Stdio::from(file))
        .spawn()
        .expect("start docker-registry");
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if child.try_wait().ok().flatten().is_some() {
            return None;
        }
        if read_log().matches("listening on").count() > listening_before
            && TcpStream::connect(addr).is_ok()
        {
            return Some(child);
        }
        assert!(
            Instant::now() < deadline,
            "registry did not start; log:\n{}",
            read_log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    l.local_addr().expect("local addr").port()
}

impl Registry {
    /// Starts a registry, or returns `None` (after [`prerequisite::missing`]) when a tool is
    /// missing.
    pub fn start(variant: Variant) -> Option<Registry> {
        let mut tools = vec!["docker-registry"];
        match variant {
            Variant::Plain => {}
            Variant::Htpasswd => tools.push("htpasswd"),
            Variant::Tls => tools.push("openssl"),
        }
        if !tools.iter().all(|t| have(t)) {
            return None;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        let mut extra = String::new();
        match variant {
            Variant::Plain => {}
            Variant::Htpasswd => {
                let out = run(Command::new("htpasswd").args(["-Bbn", USER, PASSWORD]));
                std::fs::write(root.join("htpasswd"), &out.stdout).expect("write htpasswd");
                extra.push_str(&format!(
                    "auth:\n  htpasswd:\n    realm: olm-test\n    path: {}\n",
                    root.join("htpasswd").display()
                ));
            }
            Variant::Tls => {
                make_certs(root);
                extra.push_str(&format!(
                    "  tls:\n    certificate: {}\n    key: {}\n",
                    root.join("server.crt").display(),
                    root.join("server.key").display()
                ));
            }
        }
        let (http_extra, auth_extra) = if variant == Variant::Tls {
            (extra, String::new())
        } else {
            (String::new(), extra)
        };
        let data = root.join("data");
        let config_path = root.join("config.yml");
        let log = root.join("registry.log");
        // A free port can be taken by another test's registry between finding it and binding
        // it: then this one exits, and the next port is tried.
        for _ in 0..10 {
            let addr = format!("127.0.0.1:{}", free_port());
            let config = format!(
                "version: 0.1\nlog:\n  level: info\n  formatter: text\n  accesslog:\n    disabled: false\n\
storage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\n  maintenance:\n    uploadpurging:\n      enabled: false\n\
http:\n  addr: {addr}\n  secret: olm-test-secret\n{http_extra}{auth_extra}",
                data.display()
            );
            std::fs::write(&config_path, config).expect("write config");
            if let Some(child) = serve(&config_path, &log, &addr) {
                return Some(Registry {
                    variant,
                    addr,
                    config: config_path,
                    log,
                    dir,
                    child: Some(child),
                });
            }
        }
        panic!(
            "docker-registry did not start on any of 10 ports; log:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        )
    }

    /// Kills the registry process (SIGKILL), as a crash would.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again on the same port with the same storage.
    pub fn restart(&mut self) {
        self.kill();
        self.child = serve(&self.config, &self.log, &self.addr);
        assert!(
            self.child.is_some(),
            "registry did not restart on {}",
            self.addr
        );
    }

    /// Stops the registry, runs `docker-registry garbage-collect --delete-untagged` on its
    /// storage (what an operator's cleanup job does), and starts it again; the collector's
    /// output.
    pub fn garbage_collect_untagged(&mut self) -> String {
        self.kill();
        let out = run(Command::new("docker-registry")
            .args(["garbage-collect", "--delete-untagged"])
            .arg(&self.config));
        self.restart();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Registry storage root (to watch uploads in progress).
    pub fn storage(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Whether an upload session holds data: a push is under way (to kill it mid-upload).
    pub fn uploading(&self) -> bool {
        fn walk(p: &Path) -> bool {
            let Ok(rd) = std::fs::read_dir(p) else {
                return false;
            };
            rd.filter_map(Result::ok).any(|e| {
                let path = e.path();
                if e.file_name() == "_uploads" {
                    std::fs::read_dir(&path).is_ok_and(|mut r| r.next().is_some())
                } else {
                    path.is_dir() && walk(&path)
                }
            })
        }
        walk(&self.storage())
    }

    pub fn ca_cert(&self) -> PathBuf {
        self.dir.path().join("ca.crt")
    }

    /// A reference to `repo:tag` in this registry.
    pub fn image(&self, repo_tag: &str) -> String {
        format!("{}/{repo_tag}", self.addr)
    }

    /// The flags `olm` needs to talk to this registry.
    pub fn olm_args(&self) -> Vec<String> {
        match self.variant {
            Variant::Plain => vec![],
            Variant::Htpasswd => vec!["--creds".into(), format!("{USER}:{PASSWORD}")],
            Variant::Tls => vec!["--ca-file".into(), self.ca_cert().display().to_string()],
        }
    }

    /// The flags skopeo needs to read from this registry (`--src-*`).
    pub fn skopeo_src_args(&self) -> Vec<String> {
        match self.variant {
            Variant::Plain => vec!["--src-tls-verify=false".into()],
            Variant::Htpasswd => vec![
                "--src-tls-verify=false".into(),
                "--src-creds".into(),
                format!("{USER}:{PASSWORD}"),
            ],
            Variant::Tls => vec![
                "--src-cert-dir".into(),
                self.dir.path().join("certs.d").display().to_string(),
            ],
        }
    }

    /// What skopeo says of `image` as a node of architecture `arch` would pull it
    /// (`--override-arch`: an index resolves to that platform's image).
    pub fn inspect_as(&self, image: &str, arch: &str) -> serde_json::Value {
        let mut args = vec![
            "--override-arch".to_string(),
            arch.into(),
            "inspect".into(),
            "--no-tags".into(),
        ];
        args.extend(self.skopeo_inspect_args());
        args.push(format!("docker://{image}"));
        let out = skopeo(&args);
        assert!(
            out.status.success(),
            "skopeo inspect of {image} as {arch}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("skopeo inspect prints JSON")
    }

    /// The flags `skopeo inspect` needs (no `--src-` prefix there).
    pub fn skopeo_inspect_args(&self) -> Vec<String> {
        match self.variant {
            Variant::Plain => vec!["--tls-verify=false".into()],
            Variant::Htpasswd => vec![
                "--tls-verify=false".into(),
                "--creds".into(),
                format!("{USER}:{PASSWORD}"),
            ],
            Variant::Tls => vec![
                "--cert-dir".into(),
                self.dir.path().join("certs.d").display().to_string(),
            ],
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A CA and a server certificate for 127.0.0.1/localhost signed by it; the CA also goes into
/// `certs.d/ca.crt` for skopeo's `--cert-dir`.
fn make_certs(root: &Path) {
    let p = |n: &str| root.join(n).display().to_string();
    run(Command::new("openssl").args([
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        &p("ca.key"),
        "-out",
        &p("ca.crt"),
        "-days",
        "3650",
        "-subj",
        "/CN=olm-test-ca",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]));
    run(Command::new("openssl").args([
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        &p("server.key"),
        "-out",
        &p("server.csr"),
        "-subj",
        "/CN=127.0.0.1",
    ]));
    std::fs::write(
        root.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n\
keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .expect("write ext.cnf");
    run(Command::new("openssl").args([
        "x509",
        "-req",
        "-in",
        &p("server.csr"),
        "-CA",
        &p("ca.crt"),
        "-CAkey",
        &p("ca.key"),
        "-CAcreateserial",
        "-out",
        &p("server.crt"),
        "-days",
        "3650",
        "-extfile",
        &p("ext.cnf"),
    ]));
    std::fs::create_dir_all(root.join("certs.d")).expect("certs.d");
    std::fs::copy(root.join("ca.crt"), root.join("certs.d/ca.crt")).expect("copy ca");
}

/// Runs skopeo with a permissive policy (tests check digests themselves).
pub fn skopeo(args: &[String]) -> Output {
    Command::new("skopeo")
        .arg("--insecure-policy")
        .args(args)
        .output()
        .expect("run skopeo")
}

/// An incompressible "binary" of `mib` MiB at `path`: /bin/true with pseudo-random bytes
/// appended (still an ELF the loader accepts), so its layer is as large as its content.
pub fn big_binary(path: &Path, mib: usize) {
    let mut data = std::fs::read("/bin/true").expect("read /bin/true");
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    data.extend((0..mib * 1024 * 1024).map(|_| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as u8
    }));
    std::fs::write(path, &data).expect("write the big binary");
}
