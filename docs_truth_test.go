package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsNameWhatExists: every doc (README.md and docs/, whoever wrote
// them; CHANGELOG.md is history and may name what is gone) names only
// settings, flags, metrics, /v2 routes and codes that exist:
//   - a /v2 path in code spans is a route rest/handler.go declares;
//   - a shipgraph_… metric is one the code registers;
//   - an ALL_CAPS_NAME in a code span (a variable, an error code) and a
//     --flag appear somewhere in the sources (Go, scripts, the Makefile,
//     CI, the schema, the page's TypeScript): a renamed or removed one
//     makes this fail.
func TestDocsNameWhatExists(t *testing.T) {
	var sources, carriers strings.Builder
	var handler string
	srcExt := map[string]bool{".go": true, ".sh": true, ".graphqls": true, ".ts": true, ".mjs": true, ".yml": true, ".yaml": true, ".sql": true, ".json": true, ".tpl": true, ".graphql": true}
	var docs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") && d.Name() != ".ci" || d.Name() == "node_modules" || d.Name() == "bin" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(path, ".md"):
			if path == "README.md" || strings.HasPrefix(path, "docs/") {
				docs = append(docs, path)
			}
			return nil
		case strings.HasSuffix(path, "_test.go"):
			return nil
		case srcExt[filepath.Ext(path)] || d.Name() == "Makefile" || path == ".ci/run" || path == "Dockerfile":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sources.Write(b)
		sources.WriteByte('\n')
		if strings.HasPrefix(path, "carrier/") {
			carriers.Write(b)
		}
		if path == "rest/handler.go" {
			handler = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	src := sources.String()
	var routes [][]string
	for _, m := range regexp.MustCompile(`route\("(/v2/[^"]*)"`).FindAllStringSubmatch(handler, -1) {
		routes = append(routes, strings.Split(strings.Trim(m[1], "/"), "/"))
	}
	// Routes declared per entity: route(e.prefix+"/suffix") over a table
	// of prefixes.
	for _, p := range regexp.MustCompile(`\{"(/v2/[^"]*)", `).FindAllStringSubmatch(handler, -1) {
		for _, s := range regexp.MustCompile(`route\(e\.prefix\+"([^"]*)"`).FindAllStringSubmatch(handler, -1) {
			routes = append(routes, strings.Split(strings.Trim(p[1]+s[1], "/"), "/"))
		}
	}
	if len(routes) < 10 {
		t.Fatalf("found %d routes in rest/handler.go", len(routes))
	}
	metrics := map[string]bool{}
	for _, m := range regexp.MustCompile(`Name:\s*"(shipgraph_[a-z0-9_]+)"`).FindAllStringSubmatch(src, -1) {
		metrics[m[1]] = true
	}
	wild := func(seg string) bool {
		return strings.HasPrefix(seg, "{") || strings.HasPrefix(seg, ":") || strings.HasPrefix(seg, "<") || seg == "…" || seg == "..." || seg == "*"
	}
	routeExists := func(path string) bool {
		segs := strings.Split(strings.Trim(path, "/"), "/")
		for _, r := range routes {
			if len(r) != len(segs) {
				continue
			}
			ok := true
			for i := range r {
				if r[i] != segs[i] && !wild(r[i]) && !wild(segs[i]) {
					ok = false
					break
				}
			}
			if ok {
				return true
			}
		}
		return false
	}
	span := regexp.MustCompile("`([^`\n]+)`")
	v2 := regexp.MustCompile(`(?:^|\s)(/v2/[A-Za-z0-9_{}/.:<>…-]*[A-Za-z0-9_}>…])`)
	metric := regexp.MustCompile(`\bshipgraph_[a-z0-9_]*[a-z0-9]`)
	caps := regexp.MustCompile(`^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$`)
	flag := regexp.MustCompile(`^--([a-z][a-z0-9-]*)(?:[ =].*)?$`)
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(b), "\n") {
			for _, s := range span.FindAllStringSubmatch(line, -1) {
				code := s[1]
				for _, m := range v2.FindAllStringSubmatch(code, -1) {
					p, _, _ := strings.Cut(m[1], "?")
					// The carriers' DCSA API (/v2/events) is carrier/'s.
					if !routeExists(p) && !strings.Contains(carriers.String(), p) {
						t.Errorf("%s:%d: route %s is not served (rest/handler.go)", doc, n+1, p)
					}
				}
				for _, m := range metric.FindAllString(code, -1) {
					base := m
					for _, suf := range []string{"_bucket", "_sum", "_count"} {
						if strings.HasSuffix(m, suf) && metrics[strings.TrimSuffix(m, suf)] {
							base = strings.TrimSuffix(m, suf)
						}
					}
					if !metrics[base] && !strings.Contains(src, m) && !strings.Contains(code, "…") {
						t.Errorf("%s:%d: metric %s is not registered", doc, n+1, m)
					}
				}
				if caps.MatchString(code) && !strings.Contains(src, code) && !libraryName(code) {
					t.Errorf("%s:%d: %s appears in no source (a setting or code that does not exist)", doc, n+1, code)
				}
				if m := flag.FindStringSubmatch(code); m != nil && !strings.Contains(src, `"`+m[1]+`"`) && !strings.Contains(src, "--"+m[1]) {
					t.Errorf("%s:%d: flag --%s appears in no source", doc, n+1, m[1])
				}
			}
		}
	}
}

// libraryName reports whether an ALL_CAPS name belongs to a library we
// use rather than to our sources: the AWS SDK's and OpenTelemetry's
// variables, gqlgen's error codes.
func libraryName(s string) bool {
	switch s {
	case "GRAPHQL_PARSE_FAILED", "GRAPHQL_VALIDATION_FAILED", "COMPLEXITY_LIMIT_EXCEEDED", "PERSISTED_QUERY_NOT_FOUND", "PERSISTED_QUERY_NOT_SUPPORTED":
		return true
	}
	return strings.HasPrefix(s, "AWS_") || strings.HasPrefix(s, "OTEL_")
}
