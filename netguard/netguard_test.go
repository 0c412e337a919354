package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
)

func TestBlocked(t *testing.T) {
	for _, s := range []string{
		"127.0.0.1", "127.8.9.10", "::1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254",
		"fd00:ec2::254", "fc00::1", "fe80::1", "0.0.0.0", "::", "100.64.0.1", "224.0.0.1", "255.255.255.255",
		"::ffff:127.0.0.1", "::ffff:169.254.169.254", "2002:7f00:1::", "64:ff9b::a9fe:a9fe",
	} {
		if !Blocked(netip.MustParseAddr(s)) {
			t.Errorf("%s is not blocked", s)
		}
	}
	for _, s := range []string{"93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"} {
		if Blocked(netip.MustParseAddr(s)) {
			t.Errorf("%s is blocked", s)
		}
	}
}

// resolver answers fixed addresses by host.
type resolver map[string][]string

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	ss, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func TestCheckURL(t *testing.T) {
	r := resolver{"hooks.example.com": {"93.184.216.34"}, "rebind.example.com": {"93.184.216.34", "10.0.0.5"}, "meta.example.com": {"169.254.169.254"}}
	ok := []string{"https://hooks.example.com/in", "https://93.184.216.34:8443/x?y=1", "HTTPS://hooks.example.com"}
	for _, u := range ok {
		if err := CheckURL(context.Background(), u, false, r); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	bad := []string{"http://hooks.example.com/in", "ftp://hooks.example.com", "hooks.example.com/in", "https://", "https://u:p@hooks.example.com",
		"https://127.0.0.1/", "https://[::1]/", "https://localhost/", "https://a.localhost/", "https://rebind.example.com/", "https://meta.example.com/",
		"https://[fd00:ec2::254]/", "https://nowhere.example.com/", "https://169.254.169.254/latest/meta-data"}
	for _, u := range bad {
		err := CheckURL(context.Background(), u, false, r)
		if !IsRefused(err) {
			t.Errorf("%s: %v, want a refusal", u, err)
		}
	}
	// Allowed private: http and private addresses pass, no lookup.
	for _, u := range []string{"http://127.0.0.1:8080/hook", "https://localhost/", "http://nowhere.example.com/"} {
		if err := CheckURL(context.Background(), u, true, r); err != nil {
			t.Errorf("allow private %s: %v", u, err)
		}
	}
	if err := CheckURL(context.Background(), "ftp://x", true, r); !IsRefused(err) {
		t.Errorf("ftp with allow private: %v", err)
	}
}

func TestControl(t *testing.T) {
	if err := Control("tcp4", "10.0.0.1:443", nil); !IsRefused(err) {
		t.Errorf("private address: %v", err)
	}
	if err := Control("tcp6", "[fd00:ec2::254]:80", nil); !IsRefused(err) {
		t.Errorf("metadata address: %v", err)
	}
	if err := Control("tcp4", "93.184.216.34:443", nil); err != nil {
		t.Errorf("public address: %v", err)
	}
	var e *Error
	if !errors.As(Control("tcp", "nonsense", nil), &e) {
		t.Error("an address that is no IP passes")
	}
}
