package webhook

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"time"

	"shipgraph/netguard"
)

// dialContext returns the transport's dialer: guarded unless allowPrivate;
// resolve, when set, replaces DNS (tests).
func dialContext(allowPrivate bool, resolve func(ctx context.Context, host string) ([]netip.Addr, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = netguard.Control // after DNS: against rebinding
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
