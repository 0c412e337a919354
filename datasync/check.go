package datasync

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"shipgraph/model"
	"shipgraph/netguard"
)

// Kinds of destination.
const (
	KindPostgres    = "postgres"
	KindObjectStore = "object_store"
)

// Check checks a new destination's URL and returns it as shown: without
// its password. A PostgreSQL URL is postgres://user:password@host:port/db
// (an optional schema query parameter names the schema of the tables).
// Its host passes the webhook address rule unless private addresses are
// allowed (WEBHOOK_ALLOW_PRIVATE_URLS): every address it resolves to is
// public; a Unix socket directory is a private address.
func (s *Syncer) Check(ctx context.Context, kind, raw string) (string, error) {
	bad := func(format string, args ...any) error {
		return model.Errorf(model.EINVALID, format, args...).AtField("url")
	}
	switch kind {
	case KindPostgres:
	case KindObjectStore:
		return s.checkObjectStore(ctx, raw)
	default:
		return "", model.Errorf(model.EINVALID, "kind must be postgres or object_store").AtField("kind")
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", bad("url must be postgres://user:password@host:port/database")
	}
	q := u.Query()
	host := u.Hostname()
	if h := q.Get("host"); h != "" {
		host = h
	}
	if host == "" {
		return "", bad("url must name a host")
	}
	if !s.c.AllowPrivate {
		if err := checkHost(ctx, host); err != nil {
			return "", err
		}
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q.Del("password")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func checkHost(ctx context.Context, host string) error {
	refuse := func(why string) error {
		return model.Errorf(model.EINVALID, "url must not point at a loopback, private, link-local or metadata address (%s)", why).AtField("url")
	}
	if strings.HasPrefix(host, "/") || strings.HasPrefix(host, "@") {
		return refuse("a Unix socket")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if netguard.Blocked(ip) {
			return refuse(ip.String())
		}
		return nil
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return refuse("localhost")
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return model.Errorf(model.EINVALID, "url's host %s does not resolve", host).AtField("url")
	}
	for _, ip := range addrs {
		if netguard.Blocked(ip) {
			return refuse(fmt.Sprintf("%s resolves to %s", host, ip.Unmap()))
		}
	}
	return nil
}
