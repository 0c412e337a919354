// Package deploy holds what runs Shipgraph elsewhere than from a clone: the
// Helm chart (helm/shipgraph), the compose file (compose.yaml), the image
// build files (image/), and the values table of docs/deploy.md made from
// the chart's values.yaml. Its tests lint, render and validate the chart
// and check the compose file (docs/deploy.md).
package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"
)

// The markers around the values table in docs/deploy.md.
const (
	BeginMarker = "<!-- values:begin (make chart-docs writes this table from deploy/helm/shipgraph/values.yaml) -->"
	EndMarker   = "<!-- values:end -->"
)

var keyLine = regexp.MustCompile(`^( *)([A-Za-z0-9_.-]+):`)

// ValuesTable renders the markdown table of a chart's values: one row per
// key whose comment starts with "# --", in the file's order, with its
// default as JSON.
func ValuesTable(values []byte) (string, error) {
	var tree map[string]any
	if err := yaml.Unmarshal(values, &tree); err != nil {
		return "", fmt.Errorf("values.yaml: %w", err)
	}
	type frame struct {
		indent int
		key    string
	}
	var stack []frame
	var b strings.Builder
	b.WriteString("| Key | Default | Description |\n|---|---|---|\n")
	desc := ""
	for i, line := range strings.Split(string(values), "\n") {
		trimmed := strings.TrimSpace(line)
		if d, ok := strings.CutPrefix(trimmed, "# --"); ok {
			desc = strings.TrimSpace(d)
			continue
		}
		m := keyLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		indent := len(m[1])
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, frame{indent, m[2]})
		if desc == "" {
			continue
		}
		path := make([]string, len(stack))
		for j, f := range stack {
			path[j] = f.key
		}
		v, ok := lookup(tree, path)
		if !ok {
			return "", fmt.Errorf("values.yaml:%d: %s not found in the parsed values", i+1, strings.Join(path, "."))
		}
		def, err := json.Marshal(v)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", strings.Join(path, "."), cell(string(def)), cell(desc))
		desc = ""
	}
	return b.String(), nil
}

func lookup(tree map[string]any, path []string) (any, bool) {
	var v any = tree
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// cell escapes the pipes of a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// ReplaceTable puts table between the markers of doc; false when doc has
// no markers.
func ReplaceTable(doc []byte, table string) ([]byte, bool) {
	i := bytes.Index(doc, []byte(BeginMarker))
	j := bytes.Index(doc, []byte(EndMarker))
	if i < 0 || j < i {
		return nil, false
	}
	var out bytes.Buffer
	out.Write(doc[:i+len(BeginMarker)])
	out.WriteString("\n" + table)
	out.Write(doc[j:])
	return out.Bytes(), true
}
