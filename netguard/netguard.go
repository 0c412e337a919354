// Package netguard keeps webhook requests away from the network Shipgraph
// runs in: a webhook URL must be https and every address its host resolves
// to must be public — not loopback, private, link-local (which holds the
// cloud metadata endpoints 169.254.169.254 and fd00:ec2::254), CGNAT,
// multicast or unspecified. The API checks a URL when a webhook is created
// or changed (CheckURL); the delivery checks again at connect time, against
// DNS rebinding, with Control as its net.Dialer's Control hook. Both are
// off with WEBHOOK_ALLOW_PRIVATE_URLS=true (local demos and tests).
//
// It imports nothing of Shipgraph's.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// Error is why a URL or an address is refused; its message is safe to show.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

// blockedPrefixes are the ranges a webhook may not reach besides what
// netip.Addr's own predicates tell (loopback, private, link-local,
// multicast, unspecified).
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),         // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),     // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),      // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),     // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),       // reserved, and broadcast
	netip.MustParsePrefix("fd00:ec2::254/128"), // AWS metadata over IPv6 (also in fc00::/7)
	netip.MustParsePrefix("64:ff9b:1::/48"),    // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),     // documentation
	netip.MustParsePrefix("100::/64"),          // discard-only
	netip.MustParsePrefix("2002::/16"),         // 6to4: embeds any IPv4 address
	netip.MustParsePrefix("64:ff9b::/96"),      // NAT64: embeds any IPv4 address
}

// Blocked reports whether a webhook may not be sent to ip.
func Blocked(ip netip.Addr) bool {
	ip = ip.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return true
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Resolver looks host names up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CheckURL checks a webhook URL: absolute, https (http too when
// allowPrivate), a host and no credentials; unless allowPrivate, every
// address the host resolves to (through r; nil is net.DefaultResolver) must
// be public. It returns an *Error for a refused URL.
func CheckURL(ctx context.Context, raw string, allowPrivate bool, r Resolver) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return &Error{"url must be an absolute https URL"}
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !allowPrivate {
			return &Error{"url must use https"}
		}
	default:
		return &Error{"url must be an absolute https URL"}
	}
	if u.User != nil {
		return &Error{"url must not carry credentials (user:password@)"}
	}
	host := u.Hostname()
	if host == "" {
		return &Error{"url must name a host"}
	}
	if allowPrivate {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if Blocked(ip) {
			return &Error{fmt.Sprintf("url must not point at a loopback, private, link-local or metadata address (%s)", ip)}
		}
		return nil
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") || strings.HasSuffix(strings.ToLower(strings.TrimSuffix(host, ".")), ".localhost") {
		return &Error{"url must not point at a loopback, private, link-local or metadata address (localhost)"}
	}
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &Error{fmt.Sprintf("url's host %s does not resolve", host)}
	}
	for _, ip := range addrs {
		if Blocked(ip) {
			return &Error{fmt.Sprintf("url's host %s resolves to a loopback, private, link-local or metadata address (%s)", host, ip.Unmap())}
		}
	}
	return nil
}

// Control refuses to connect to a blocked address: the Control hook of the
// delivery's net.Dialer, so an address is checked after DNS resolved it
// (a name that resolved to a public address when the webhook was saved
// and to a private one now is refused).
func Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &Error{fmt.Sprintf("webhook address %q is not an IP address", address)}
	}
	if Blocked(ap.Addr()) {
		return &Error{fmt.Sprintf("webhook address %s is loopback, private, link-local or metadata", ap.Addr().Unmap())}
	}
	return nil
}

// IsRefused reports whether err is (or wraps) a refusal of this package.
func IsRefused(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
