package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// ErrRefusedAddress is the error of a delivery whose host resolved, at
// delivery time, to an address webhooks may not reach.
var ErrRefusedAddress = errors.New("refused: the webhook host resolves to a private, loopback, link-local or metadata address")

// refusedPrefixes are reached by no webhook unless private URLs are allowed:
// besides what netip classifies (loopback, private, link-local, multicast,
// unspecified), the shared and reserved ranges a cloud network may route
// to something internal.
var refusedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT (and Alibaba's metadata)
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"), // NAT64 of any IPv4, private ones included
}

// Refused reports whether a delivery may not connect to a (the dialer's
// Control hook asks, after DNS, for every address it tries).
func Refused(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() ||
		a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return true
	}
	for _, p := range refusedPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// guardControl is the net.Dialer Control hook: it sees the address actually
// being connected to, so a name that resolved to a public address when the
// webhook was created and to a private one now (DNS rebinding) is refused
// here.
func guardControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrRefusedAddress, address)
	}
	if Refused(ap.Addr()) {
		return ErrRefusedAddress
	}
	return nil
}

// dialContext returns the transport's dialer: guarded unless allowPrivate;
// resolve, when set, replaces DNS (tests).
func dialContext(allowPrivate bool, resolve func(ctx context.Context, host string) ([]netip.Addr, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = guardControl
	}
	if resolve == nil {
		return d.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		ips, err := resolve(ctx, host)
		if err != nil {
			return nil, err
		}
		var last error = errors.New("no address")
		for _, ip := range ips {
			c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
			if err == nil {
				return c, nil
			}
			last = err
		}
		return nil, last
	}
}
