package gqlhttp

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"shipgraph/catalog"
	"shipgraph/graph"
	"shipgraph/graph/executor"
)

// TestComplexityFromRelations: every list field of the schema that is a
// relationship of relations.go weighs manyWeight times its selection, and
// no other field is weighed so.
func TestComplexityFromRelations(t *testing.T) {
	c := execConfig(&graph.Resolver{}).Complexity
	v := reflect.ValueOf(c)
	weighed := 0
	for _, def := range executor.NewExecutableSchema(executor.Config{}).Schema().Types {
		if def.Kind != ast.Object || def.BuiltIn {
			continue
		}
		obj := v.FieldByName(def.Name)
		for _, f := range def.Fields {
			fn := obj.FieldByName(strings.ToUpper(f.Name[:1]) + f.Name[1:])
			if !fn.IsValid() || fn.IsNil() || fn.Type() != reflect.TypeOf(func(int) int { return 0 }) {
				continue
			}
			isMany := slices.Contains(catalog.ToManyFields()[def.Name], f.Name)
			list := f.Type.Elem != nil
			got := fn.Interface().(func(int) int)(3)
			switch {
			case isMany && list:
				weighed++
				if got != 1+3*manyWeight {
					t.Errorf("%s.%s weighs %d for a selection of 3, want %d", def.Name, f.Name, got, 1+3*manyWeight)
				}
			default:
				t.Errorf("%s.%s has a complexity function but is no to-many relationship", def.Name, f.Name)
			}
		}
		for _, name := range catalog.ToManyFields()[def.Name] {
			f := def.Fields.ForName(name)
			if f == nil || f.Type.Elem == nil || len(f.Arguments) > 0 {
				continue
			}
			if fn := obj.FieldByName(strings.ToUpper(name[:1]) + name[1:]); !fn.IsValid() || fn.IsNil() {
				t.Errorf("to-many relationship %s.%s has no complexity weight", def.Name, name)
			}
		}
	}
	if weighed < 9 {
		t.Errorf("only %d to-many relationships weighed", weighed)
	}
}
