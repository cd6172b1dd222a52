//! `grpc_health_probe` multi-call mode: when the binary is invoked under that name (the catalog
//! image symlinks `/bin/grpc_health_probe` to `olm`), it behaves like the grpc-ecosystem tool,
//! because OLM before native gRPC probes execs `grpc_health_probe -addr=:50051` in catalog pods.
//!
//! Flags use Go's `flag` syntax (`-addr=:50051`, `-addr :50051`, `--addr=...`). Exit codes are
//! the tool's: 0 SERVING, 1 invalid arguments, 2 connection failure, 3 RPC failure, 4 not
//! SERVING. Only plain-text gRPC is supported (catalog pods serve plain text); the TLS flags are
//! rejected as invalid arguments rather than silently ignored.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

pub const EXIT_OK: u8 = 0;
pub const EXIT_INVALID_ARGUMENT: u8 = 1;
pub const EXIT_CONNECTION_FAILURE: u8 = 2;
pub const EXIT_RPC_FAILURE: u8 = 3;
pub const EXIT_UNHEALTHY: u8 = 4;

/// The program name the probe mode answers to.
pub const PROBE_NAME: &str = "grpc_health_probe";

/// Runs the probe and returns its exit code if argv[0] names `grpc_health_probe`; `None` means
/// "not invoked as the probe, run the normal CLI".
pub fn main_if_invoked_as_probe() -> Option<ExitCode> {
    let mut args = std::env::args_os();
    let argv0 = args.next()?;
    let name = std::path::Path::new(&argv0)
        .file_name()?
        .to_string_lossy()
        .into_owned();
    if name != PROBE_NAME {
        return None;
    }
    let args: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
    Some(ExitCode::from(run(&args)))
}

/// The probe's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeArgs {
    pub addr: String,
    pub service: String,
    pub user_agent: String,
    pub connect_timeout: Duration,
    pub rpc_timeout: Duration,
    pub verbose: bool,
}

/// Parses Go `flag`-style arguments.
pub fn parse_args(args: &[String]) -> Result<ProbeArgs, String> {
    let mut p = ProbeArgs {
        addr: String::new(),
        service: String::new(),
        user_agent: "grpc_health_probe".into(),
        connect_timeout: Duration::from_secs(1),
        rpc_timeout: Duration::from_secs(1),
        verbose: false,
    };
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            break;
        }
        let Some(flag) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) else {
            return Err(format!("unexpected argument {arg:?}"));
        };
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (flag, None),
        };
        let value = |i: &mut usize| -> Result<String, String> {
            if let Some(v) = inline.clone() {
                return Ok(v);
            }
            let v = args
                .get(*i)
                .cloned()
                .ok_or_else(|| format!("flag needs an argument: -{name}"))?;
            *i += 1;
            Ok(v)
        };
        match name {
            "addr" => p.addr = value(&mut i)?,
            "service" => p.service = value(&mut i)?,
            "user-agent" => p.user_agent = value(&mut i)?,
            "connect-timeout" => p.connect_timeout = go_duration(&value(&mut i)?)?,
            "rpc-timeout" => p.rpc_timeout = go_duration(&value(&mut i)?)?,
            "v" => {
                p.verbose = match inline.as_deref() {
                    None | Some("true") | Some("1") => true,
                    Some("false") | Some("0") => false,
                    Some(o) => return Err(format!("invalid boolean value {o:?} for -v")),
                }
            }
            "tls" | "tls-no-verify" | "tls-ca-cert" | "tls-client-cert" | "tls-client-key"
            | "tls-server-name" | "alts" | "spiffe" | "gzip" => {
                return Err(format!(
                    "-{name} is not supported by this probe (plain text only)"
                ));
            }
            other => return Err(format!("flag provided but not defined: -{other}")),
        }
    }
    if p.addr.is_empty() {
        return Err("-addr not specified".into());
    }
    if p.connect_timeout.is_zero() {
        return Err(format!(
            "-connect-timeout must be greater than zero (specified: {:?})",
            p.connect_timeout
        ));
    }
    if p.rpc_timeout.is_zero() {
        return Err(format!(
            "-rpc-timeout must be greater than zero (specified: {:?})",
            p.rpc_timeout
        ));
    }
    Ok(p)
}

/// A timeout flag value: Go `time.ParseDuration` ([`crate::grammar::go_duration`]), not
/// negative.
pub fn go_duration(s: &str) -> Result<Duration, String> {
    crate::grammar::go_duration::parse_non_negative(s)
        .map_err(|_| format!("invalid duration {s:?}"))
}

/// Runs the probe with Go-style arguments and returns the exit code.
pub fn run(args: &[String]) -> u8 {
    let p = match parse_args(args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INVALID_ARGUMENT;
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return EXIT_CONNECTION_FAILURE;
        }
    };
    rt.block_on(probe(&p))
}

