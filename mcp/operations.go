package mcp

import (
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// The tools' GraphQL operations, kept in the repository as trusted
// documents: each file holds one operation; fragments.graphql the
// fragments they share (each operation gets the ones it spreads).
//
//go:embed operations/*.graphql
var operationFiles embed.FS

// operation is one trusted operation, validated against the schema.
type operation struct {
	name string // the operation's name
	text string // the document sent: the operation and the fragments it spreads
	op   *ast.OperationDefinition
}

// loadOperation reads operations/<file>.graphql, appends the fragments it
// spreads and validates the document against schema.
func loadOperation(schema *ast.Schema, file string) (*operation, error) {
	b, err := operationFiles.ReadFile("operations/" + file + ".graphql")
	if err != nil {
		return nil, err
	}
	frags, err := operationFiles.ReadFile("operations/fragments.graphql")
	if err != nil {
		return nil, err
	}
	text := withFragments(string(b), string(frags))
	doc, gerr := gqlparser.LoadQueryWithRules(schema, text, rules.NewDefaultRules())
	if gerr != nil {
		return nil, fmt.Errorf("operations/%s.graphql: %v", file, gerr)
	}
	if len(doc.Operations) != 1 {
		return nil, fmt.Errorf("operations/%s.graphql: %d operations, want one", file, len(doc.Operations))
	}
	return &operation{name: doc.Operations[0].Name, text: text, op: doc.Operations[0]}, nil
}

var fragmentHead = regexp.MustCompile(`(?m)^fragment (\w+) on`)

// withFragments appends to op the fragments of frags it spreads, directly
// or through another fragment (GraphQL refuses unused fragments).
func withFragments(op, frags string) string {
	bodies := map[string]string{}
	var order []string
	locs := fragmentHead.FindAllStringSubmatchIndex(frags, -1)
	for i, l := range locs {
		end := len(frags)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		name := frags[l[2]:l[3]]
		bodies[name] = strings.TrimSpace(frags[l[0]:end])
		order = append(order, name)
	}
	used := map[string]bool{}
	text := op
	for changed := true; changed; {
		changed = false
		for _, name := range order {
			if !used[name] && regexp.MustCompile(`\.\.\.\s*`+name+`\b`).MatchString(text) {
				used[name] = true
				text += "\n" + bodies[name] + "\n"
				changed = true
			}
		}
	}
	return text
}

// uuidPattern is what an ID variable accepts: the records' UUIDs.
const uuidPattern = `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`

// variableSchema is the JSON Schema of the operation's variables: one
// property a variable, typed from the GraphQL type (input objects and enums
// expanded), required when non-null without a default, with the default
// it declares. Unknown properties are refused.
func variableSchema(schema *ast.Schema, op *ast.OperationDefinition) (*jsonschema.Schema, error) {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, AdditionalProperties: falseSchema()}
	for _, v := range op.VariableDefinitions {
		p := typeSchema(schema, v.Type, 0)
		if v.DefaultValue != nil {
			val, err := v.DefaultValue.Value(nil)
			if err != nil {
				return nil, fmt.Errorf("$%s: default: %v", v.Variable, err)
			}
			if def := schema.Types[v.Type.Name()]; def != nil && def.Kind == ast.Enum {
				val = lowerEnums(val)
			}
			b, err := json.Marshal(val)
			if err != nil {
				return nil, err
			}
			p.Default = b
		}
		if v.Type.NonNull && v.DefaultValue == nil {
			s.Required = append(s.Required, v.Variable)
		}
		s.Properties[v.Variable] = p
	}
	return s, nil
}

func falseSchema() *jsonschema.Schema { return &jsonschema.Schema{Not: &jsonschema.Schema{}} }

// typeSchema is the JSON Schema of a GraphQL input type. Enum values are
// spelled in lower case, as /v2 spells them (the tool upper-cases them
// for GraphQL).
func typeSchema(schema *ast.Schema, t *ast.Type, depth int) *jsonschema.Schema {
	if t.Elem != nil {
		return &jsonschema.Schema{Type: "array", Items: typeSchema(schema, t.Elem, depth)}
	}
	def := schema.Types[t.NamedType]
	if def == nil {
		return &jsonschema.Schema{}
	}
	switch def.Kind {
	case ast.Enum:
		s := &jsonschema.Schema{Type: "string", Description: def.Description}
		for _, v := range def.EnumValues {
			s.Enum = append(s.Enum, strings.ToLower(v.Name))
		}
		return s
	case ast.InputObject:
		s := &jsonschema.Schema{Type: "object", Description: def.Description, Properties: map[string]*jsonschema.Schema{}, AdditionalProperties: falseSchema()}
		if depth > 3 {
			return &jsonschema.Schema{Type: "object"}
		}
		for _, f := range def.Fields {
			p := typeSchema(schema, f.Type, depth+1)
			if p.Description == "" {
				p.Description = f.Description
			}
			s.Properties[f.Name] = p
			if f.Type.NonNull && f.DefaultValue == nil {
				s.Required = append(s.Required, f.Name)
			}
		}
		return s
	}
	switch t.NamedType {
	case "ID":
		return &jsonschema.Schema{Type: "string", Pattern: uuidPattern}
	case "String":
		return &jsonschema.Schema{Type: "string"}
	case "Int":
		return &jsonschema.Schema{Type: "integer"}
	case "Float":
		return &jsonschema.Schema{Type: "number"}
	case "Boolean":
		return &jsonschema.Schema{Type: "boolean"}
	case "DateTime":
		return &jsonschema.Schema{Type: "string", Description: "RFC 3339 date and time, e.g. 2026-03-02T00:00:00Z"}
	}
	return &jsonschema.Schema{}
}

