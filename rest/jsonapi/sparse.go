package jsonapi

import (
	"reflect"
	"strings"
	"sync"
)

// Sparse restricts r to the sparse fieldset keep (JSON:API fields[TYPE]):
// the attributes and relationships it names, in their order.
func (r *Resource) Sparse(keep map[string]bool) {
	if _, ok := r.Attributes.(AttributeWriter); ok {
		r.Keep = keep
	} else if r.Attributes != nil {
		r.Attributes = sparseAttributes{v: r.Attributes, keep: keep}
		if len(r.Attributes.(sparseAttributes).members()) == 0 {
			r.Attributes = nil
		}
	}
	var rels Relationships
	for _, rel := range r.Relationships {
		if keep[rel.Name] {
			rels = append(rels, rel)
		}
	}
	r.Relationships = rels
}

// AttributeNames are the json names of the members of the attributes
// struct type t, in order.
func AttributeNames(t reflect.Type) []string {
	var out []string
	for _, f := range fieldsOfType(t) {
		out = append(out, f.name)
	}
	return out
}

// sparseAttributes renders the attributes struct v with only the members
// named in keep, in the struct's order.
type sparseAttributes struct {
	v    any
	keep map[string]bool
}

// attrField is one member of an attributes struct.
type attrField struct {
	name  string
	omit  bool // omitempty or omitzero: left out when zero
	index []int
}

// attrFields are the members of attributes structs, by type (reflection
// once per type, not per resource).
var attrFields sync.Map // reflect.Type → []attrField

func fieldsOfType(t reflect.Type) []attrField {
	if v, ok := attrFields.Load(t); ok {
		return v.([]attrField)
	}
	var out []attrField
	for _, f := range reflect.VisibleFields(t) {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out = append(out, attrField{name, strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero"), f.Index})
	}
	attrFields.Store(t, out)
	return out
}

// member is one attribute a sparse fieldset keeps.
type member struct {
	name  string
	value reflect.Value
}

// members are the attributes kept, in the struct's order, without those
// the struct itself would leave out (omitempty, omitzero).
func (s sparseAttributes) members() []member {
	v := reflect.Indirect(reflect.ValueOf(s.v))
	var out []member
	for _, f := range fieldsOfType(v.Type()) {
		if !s.keep[f.name] {
			continue
		}
		fv := v.FieldByIndex(f.index)
		if f.omit && fv.IsZero() {
			continue
		}
		out = append(out, member{f.name, fv})
	}
	return out
}

// encode writes the kept members as an object, each value through
// encoding/json (attribute structs without a writer of their own).
func (s sparseAttributes) encode(e *Encoder) {
	e.B = append(e.B, '{')
	for i, m := range s.members() {
		if i > 0 {
			e.B = append(e.B, ',')
		}
		e.B = AppendString(e.B, m.name)
		e.B = append(e.B, ':')
		e.Value(m.value.Interface())
	}
	e.B = append(e.B, '}')
}
