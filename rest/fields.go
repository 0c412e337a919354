package rest

import (
	"reflect"
	"strings"
	"sync"

	"shipgraph/load"
)

// Sparse fieldsets (JSON:API `fields[TYPE]=a,b`): a resource of TYPE shows
// only the attributes and relationships named; the store reads only the
// columns those need (load.Prepare). A type without fields[…] shows
// everything.

// resourceTypes are the resource types fields[…] may name, with what each
// shows: its attributes (from the json names of its attribute struct) and
// its relationships.
var resourceTypes = sync.OnceValue(func() map[string]map[string]bool {
	types := map[string]map[string]bool{}
	for _, s := range resourceSchemas() {
		names := map[string]bool{}
		for _, f := range reflect.VisibleFields(reflect.TypeOf(s.attrs)) {
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
				names[name] = true
			}
		}
		for _, r := range s.rels {
			names[r] = true
		}
		types[s.typ] = names
	}
	return types
})

// resourceSchema is one resource type: its attributes struct and its
// relationships.
type resourceSchema struct {
	typ   string
	attrs any
	rels  []string
}

func resourceSchemas() []resourceSchema {
	return []resourceSchema{
		{"shipment", shipmentAttributes{}, keys(shipmentIncludes)},
		{"container", containerAttributes{}, []string{"shipment", "pod_terminal", "pickup_facility", "transport_events", "raw_events"}},
		{"document", documentAttributes{}, keys(documentIncludes)},
		{"terminal", terminalAttributes{}, []string{"port"}},
		{"rail_terminal", railTerminalAttributes{}, []string{"port", "metro_area"}},
		{"port", portAttributes{}, nil},
		{"metro_area", metroAreaAttributes{}, nil},
		{"account", accountAttributes{}, nil},
		{"user", userAttributes{}, nil},
		{"email_submission", emailSubmissionAttributes{}, nil},
		{"document_representation", representationAttributes{}, nil},
		{"custom_field", customFieldAttributes{}, []string{"entity", "definition"}},
		{"custom_field_definition", definitionAttributes{}, nil},
		{"custom_field_option", optionAttributes{}, nil},
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// parseFields reads fields[typ]=v: every name must be an attribute or
// relationship of typ. An empty value shows no attribute or relationship.
func (p *params) parseFields(param, typ, v string) error {
	known, ok := resourceTypes()[typ]
	if !ok {
		return badParam(param, "%s: %q is not a resource type", param, typ)
	}
	set := map[string]bool{}
	for name := range strings.SplitSeq(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !known[name] {
			return badParam(param, "%s: %q is not an attribute or relationship of %s", param, name, typ)
		}
		set[name] = true
	}
	if p.fields == nil {
		p.fields = map[string]map[string]bool{}
	}
	p.fields[typ] = set
	return nil
}

// graphFields is what the store must read for the fieldsets of p: the
// GraphQL fields (and so columns) of each type fields[…] names, plus the
// relationships of that type the includes follow (their keys).
//
// A type without fields[…] shows all its attributes and relationships: the
// store then reads their columns, not those no resource shows (account_id,
// updated_at of shipments and containers …).
func (p *params) graphFields() load.Fields {
	if len(p.fields) == 0 {
		return allGraphFields()
	}
	out := load.Fields{}
	for typ := range resourceTypes() {
		names, ok := p.fields[typ]
		if !ok {
			out[pascal(typ)] = allGraphFields()[pascal(typ)]
			continue
		}
		set := map[string]bool{}
		for n := range names {
			set[camel(n)] = true
		}
		for inc := range p.include {
			if resourceTypes()[typ][inc] {
				set[camel(inc)] = true
			}
		}
		out[pascal(typ)] = set
	}
	return out
}

// allGraphFields are graphFields without fieldsets: every attribute and
// relationship of every type. Shared by requests, which only read it.
var allGraphFields = sync.OnceValue(func() load.Fields {
	out := load.Fields{}
	for typ, names := range resourceTypes() {
		set := map[string]bool{}
		for n := range names {
			set[camel(n)] = true
		}
		out[pascal(typ)] = set
	}
	return out
})

// pascal converts a resource type to its GraphQL type: custom_field →
// CustomField.
func pascal(s string) string {
	c := camel(s)
	if c == "" {
		return c
	}
	return strings.ToUpper(c[:1]) + c[1:]
}

// sparse restricts rs to the fieldsets of the builder's request.
func (b *builder) sparse(rs []*Resource) {
	if len(b.fields) == 0 {
		return
	}
	for _, r := range rs {
		keep, ok := b.fields[r.Type]
		if !ok {
			continue
		}
		if _, ok := r.Attributes.(attributeWriter); ok {
			r.keep = keep
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
func (s sparseAttributes) encode(e *encoder) {
	e.b = append(e.b, '{')
	for i, m := range s.members() {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = appendString(e.b, m.name)
		e.b = append(e.b, ':')
		e.value(m.value.Interface())
	}
	e.b = append(e.b, '}')
}
