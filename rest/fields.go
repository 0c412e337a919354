package rest

import (
	"bytes"
	"reflect"
	"strings"
	"sync"

	"shipgraph/graph"
)

// Sparse fieldsets (JSON:API `fields[TYPE]=a,b`): a resource of TYPE shows
// only the attributes and relationships named; the store reads only the
// columns those need (graph.Prepare). A type without fields[…] shows
// everything.

// resourceTypes are the resource types fields[…] may name, with what each
// shows: its attributes (from the json names of its attribute struct) and
// its relationships.
var resourceTypes = sync.OnceValue(func() map[string]map[string]bool {
	types := map[string]map[string]bool{}
	add := func(typ string, attrs any, rels ...string) {
		names := map[string]bool{}
		for _, f := range reflect.VisibleFields(reflect.TypeOf(attrs)) {
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
				names[name] = true
			}
		}
		for _, r := range rels {
			names[r] = true
		}
		types[typ] = names
	}
	add("shipment", shipmentAttributes{}, keys(shipmentIncludes)...)
	add("container", containerAttributes{}, "shipment", "pod_terminal", "pickup_facility", "transport_events", "raw_events")
	add("document", documentAttributes{}, keys(documentIncludes)...)
	add("terminal", terminalAttributes{}, "port")
	add("rail_terminal", railTerminalAttributes{}, "port", "metro_area")
	add("port", portAttributes{})
	add("metro_area", metroAreaAttributes{})
	add("account", accountAttributes{})
	add("user", userAttributes{})
	add("email_submission", emailSubmissionAttributes{})
	add("document_representation", representationAttributes{})
	add("custom_field", customFieldAttributes{}, "entity", "definition")
	add("custom_field_definition", definitionAttributes{})
	add("custom_field_option", optionAttributes{})
	return types
})

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
func (p *params) graphFields() graph.Fields {
	if len(p.fields) == 0 {
		return nil
	}
	out := graph.Fields{}
	for typ, names := range p.fields {
		gt := pascal(typ)
		set := map[string]bool{}
		for n := range names {
			set[camel(n)] = true
		}
		for inc := range p.include {
			if resourceTypes()[typ][inc] {
				set[camel(inc)] = true
			}
		}
		out[gt] = set
	}
	return out
}

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
		if r.Attributes != nil {
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

// encode writes the kept members as an object into b, each value through
// value (the document's encoder).
func (s sparseAttributes) encode(b *bytes.Buffer, value func(any) error) error {
	b.WriteByte('{')
	for i, m := range s.members() {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, m.name)
		b.WriteByte(':')
		if err := value(m.value.Interface()); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}
