//! Network tests: each needs https to some hosts (PyPI, crates.io, which CI's machine reaches).
//! Where one cannot be reached the test is skipped and counted (`scripts/skipped-checks`),
//! except under `CI=true`, where that fails the test: CI runs every check. An explicit
//! `CT2V_SKIP_NETWORK_TESTS=1` skips them anywhere (a machine known to be offline), counted too.

use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Why the network tests cannot run here, if they cannot: `CT2V_SKIP_NETWORK_TESTS` is set,
/// or one of `hosts` (`name:port`, tried in order) cannot be reached.
pub fn skip_reason(hosts: &[&str]) -> Option<String> {
    if std::env::var_os("CT2V_SKIP_NETWORK_TESTS").is_some() {
        return Some("CT2V_SKIP_NETWORK_TESTS is set".into());
    }
    for host in hosts {
        let reachable = host
            .to_socket_addrs()
            .ok()
            .and_then(|mut addrs| addrs.next())
            .is_some_and(|addr| TcpStream::connect_timeout(&addr, Duration::from_secs(5)).is_ok());
        if !reachable {
            return Some(format!("{host} cannot be reached"));
        }
    }
    None
}

/// Whether a network test needing `hosts` can run; a skip is said and counted, and under
/// `CI=true` an unreachable host (not an explicit opt-out) fails the test.
pub fn available(hosts: &[&str]) -> bool {
    let Some(reason) = skip_reason(hosts) else {
        return true;
    };
    let opted_out = std::env::var_os("CT2V_SKIP_NETWORK_TESTS").is_some();
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    if ci && !opted_out {
        panic!(
            "CI=true and {reason}: CI must run the network tests (set CT2V_SKIP_NETWORK_TESTS=1 \
             only on a machine known to be offline)"
        );
    }
    super::skip::record_network(&reason);
    false
}

/// `needs_network!(HOSTS)`: returns from the test, saying why, unless `HOSTS` can be reached.
#[macro_export]
macro_rules! needs_network {
    ($hosts:expr) => {
        if !$crate::common::network::available($hosts) {
            return;
        }
    };
}
