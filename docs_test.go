package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMetricsDocumented: every Prometheus metric the code registers
// (Name: "shipgraph_…") is listed in docs/operations.md, so the list
// cannot fall behind the code again (it once named two of nine).
func TestMetricsDocumented(t *testing.T) {
	doc, err := os.ReadFile("docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`Name:\s*"(shipgraph_[a-z_]+)"`)
	seen := 0
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "bin") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range name.FindAllStringSubmatch(string(src), -1) {
			seen++
			if !strings.Contains(string(doc), "`"+m[1]) {
				t.Errorf("%s (%s) is not listed in docs/operations.md", m[1], path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 9 {
		t.Fatalf("found %d metrics in the code, want at least 9: the scan checks nothing", seen)
	}
}

// TestDocsNameWhatExists: every doc (README.md and docs/, whoever wrote
// them; CHANGELOG.md is history and may name what is gone) names only
// settings, flags, metrics, /v2 routes and codes that exist:
//   - a /v2 path in code spans is a route rest/handler.go declares;
//   - a shipgraph_… metric is one the code registers;
//   - an ALL_CAPS_NAME in a code span (a variable, an error code), a
//     NAME= assignment and a --flag appear as a whole word somewhere in
//     the sources (Go, scripts, the Makefile, CI, the schema, the page's
//     TypeScript): a renamed or removed one makes this fail;
//   - a file path under one of our directories (`db/changelog.go`) is a
//     file of the repository;
//   - a GraphQL error code (a name in a span shaped like one, in the docs
//     and in the schema's descriptions) is one the transport emits, and a
//     JSON:API `code: …` one /v2 writes (errorCodes).
func TestDocsNameWhatExists(t *testing.T) {
	var sources, carriers, tests strings.Builder
	var handler string
	codes := newErrorCodes()
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
			// The variables tests read (SHIPGRAPH_MEASURE=1 …) are
			// names a doc may give.
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			tests.Write(b)
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
		if strings.HasSuffix(path, ".go") {
			codes.scan(path, string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	src := sources.String()
	words := map[string]bool{}
	for _, w := range regexp.MustCompile(`[A-Za-z0-9_]+`).FindAllString(src+tests.String(), -1) {
		words[w] = true
	}
	codes.check(t)
	schema, err := os.ReadFile("schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	enumValues := schemaEnumValues(string(schema))
	for n, line := range strings.Split(string(schema), "\n") {
		for _, w := range capsWord.FindAllString(line, -1) {
			if codes.candidate(w) && !codes.graphql[w] && !enumValues[w] {
				t.Errorf("schema.graphqls:%d: error code %s is not one GraphQL answers (graph/gqlhttp)", n+1, w)
			}
		}
	}
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
	assign := regexp.MustCompile(`(?:^|\s)([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)=`)
	repoPath := regexp.MustCompile(`^([a-z][a-z0-9_-]*)/[A-Za-z0-9_./-]+\.(?:go|sh|sql|ts|mjs|yaml|yml|json|graphqls|md|txt)$`)
	jsonapiCode := regexp.MustCompile(`^"?code"?: *"?([a-z_]+)"?$`)
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
				if caps.MatchString(code) && !words[code] && !libraryName(code) {
					t.Errorf("%s:%d: %s appears in no source (a setting or code that does not exist)", doc, n+1, code)
				}
				for _, m := range assign.FindAllStringSubmatch(code, -1) {
					// compare.sh is the team's harness, kept outside the repository.
					if !words[m[1]] && !libraryName(m[1]) && !strings.Contains(line, "compare.sh") {
						t.Errorf("%s:%d: %s= names a variable no source reads", doc, n+1, m[1])
					}
				}
				for _, w := range capsWord.FindAllString(code, -1) {
					if codes.candidate(w) && !codes.graphql[w] && !enumValues[w] {
						t.Errorf("%s:%d: error code %s is not one GraphQL answers (graph/gqlhttp)", doc, n+1, w)
					}
				}
				// A path in the repository (its first directory is one of
				// ours) names a file that is there; a build's output
				// (gitignored, made by make) need not be there yet.
				if m := repoPath.FindStringSubmatch(code); m != nil && !builtPath(code) {
					if st, err := os.Stat(m[1]); err == nil && st.IsDir() {
						if _, err := os.Stat(code); err != nil {
							t.Errorf("%s:%d: %s does not exist", doc, n+1, code)
						}
					}
				}
				if m := jsonapiCode.FindStringSubmatch(code); m != nil && !codes.jsonapi[m[1]] {
					t.Errorf("%s:%d: /v2 writes no error code %s", doc, n+1, m[1])
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

var capsWord = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*\b`)

// errorCodes are the error codes the code emits: GraphQL's
// extensions.code values (ALL_CAPS string literals of the transport,
// graph/gqlhttp, httpapi and mcp, and gqlgen's own) and the JSON:API
// codes /v2 writes beside a status (rest: `….Code = "…"`).
type errorCodes struct {
	graphql, jsonapi map[string]bool
	// model holds the application codes (model.E…), upper-cased: a doc
	// that writes `INVALID` means GraphQL's code and must be corrected.
	model map[string]bool
}

func newErrorCodes() *errorCodes {
	c := &errorCodes{graphql: map[string]bool{}, jsonapi: map[string]bool{}, model: map[string]bool{}}
	for _, s := range []string{"GRAPHQL_PARSE_FAILED", "GRAPHQL_VALIDATION_FAILED", "COMPLEXITY_LIMIT_EXCEEDED", "PERSISTED_QUERY_NOT_FOUND", "PERSISTED_QUERY_NOT_SUPPORTED"} {
		c.graphql[s] = true
	}
	return c
}

var (
	gqlCodeLit   = regexp.MustCompile(`"([A-Z][A-Z]*(?:_[A-Z]+)*)"`)
	restCodeLit  = regexp.MustCompile(`\.Code(?:, [\w.]+)* = "([a-z_]+)"`)
	modelCodeLit = regexp.MustCompile(`\bE[A-Z]+\s*=\s*"([a-z_]+)"`)
	httpMethods  = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true}
)

func (c *errorCodes) scan(path, src string) {
	switch {
	case strings.HasPrefix(path, "graph/gqlhttp/") || strings.HasPrefix(path, "httpapi/") || strings.HasPrefix(path, "mcp/"):
		for _, m := range gqlCodeLit.FindAllStringSubmatch(src, -1) {
			if !httpMethods[m[1]] {
				c.graphql[m[1]] = true
			}
		}
	case strings.HasPrefix(path, "rest/"):
		for _, m := range restCodeLit.FindAllStringSubmatch(src, -1) {
			c.jsonapi[m[1]] = true
		}
	case path == "model/errors.go":
		for _, m := range modelCodeLit.FindAllStringSubmatch(src, -1) {
			c.model[strings.ToUpper(m[1])] = true
		}
	}
}

// check fails the test when the scan found nothing to compare with.
func (c *errorCodes) check(t *testing.T) {
	t.Helper()
	for _, want := range []string{"BAD_USER_INPUT", "NOT_FOUND", "FORBIDDEN"} {
		if !c.graphql[want] {
			t.Fatalf("the scan of graph/gqlhttp found no %s: it checks nothing", want)
		}
	}
	if !c.jsonapi["duplicate_document"] || !c.model["INVALID"] {
		t.Fatalf("the scan found no /v2 or model codes (%v, %v): it checks nothing", c.jsonapi, c.model)
	}
}

// candidate reports whether an ALL_CAPS word is shaped like a GraphQL
// error code: one the code emits, an application code written in
// capitals, or a name ending the way codes end.
func (c *errorCodes) candidate(w string) bool {
	if c.graphql[w] || c.model[w] {
		return true
	}
	for _, suf := range []string{"_EXCEEDED", "_FAILED", "_ERROR", "_INPUT", "_NOT_FOUND", "_NOT_SUPPORTED", "_NOT_ALLOWED"} {
		if strings.HasSuffix(w, suf) {
			return true
		}
	}
	return false
}

// schemaEnumValues are the values of the schema's enums (an enum value
// may share a code's name: it is no claim about errors).
func schemaEnumValues(schema string) map[string]bool {
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?s)\benum\s+\w+[^{]*\{(.*?)\}`).FindAllStringSubmatch(schema, -1) {
		for _, w := range capsWord.FindAllString(m[1], -1) {
			out[w] = true
		}
	}
	return out
}

// builtPath reports whether path is one a build writes (the bundles and
// assets .gitignore keeps out of the repository), so a doc may name it on a
// clone nothing was built in.
func builtPath(path string) bool {
	for _, dir := range []string{"web/ops/dist/", "graph/playground/assets/", "bin/"} {
		if strings.HasPrefix(path, dir) {
			return true
		}
	}
	return false
}