/// `host:port`, `:port` (localhost) or a URI, as a tonic endpoint.
fn endpoint_uri(addr: &str) -> String {
    if addr.contains("://") {
        return addr.to_string();
    }
    if let Some(port) = addr.strip_prefix(':') {
        return format!("http://127.0.0.1:{port}");
    }
    format!("http://{addr}")
}

/// One health check; prints what the real tool prints.
pub async fn probe(p: &ProbeArgs) -> u8 {
    let started = Instant::now();
    let endpoint = match tonic::transport::Endpoint::from_shared(endpoint_uri(&p.addr)) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: invalid -addr {:?}: {e}", p.addr);
            return EXIT_INVALID_ARGUMENT;
        }
    };
    let endpoint = match endpoint.user_agent(p.user_agent.clone()) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: invalid -user-agent: {e}");
            return EXIT_INVALID_ARGUMENT;
        }
    };
    let endpoint = endpoint.connect_timeout(p.connect_timeout);
    let channel = match tokio::time::timeout(p.connect_timeout, endpoint.connect()).await {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => {
            eprintln!("error: fail to connect service at {:?}: {e}", p.addr);
            return EXIT_CONNECTION_FAILURE;
        }
        Err(_) => {
            eprintln!(
                "timeout: failed to connect service {:?} within {:?}",
                p.addr, p.connect_timeout
            );
            return EXIT_CONNECTION_FAILURE;
        }
    };
    let connected = started.elapsed();
    let mut client = HealthClient::new(channel);
    let mut req = tonic::Request::new(HealthCheckRequest {
        service: p.service.clone(),
    });
    req.set_timeout(p.rpc_timeout);
    let rpc_started = Instant::now();
    let resp = match tokio::time::timeout(p.rpc_timeout, client.check(req)).await {
        Ok(Ok(r)) => r.into_inner(),
        Ok(Err(s)) if s.code() == tonic::Code::Unimplemented => {
            eprintln!(
                "error: this server does not implement the grpc health protocol (grpc.health.v1.Health): {}",
                s.message()
            );
            return EXIT_RPC_FAILURE;
        }
        Ok(Err(s)) if s.code() == tonic::Code::DeadlineExceeded => {
            eprintln!(
                "timeout: health rpc did not complete within {:?}",
                p.rpc_timeout
            );
            return EXIT_RPC_FAILURE;
        }
        Ok(Err(s)) => {
            eprintln!(
                "error: health rpc failed: rpc error: code = {:?} desc = {}",
                s.code(),
                s.message()
            );
            return EXIT_RPC_FAILURE;
        }
        Err(_) => {
            eprintln!(
                "timeout: health rpc did not complete within {:?}",
                p.rpc_timeout
            );
            return EXIT_RPC_FAILURE;
        }
    };
    if p.verbose {
        eprintln!("establishing connection took {connected:?}");
        eprintln!(
            "time elapsed: connect={connected:?} rpc={:?}",
            rpc_started.elapsed()
        );
    }
    let status = ServingStatus::try_from(resp.status).unwrap_or(ServingStatus::Unknown);
    if status != ServingStatus::Serving {
        eprintln!(
            "service unhealthy (responded with {:?})",
            status.as_str_name()
        );
        return EXIT_UNHEALTHY;
    }
    println!("status: {}", status.as_str_name());
    EXIT_OK
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_go_flags() {
        let p = parse_args(&a(&[
            "-addr=:50051",
            "-service",
            "Registry",
            "--rpc-timeout=1.5s",
        ]))
        .unwrap();
        assert_eq!(p.addr, ":50051");
        assert_eq!(p.service, "Registry");
        assert_eq!(p.rpc_timeout, Duration::from_millis(1500));
        assert!(
            parse_args(&a(&[]))
                .unwrap_err()
                .contains("-addr not specified")
        );
        assert!(
            parse_args(&a(&["-addr=:1", "-bogus"]))
                .unwrap_err()
                .contains("not defined")
        );
        assert!(parse_args(&a(&["-addr=:1", "-connect-timeout=0"])).is_err());
        assert!(parse_args(&a(&["-addr=:1", "-tls"])).is_err());
    }

    #[test]
    fn go_durations() {
        assert_eq!(go_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(go_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(go_duration("5").is_err());
        assert!(go_duration("-1s").is_err());
        assert!(go_duration("1x").is_err());
    }

    #[test]
    fn endpoints() {
        assert_eq!(endpoint_uri(":50051"), "http://127.0.0.1:50051");
        assert_eq!(endpoint_uri("host:1"), "http://host:1");
    }
}