// lowerEnums lower-cases the strings of v (an enum value or a list of
// them).
func lowerEnums(v any) any {
	switch x := v.(type) {
	case string:
		return strings.ToLower(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = lowerEnums(e)
		}
		return out
	}
	return v
}

// graphQLVariables turns validated tool arguments into the operation's
// variables: enum values back to GraphQL's upper case, in input objects
// too. Arguments that are not variables are left out.
func graphQLVariables(schema *ast.Schema, op *ast.OperationDefinition, args map[string]any) map[string]any {
	vars := map[string]any{}
	for _, v := range op.VariableDefinitions {
		if a, ok := args[v.Variable]; ok {
			vars[v.Variable] = upperEnums(schema, v.Type, a)
		}
	}
	return vars
}

func upperEnums(schema *ast.Schema, t *ast.Type, v any) any {
	if v == nil {
		return nil
	}
	if t.Elem != nil {
		list, ok := v.([]any)
		if !ok {
			return v
		}
		out := make([]any, len(list))
		for i, e := range list {
			out[i] = upperEnums(schema, t.Elem, e)
		}
		return out
	}
	def := schema.Types[t.NamedType]
	if def == nil {
		return v
	}
	switch def.Kind {
	case ast.Enum:
		if s, ok := v.(string); ok {
			return strings.ToUpper(s)
		}
	case ast.InputObject:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			if f := def.Fields.ForName(k); f != nil {
				out[k] = upperEnums(schema, f.Type, e)
			} else {
				out[k] = e
			}
		}
		return out
	}
	return v
}

// fields is a selection set with fragments flattened: each field once by
// its response key.
func fields(sel ast.SelectionSet) []*ast.Field {
	var out []*ast.Field
	seen := map[string]int{}
	var walk func(ast.SelectionSet)
	walk = func(sel ast.SelectionSet) {
		for _, s := range sel {
			switch x := s.(type) {
			case *ast.Field:
				if i, ok := seen[x.Alias]; ok {
					merged := *out[i]
					merged.SelectionSet = append(append(ast.SelectionSet{}, out[i].SelectionSet...), x.SelectionSet...)
					out[i] = &merged
					continue
				}
				seen[x.Alias] = len(out)
				out = append(out, x)
			case *ast.FragmentSpread:
				walk(x.Definition.SelectionSet)
			case *ast.InlineFragment:
				walk(x.SelectionSet)
			}
		}
	}
	walk(sel)
	return out
}

// outputSchema is the JSON Schema of a selection's answer as the tools
// shape it (shape): keys in snake_case, enum values in lower case, null
// where GraphQL may answer null or where a field is only included on
// request.
func outputSchema(schema *ast.Schema, sel ast.SelectionSet) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	for _, f := range fields(sel) {
		if f.Definition == nil || f.Name == "__typename" {
			continue
		}
		s.Properties[snake(f.Alias)] = fieldSchema(schema, f.Definition.Type, f.SelectionSet)
	}
	return s
}

func fieldSchema(schema *ast.Schema, t *ast.Type, sel ast.SelectionSet) *jsonschema.Schema {
	var s *jsonschema.Schema
	switch {
	case t.Elem != nil:
		s = &jsonschema.Schema{Type: "array", Items: fieldSchema(schema, t.Elem, sel)}
	case len(sel) > 0:
		s = outputSchema(schema, sel)
	default:
		s = typeSchema(schema, t, 0)
		s.Pattern, s.Enum = "", nil // describe, do not constrain, what the API answers
		if t.NamedType == "JSON" {
			return &jsonschema.Schema{}
		}
	}
	if !t.NonNull {
		s.Types = []string{s.Type, "null"}
		s.Type = ""
	}
	return s
}

// shape turns a GraphQL answer for sel into the tool's structured content:
// keys in snake_case, enum values in lower case (as /v2 spells them).
func shape(schema *ast.Schema, data map[string]any, sel ast.SelectionSet) map[string]any {
	out := map[string]any{}
	for _, f := range fields(sel) {
		v, ok := data[f.Alias]
		if !ok || f.Definition == nil {
			continue
		}
		out[snake(f.Alias)] = shapeValue(schema, f.Definition.Type, f.SelectionSet, v)
	}
	return out
}

func shapeValue(schema *ast.Schema, t *ast.Type, sel ast.SelectionSet, v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		if t.Elem == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = shapeValue(schema, t.Elem, sel, e)
		}
		return out
	case map[string]any:
		if len(sel) == 0 {
			return x // a JSON scalar
		}
		return shape(schema, x, sel)
	case string:
		if def := schema.Types[t.NamedType]; def != nil && def.Kind == ast.Enum {
			return strings.ToLower(x)
		}
	}
	return v
}

// snake spells a GraphQL name in snake_case: podEtaAt → pod_eta_at.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r + ('a' - 'A'))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
