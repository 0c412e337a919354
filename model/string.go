package model

import (
	"fmt"

	"github.com/99designs/gqlgen/graphql"
)

// The GraphQL String scalar (bound in gqlgen.yml). gqlgen's own input
// coercion turns a number or a boolean in the variables into text, so
// {"requestNumber": 5} would be tracked as "5"; the GraphQL specification
// refuses them (a String input is a string), as does the query's literal
// validation already.

// MarshalString writes a String as gqlgen does.
func MarshalString(s string) graphql.Marshaler { return graphql.MarshalString(s) }

// UnmarshalString reads a String input: a string, nothing else (null is
// the field's business: nullable fields never get here with it).
func UnmarshalString(v any) (string, error) {
	switch s := v.(type) {
	case string:
		return s, nil
	case nil:
		return "", nil
	}
	return "", fmt.Errorf("String cannot represent a non string value: %v", v)
}
