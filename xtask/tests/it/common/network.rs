//! Network tests: each needs https to some hosts and, where they cannot be reached (or with
//! `CT2V_SKIP_NETWORK_TESTS=1`), prints why it was skipped and passes.

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

/// Whether a network test needing `hosts` can run; prints why it is skipped when it cannot.
pub fn available(hosts: &[&str]) -> bool {
    match skip_reason(hosts) {
        Some(reason) => {
            eprintln!("SKIPPED (network test): {reason}");
            false
        }
        None => true,
    }
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
