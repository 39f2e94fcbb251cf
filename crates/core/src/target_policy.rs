//! The outbound target policy: which addresses the dispatcher may connect
//! to (API.md §4, `--target-policy`).
//!
//! A server shared by tenants must not become their way into its own
//! network: with `deny-private`, loopback, link-local (cloud metadata
//! services), private, shared (CGNAT), unique-local, multicast and reserved
//! addresses are refused, unless an operator's exception (`--target-allow`)
//! names the network or the host. The rules are judged on the address a
//! connection actually goes to, so the dispatcher applies them after DNS
//! resolution; a create can only judge a URL whose host is an IP literal.

use crate::FieldErrors;
use ipnet::IpNet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// The error text of an attempt the policy refused. It says no more on
/// purpose: which address a name resolved to is the operator's business.
pub const REFUSED: &str = "refused by target policy";

/// What `--target-policy` says about private addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Any address: the embedded, single-user case, where the targets are
    /// the operator's own services, often on the same machine.
    #[default]
    AllowAll,
    /// Refuse the addresses [`is_private`] names, except the exceptions.
    DenyPrivate,
}

/// One `--target-allow`: a network (`10.1.0.0/16`, or one address) whose
/// addresses may be reached, or a host name whose every address may.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exception {
    Net(IpNet),
    Host(String),
}

impl FromStr for Exception {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let unbracketed = s
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .unwrap_or(s);
        if let Ok(net) = unbracketed.parse::<IpNet>() {
            return Ok(Exception::Net(net.trunc()));
        }
        if let Ok(ip) = unbracketed.parse::<IpAddr>() {
            return Ok(Exception::Net(IpNet::from(ip)));
        }
        let refuse = || format!("{s:?} is neither a CIDR, an IP address nor a host name");
        if s.is_empty() || s.contains(['/', ':']) {
            return Err(refuse());
        }
        // Parsed as a URL's host is, so that an exception is spelled the
        // way the dispatcher will see the name (lowercase, punycode, and
        // `2130706433` being the address it is).
        match url::Host::parse(s).map_err(|_| refuse())? {
            url::Host::Domain(d) => Ok(Exception::Host(normalize_host(&d))),
            url::Host::Ipv4(ip) => Ok(Exception::Net(IpNet::from(IpAddr::V4(ip)))),
            url::Host::Ipv6(ip) => Ok(Exception::Net(IpNet::from(IpAddr::V6(ip)))),
        }
    }
}

fn normalize_host(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// The policy the dispatcher and the create operations apply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetPolicy {
    mode: Mode,
    nets: Vec<IpNet>,
    hosts: Vec<String>,
}

impl TargetPolicy {
    pub fn new(mode: Mode, exceptions: impl IntoIterator<Item = Exception>) -> TargetPolicy {
        let mut policy = TargetPolicy {
            mode,
            ..TargetPolicy::default()
        };
        for e in exceptions {
            match e {
                Exception::Net(n) => policy.nets.push(n),
                Exception::Host(h) => policy.hosts.push(h),
            }
        }
        policy
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether a connection to `ip` is allowed.
    pub fn permits_address(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.mode == Mode::AllowAll || !is_private(ip) || self.nets.iter().any(|n| n.contains(&ip))
    }

    /// Whether `host` (a name from a URL) is an exception, every address it
    /// resolves to allowed.
    pub fn permits_every_address_of(&self, host: &str) -> bool {
        self.mode == Mode::AllowAll || {
            let host = normalize_host(host);
            self.hosts.contains(&host)
        }
    }

    /// Whether `url` may be tried: false only when its host is an IP
    /// literal the policy refuses. A name is judged when it resolves.
    pub fn permits_literal(&self, url: &url::Url) -> bool {
        match url.host() {
            Some(url::Host::Ipv4(ip)) => self.permits_address(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => self.permits_address(IpAddr::V6(ip)),
            Some(url::Host::Domain(_)) | None => true,
        }
    }

    /// Refuses, as an error on `field`, a target URL whose IP literal the
    /// policy refuses. A URL that does not parse is left to the URL's own
    /// validation.
    pub fn check_target_url(&self, field: &str, url: &str, errors: &mut FieldErrors) {
        // Every create passes here: allowing everything, there is nothing
        // to parse the URL for.
        if self.mode == Mode::AllowAll {
            return;
        }
        if let Ok(parsed) = url::Url::parse(url)
            && !self.permits_literal(&parsed)
        {
            errors.push(
                field,
                "names an address the server's target policy refuses (private, loopback, link-local or reserved)",
            );
        }
    }
}

/// Whether `ip` is an address a tenant must not reach through a shared
/// server: not a public unicast address.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_private_v4(v4),
        IpAddr::V6(v6) => is_private_v6(v6),
    }
}

