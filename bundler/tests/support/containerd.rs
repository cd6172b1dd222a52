//! A real containerd for tests (Debian's `containerd` and `ctr`): its own root, state and
//! socket under a temp dir, the CRI plugin and the snapshotters a test does not need turned
//! off, so it runs beside any containerd of the machine. Needs root: without it the caller
//! skips (or fails under CI). Killed on drop.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

// The test crate includes registry.rs too (its prerequisite module decides skip or fail).
use crate::registry::prerequisite;

pub struct Containerd {
    pub dir: tempfile::TempDir,
    socket: PathBuf,
    log: PathBuf,
    child: Child,
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

impl Containerd {
    /// Starts containerd, or returns `None` after [`prerequisite::missing`] when it is not
    /// installed or the test does not run as root.
    pub fn start() -> Option<Containerd> {
        if !["containerd", "ctr"]
            .iter()
            .all(|t| crate::registry::have(t))
        {
            return None;
        }
        if !is_root() {
            prerequisite::missing("containerd needs root");
            return None;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        let socket = root.join("c.sock");
        let config = root.join("config.toml");
        std::fs::write(
            &config,
            format!(
                "version = 2\nroot = \"{root}/root\"\nstate = \"{root}/state\"\n\
disabled_plugins = [\"io.containerd.grpc.v1.cri\", \"io.containerd.snapshotter.v1.aufs\", \
\"io.containerd.snapshotter.v1.btrfs\", \"io.containerd.snapshotter.v1.devmapper\", \
\"io.containerd.snapshotter.v1.zfs\", \"io.containerd.tracing.processor.v1.otlp\", \
\"io.containerd.internal.v1.tracing\"]\n\n\
[grpc]\n  address = \"{sock}\"\n\n[ttrpc]\n  address = \"{sock}.ttrpc\"\n\n\
[debug]\n  address = \"\"\n\n[metrics]\n  address = \"\"\n",
                root = root.display(),
                sock = socket.display()
            ),
        )
        .expect("write the containerd config");
        let log = root.join("containerd.log");
        let file = std::fs::File::create(&log).expect("containerd log");
        let mut child = Command::new("containerd")
            .arg("--config")
            .arg(&config)
            .stdout(Stdio::from(file.try_clone().expect("dup log")))
            .stderr(Stdio::from(file))
            .spawn()
            .expect("start containerd");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = child.try_wait().expect("containerd status") {
                panic!(
                    "containerd exited ({status}):\n{}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
            let up = socket.exists()
                && Command::new("ctr")
                    .arg("--address")
                    .arg(&socket)
                    .arg("version")
                    .output()
                    .is_ok_and(|o| o.status.success());
            if up {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "containerd did not start:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(Containerd {
            dir,
            socket,
            log,
            child,
        })
    }

    /// `ctr images pull --hosts-dir <hosts_dir> <reference>` (the native snapshotter, so no
    /// overlay mount is needed).
    pub fn pull(&self, hosts_dir: &Path, reference: &str) -> Output {
        Command::new("ctr")
            .arg("--address")
            .arg(&self.socket)
            .args(["--namespace", "olmtest", "images", "pull"])
            .args(["--snapshotter", "native", "--hosts-dir"])
            .arg(hosts_dir)
            .arg(reference)
            .output()
            .expect("run ctr")
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Containerd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
