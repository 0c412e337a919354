package rest

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Links are absolute: PUBLIC_BASE_URL when configured, else the scheme and
// host the request came to (X-Forwarded-Proto is honoured for the scheme, so
// a TLS-terminating proxy yields https links; set PUBLIC_BASE_URL when the
// proxy also rewrites the host).

// baseURL returns scheme://host of the links of a response.
func (s *server) baseURL(r *http.Request) string {
	if s.cfg.PublicBaseURL != "" {
		return strings.TrimRight(s.cfg.PublicBaseURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := strings.ToLower(r.Header.Get("X-Forwarded-Proto")); p == "https" || p == "http" {
		scheme = p
	}
	return scheme + "://" + r.Host
}

// encodeQuery encodes values with sorted keys, keeping brackets and commas
// literal (page[size]=5, include=a,b) as the live API writes its links.
func encodeQuery(v url.Values) string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		for _, val := range v[k] {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(queryEscape(k))
			b.WriteByte('=')
			b.WriteString(queryEscape(val))
		}
	}
	return b.String()
}

var unescapeLiteral = strings.NewReplacer("%5B", "[", "%5D", "]", "%2C", ",")

func queryEscape(s string) string { return unescapeLiteral.Replace(url.QueryEscape(s)) }

// pageLinks returns the links of a numbered page of a list: self (the
// request), first, prev and next when they exist, and last. Every page
// link keeps the other parameters of the request.
func pageLinks(base string, r *http.Request, p *params, total int, hasNext bool) *Links {
	path := base + r.URL.Path
	at := func(n int) string {
		v := url.Values{}
		for k, vals := range p.values {
			v[k] = vals
		}
		v.Set("page[number]", strconv.Itoa(n))
		v.Set("page[size]", strconv.Itoa(p.page.Size))
		return path + "?" + encodeQuery(v)
	}
	self := path
	if q := encodeQuery(p.values); q != "" {
		self += "?" + q
	}
	last := max(1, (total+p.page.Size-1)/p.page.Size)
	l := &Links{Self: self, First: at(1), Last: at(last)}
	if p.page.Number > 1 {
		l.Prev = at(min(p.page.Number-1, last))
	}
	if hasNext {
		l.Next = at(p.page.Number + 1)
	}
	return l
}