fn is_private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    a == 0 // "this network", the unspecified address included
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 169 && b == 254) // link-local, where metadata services answer
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 168)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (18..20).contains(&b)) // benchmarking, often internal
        || a >= 224 // multicast, reserved, broadcast
}

fn is_private_v6(ip: Ipv6Addr) -> bool {
    let segments = ip.segments();
    // Forms that carry an IPv4 address are judged by it: mapped
    // (::ffff:a.b.c.d), translated (::ffff:0:a.b.c.d), compatible
    // (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d) and 6to4 (2002:AABB:CCDD::).
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_private_v4(v4);
    }
    let low =
        |i: usize| Ipv4Addr::from((u32::from(segments[i]) << 16) | u32::from(segments[i + 1]));
    if segments[..6] == [0; 6] {
        // `::` and `::1` fall here too: 0.0.0.0 and 0.0.0.1 are private.
        return is_private_v4(low(6));
    }
    if segments[..6] == [0, 0, 0, 0, 0xffff, 0] {
        return is_private_v4(low(6));
    }
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return is_private_v4(low(6));
    }
    if segments[0] == 0x2002 {
        return is_private_v4(low(1));
    }
    let first = segments[0];
    (first & 0xfe00) == 0xfc00 // unique-local fc00::/7
        || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (first & 0xffc0) == 0xfec0 // site-local fec0::/10, deprecated
        || (first & 0xff00) == 0xff00 // multicast
        || segments[..3] == [0x64, 0xff9b, 1] // local-use NAT64 64:ff9b:1::/48
        || segments[..4] == [0x100, 0, 0, 0] // discard-only 100::/64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn deny(exceptions: &[&str]) -> TargetPolicy {
        TargetPolicy::new(
            Mode::DenyPrivate,
            exceptions.iter().map(|e| e.parse::<Exception>().unwrap()),
        )
    }

    #[test]
    fn private_ipv4_ranges_are_recognized() {
        for s in [
            "0.0.0.0",
            "127.0.0.1",
            "127.255.255.254",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "100.127.255.255",
            "169.254.169.254",
            "169.254.0.1",
            "192.0.0.8",
            "198.18.0.1",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            assert!(is_private(ip(s)), "{s} is private");
        }
        for s in [
            "1.1.1.1",
            "8.8.8.8",
            "172.15.255.255",
            "172.32.0.1",
            "100.63.255.255",
            "100.128.0.1",
            "169.253.255.255",
            "192.169.0.1",
            "93.184.215.14",
        ] {
            assert!(!is_private(ip(s)), "{s} is public");
        }
    }

    #[test]
    fn private_ipv6_ranges_and_embedded_ipv4_are_recognized() {
        for s in [
            "::",
            "::1",
            "fe80::1",
            "febf::1",
            "fc00::1",
            "fd12:3456::1",
            "fec0::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:10.0.0.1",
            "::ffff:192.168.0.1",
            "::ffff:0:127.0.0.1",
            "::ffff:0:a9fe:a9fe",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::1",
            "2002:7f00:1::1",
            "2002:a9fe:a9fe::",
            "100::1",
        ] {
            assert!(is_private(ip(s)), "{s} is private");
        }
        for s in [
            "2606:4700:4700::1111",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
            "::ffff:0:808:808",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert!(!is_private(ip(s)), "{s} is public");
        }
    }

    #[test]
    fn allow_all_permits_everything() {
        let p = TargetPolicy::default();
        assert_eq!(p.mode(), Mode::AllowAll);
        assert!(p.permits_address(ip("127.0.0.1")));
        assert!(p.permits_address(ip("169.254.169.254")));
        assert!(p.permits_every_address_of("localhost"));
    }

    #[test]
    fn deny_private_refuses_private_addresses_unless_excepted() {
        let p = deny(&[]);
        assert!(!p.permits_address(ip("127.0.0.1")));
        assert!(!p.permits_address(ip("::ffff:127.0.0.1")));
        assert!(!p.permits_address(ip("::1")));
        assert!(p.permits_address(ip("8.8.8.8")));
        assert!(!p.permits_every_address_of("localhost"));

        let p = deny(&["127.0.0.1", "10.1.0.0/16", "fd00::/8", "Hooks.Internal."]);
        assert!(p.permits_address(ip("127.0.0.1")));
        // An exception holds for the address however it is written.
        assert!(p.permits_address(ip("::ffff:127.0.0.1")));
        assert!(!p.permits_address(ip("127.0.0.2")));
        assert!(p.permits_address(ip("10.1.200.3")));
        assert!(!p.permits_address(ip("10.2.0.1")));
        assert!(p.permits_address(ip("fd00::5")));
        assert!(!p.permits_address(ip("fc00::5")));
        assert!(p.permits_every_address_of("hooks.internal"));
        assert!(p.permits_every_address_of("HOOKS.internal."));
        assert!(!p.permits_every_address_of("other.internal"));
    }

    #[test]
    fn exceptions_parse_as_networks_addresses_or_hosts() {
        let net = |s: &str| Exception::Net(s.parse().unwrap());
        assert_eq!("127.0.0.0/8".parse(), Ok(net("127.0.0.0/8")));
        // Host bits are dropped: the network is what it names.
        assert_eq!("10.1.2.3/16".parse(), Ok(net("10.1.0.0/16")));
        assert_eq!("127.0.0.1".parse(), Ok(net("127.0.0.1/32")));
        assert_eq!("::1".parse(), Ok(net("::1/128")));
        assert_eq!("[::1]".parse(), Ok(net("::1/128")));
        assert_eq!("fd00::/8".parse(), Ok(net("fd00::/8")));
        assert_eq!("2130706433".parse(), Ok(net("127.0.0.1/32")));
        assert_eq!(
            " Hooks.Example.COM ".parse(),
            Ok(Exception::Host("hooks.example.com".into()))
        );
        for bad in ["", "10.0.0.0/33", "::1/129", "a b", "host:80", "http://x/"] {
            assert!(bad.parse::<Exception>().is_err(), "{bad:?} refused");
        }
    }

    #[test]
    fn literal_urls_are_judged_names_are_not() {
        let p = deny(&[]);
        let url = |s: &str| url::Url::parse(s).unwrap();
        assert!(!p.permits_literal(&url("http://127.0.0.1:8080/")));
        assert!(!p.permits_literal(&url("http://[::1]:8080/")));
        assert!(!p.permits_literal(&url("http://[::ffff:7f00:1]/")));
        assert!(!p.permits_literal(&url("http://169.254.169.254/latest")));
        // The URL parser's numeric forms are the addresses they denote.
        assert!(!p.permits_literal(&url("http://2130706433/")));
        assert!(!p.permits_literal(&url("http://0x7f.1/")));
        assert!(p.permits_literal(&url("https://8.8.8.8/")));
        assert!(p.permits_literal(&url("http://localhost:8080/")));

        let mut errors = FieldErrors::new();
        p.check_target_url("target.url", "http://10.0.0.1/", &mut errors);
        p.check_target_url("target.url", "https://example.com/", &mut errors);
        p.check_target_url("target.url", "not a url", &mut errors);
        assert_eq!(errors.0.len(), 1);
        assert_eq!(errors.0[0].field, "target.url");
    }
}
