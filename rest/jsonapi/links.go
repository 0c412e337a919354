package jsonapi

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

// BaseURL returns scheme://host of the links of a response: public (a
// configured base URL) when set, else the request's.
func BaseURL(r *http.Request, public string) string {
	if public != "" {
		return strings.TrimRight(public, "/")
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

// PageLinks returns the links of a page of a list: self (the request),
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
func PageLinks(base string, r *http.Request, p *Query, total int, hasNext, hasPrev bool, start, end string) *Links {
	path := base + r.URL.Path
	at := func(n int, cursor, value string) string {
		v := url.Values{}
		for k, vals := range p.Values {
			v[k] = vals
		}
		v.Del("page[after]")
		v.Del("page[before]")
		v.Set("page[number]", strconv.Itoa(n))
		v.Set("page[size]", strconv.Itoa(p.Page.Size))
		if cursor != "" {
			v.Set(cursor, value)
		}
		return path + "?" + encodeQuery(v)
	}
	self := path
	if q := encodeQuery(p.Values); q != "" {
		self += "?" + q
	}
	last := max(1, (total+p.Page.Size-1)/p.Page.Size)
	l := &Links{Self: self, First: at(1, "", "")}
	if last-1 <= model.MaxPageOffset/p.Page.Size {
		l.Last = at(last, "", "")
	}
	keyset := p.After != "" || p.Before != ""
	if keyset && !hasNext {
		// Read from a cursor, this is the last page, whatever its number.
		l.Last = self
	}
	switch {
	case keyset && start != "" && hasPrev && p.Page.Number > 2:
		l.Prev = at(p.Page.Number-1, "page[before]", start)
	case keyset && hasPrev:
		l.Prev = at(max(1, p.Page.Number-1), "", "")
	case !keyset && p.Page.Number > 1:
		l.Prev = at(min(p.Page.Number-1, last), "", "")
	}
	if hasNext {
		if end != "" {
			l.Next = at(p.Page.Number+1, "page[after]", end)
		} else {
			l.Next = at(p.Page.Number+1, "", "")
		}
	}
	return l
}

// Links is a links object; members without a link are left out.
type Links struct {
	Self     string `json:"self,omitempty"`
	Download string `json:"download,omitempty"`
	First    string `json:"first,omitempty"`
	Prev     string `json:"prev,omitempty"`
	Next     string `json:"next,omitempty"`
	Last     string `json:"last,omitempty"`
}

// Meta is the meta object of a list: size is the page size the list was
// read with and total the number of records of the whole (filtered) list,
// as the live API answers.
type Meta struct {
	Size  int `json:"size"`
	Total int `json:"total"`
}
