package httpapi

import (
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"shipgraph/model"
)

// validText refuses, before anything reads the database, a request whose
// path or query parameters (decoded) are not valid UTF-8 or hold a NUL
// character: PostgreSQL cannot store either in text (SQLSTATE 22021), so
// such a value can match nothing and store nothing. The answer is the
// client's 400, naming the parameter. Bodies are JSON, decoded as UTF-8 by
// the transports; a NUL inside a JSON string is refused by the database
// and classified as invalid input (db/errors.go).
func validText(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !cleanText(r.URL.Path) {
			writeError(w, r, http.StatusBadRequest,
				model.Errorf(model.EINVALID, "the path is not valid UTF-8 or holds a NUL character"))
			return
		}
		if q := r.URL.RawQuery; q != "" && (strings.IndexByte(q, '%') >= 0 || !cleanText(q)) {
			values, err := url.ParseQuery(q)
			if err == nil {
				for k, vs := range values {
					ok := cleanText(k)
					for _, v := range vs {
						ok = ok && cleanText(v)
					}
					if !ok {
						writeError(w, r, http.StatusBadRequest,
							model.Errorf(model.EINVALID, "the value of %s is not valid UTF-8 or holds a NUL character", strings.ToValidUTF8(k, "\uFFFD")).AtParameter(strings.ToValidUTF8(k, "\uFFFD")))
						return
					}
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// cleanText reports whether s is valid UTF-8 without NUL.
func cleanText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}
