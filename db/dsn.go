package db

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/lib/pq"
)

// NormalizeDSN reads a connection string in either form libpq documents
// and returns it in the key=value form, checked:
//
//	postgres://user:pw@h1:5432,h2:5433/db?target_session_attrs=read-write
//	host=h1,h2 port=5432,5433 user=user dbname=db target_session_attrs=read-write
//
// lib/pq reads the key=value form's host lists (one connection attempt per
// host, in order, until one has the target_session_attrs asked for), but
// takes a URL's host list for one host named "h1:5432,h2:5433", so every
// URL is rewritten here, once, where the configuration is read (package
// app). The error names what is wrong, never the password.
func NormalizeDSN(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", errors.New("empty connection string")
	}
	out := s
	if scheme, _, ok := strings.Cut(s, "://"); ok {
		if scheme != "postgres" && scheme != "postgresql" {
			return "", fmt.Errorf("scheme %q: use postgres:// or postgresql://", scheme)
		}
		kv, err := urlToKeyValue(s)
		if err != nil {
			return "", err
		}
		out = kv
	} else if !strings.Contains(s, "=") {
		return "", errors.New("neither a postgres:// URL nor key=value pairs")
	}
	if _, err := pq.NewConfig(out); err != nil {
		return "", errors.New(strings.TrimPrefix(err.Error(), "pq: "))
	}
	return out, nil
}

// urlToKeyValue is libpq's URL grammar
// (postgresql://[userspec@][hostspec[,hostspec...]][/dbname][?paramspec],
// hostspec = host[:port], an IPv6 address in brackets, every part
// percent-encoded) in the key=value form.
func urlToKeyValue(s string) (string, error) {
	_, rest, _ := strings.Cut(s, "://")
	var query string
	rest, query, _ = strings.Cut(rest, "?")
	authority, path, _ := strings.Cut(rest, "/")
	params := map[string]string{}
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		user, pw, hasPW := strings.Cut(authority[:i], ":")
		authority = authority[i+1:]
		var err error
		if params["user"], err = url.PathUnescape(user); err != nil {
			return "", fmt.Errorf("user name: %w", err)
		}
		if hasPW {
			if params["password"], err = url.PathUnescape(pw); err != nil {
				return "", errors.New("password: invalid percent-encoding")
			}
		}
	}
	if authority != "" {
		var hosts, ports []string
		anyPort := false
		for _, spec := range strings.Split(authority, ",") {
			host, port, err := splitHostSpec(spec)
			if err != nil {
				return "", err
			}
			hosts, ports = append(hosts, host), append(ports, port)
			anyPort = anyPort || port != ""
		}
		params["host"] = strings.Join(hosts, ",")
		if anyPort {
			for i, p := range ports {
				if p == "" {
					ports[i] = "5432"
				}
			}
			params["port"] = strings.Join(ports, ",")
		}
	}
	if path != "" {
		name, err := url.PathUnescape(path)
		if err != nil {
			return "", fmt.Errorf("database name: %w", err)
		}
		params["dbname"] = name
	}
	if query != "" {
		q, err := url.ParseQuery(query)
		if err != nil {
			return "", fmt.Errorf("parameters: %w", err)
		}
		for k, v := range q {
			if len(v) > 0 {
				params[k] = v[len(v)-1]
			}
		}
	}
	keys := make([]string, 0, len(params))
	for k, v := range params {
		if v == "" && k != "password" {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	esc := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	kv := make([]string, len(keys))
	for i, k := range keys {
		kv[i] = k + "='" + esc.Replace(params[k]) + "'"
	}
	return strings.Join(kv, " "), nil
}

// splitHostSpec splits host[:port] or [v6addr][:port], percent-decoded.
func splitHostSpec(spec string) (host, port string, err error) {
	if strings.HasPrefix(spec, "[") {
		end := strings.Index(spec, "]")
		if end < 0 {
			return "", "", fmt.Errorf("host %q: missing ]", spec)
		}
		host, port = spec[1:end], strings.TrimPrefix(spec[end+1:], ":")
		if spec[end+1:] != "" && !strings.HasPrefix(spec[end+1:], ":") {
			return "", "", fmt.Errorf("host %q: text after ]", spec)
		}
	} else {
		host, port, _ = strings.Cut(spec, ":")
	}
	if host, err = url.PathUnescape(host); err != nil {
		return "", "", fmt.Errorf("host %q: %w", spec, err)
	}
	if host == "" {
		return "", "", fmt.Errorf("host list %q: an empty host", spec)
	}
	for _, c := range port {
		if c < '0' || c > '9' {
			return "", "", fmt.Errorf("port %q of host %s: not a number", port, host)
		}
	}
	return host, port, nil
}

// SplitDSNList splits a comma-separated list of connection strings
// (DATABASE_REPLICA_URLS) where each may itself hold commas (host lists):
// an entry starts at a piece that opens with a URL scheme or a key=.
func SplitDSNList(s string) []string {
	var out []string
	for _, piece := range strings.Split(s, ",") {
		t := strings.TrimSpace(piece)
		if len(out) == 0 || startsDSN(t) {
			out = append(out, t)
			continue
		}
		out[len(out)-1] += "," + piece
	}
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return out
}

func startsDSN(t string) bool {
	if strings.HasPrefix(t, "postgres://") || strings.HasPrefix(t, "postgresql://") {
		return true
	}
	k, _, ok := strings.Cut(t, "=")
	if !ok || k == "" {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c == '_') {
			return false
		}
	}
	return true
}
