package rest

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"shipgraph/model"
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

// pageLinks returns the links of a page of a list: self (the request),
// first, prev and next when they exist, and last. Every page link keeps
// the other parameters of the request.
//
// next carries page[after], the cursor of the page's last record, beside
// page[number]: following next reads from there through the index, so
// every page of a walk costs what the first does, however deep. A page
// read from a cursor links back with page[before] (its first record) the
// same way. first and last are numbered (on the last page of a cursor
// walk, last is self); last is left out when its offset is beyond
// model.MaxPageOffset, where numbered pages are refused.
func pageLinks(base string, r *http.Request, p *params, total int, hasNext, hasPrev bool, start, end string) *Links {
	path := base + r.URL.Path
	at := func(n int, cursor, value string) string {
		v := url.Values{}
		for k, vals := range p.values {
			v[k] = vals
		}
		v.Del("page[after]")
		v.Del("page[before]")
		v.Set("page[number]", strconv.Itoa(n))
		v.Set("page[size]", strconv.Itoa(p.page.Size))
		if cursor != "" {
			v.Set(cursor, value)
		}
		return path + "?" + encodeQuery(v)
	}
	self := path
	if q := encodeQuery(p.values); q != "" {
		self += "?" + q
	}
	last := max(1, (total+p.page.Size-1)/p.page.Size)
	l := &Links{Self: self, First: at(1, "", "")}
	if last-1 <= model.MaxPageOffset/p.page.Size {
		l.Last = at(last, "", "")
	}
	keyset := p.after != "" || p.before != ""
	if keyset && !hasNext {
		// Read from a cursor, this is the last page, whatever its number.
		l.Last = self
	}
	switch {
	case keyset && start != "" && hasPrev && p.page.Number > 2:
		l.Prev = at(p.page.Number-1, "page[before]", start)
	case keyset && hasPrev:
		l.Prev = at(max(1, p.page.Number-1), "", "")
	case !keyset && p.page.Number > 1:
		l.Prev = at(min(p.page.Number-1, last), "", "")
	}
	if hasNext {
		if end != "" {
			l.Next = at(p.page.Number+1, "page[after]", end)
		} else {
			l.Next = at(p.page.Number+1, "", "")
		}
	}
	return l
}
