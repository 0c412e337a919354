package rest

import (
	"reflect"
	"sync"

	"shipgraph/catalog"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// Sparse fieldsets (JSON:API `fields[TYPE]=a,b`): a resource of TYPE shows
// only the attributes and relationships named; the store reads only the
// columns those need (resolve runs the plan). A type without fields[…] shows
// everything.

// resourceTypes are the resource types fields[…] may name, with what each
// shows: its attributes (from the json names of its attribute struct) and
// its relationships (the catalogue's, with their include aliases).
var resourceTypes = sync.OnceValue(func() map[string]map[string]bool {
	types := map[string]map[string]bool{}
	for _, s := range resourceSchemas() {
		names := map[string]bool{}
		for _, name := range jsonapi.AttributeNames(reflect.TypeOf(s.attrs)) {
			names[name] = true
		}
		for _, r := range s.res.Members() {
			names[r.JSONAPI] = true
			for _, a := range r.Aliases {
				names[a] = true
			}
		}
		types[s.res.JSONAPI] = names
	}
	return types
})

// resourceSchema is one resource type and its attributes struct.
type resourceSchema struct {
	res   *catalog.Resource
	attrs any
}

func resourceSchemas() []resourceSchema {
	return []resourceSchema{
		{catalog.Shipment, shipmentAttributes{}},
		{catalog.Container, containerAttributes{}},
		{catalog.Document, documentAttributes{}},
		{catalog.Terminal, terminalAttributes{}},
		{catalog.RailTerminal, railTerminalAttributes{}},
		{catalog.Port, portAttributes{}},
		{catalog.MetroArea, metroAreaAttributes{}},
		{catalog.Account, accountAttributes{}},
		{catalog.User, userAttributes{}},
		{catalog.EmailSubmission, emailSubmissionAttributes{}},
		{catalog.DocumentRepresentation, representationAttributes{}},
		{catalog.CustomField, customFieldAttributes{}},
		{catalog.CustomFieldDefinition, definitionAttributes{}},
		{catalog.CustomFieldOption, optionAttributes{}},
		{catalog.TransportEvent, transportEventAttributes{}},
		{catalog.RawEvent, rawEventAttributes{}},
	}
}

// addMember adds to fs what the member name of res reads: a
// relationship's key columns, or the column of an attribute (its name, or
// the columns attributeColumns gives); an attribute of no column of its
// own reads the type whole.
func addMember(fs resolve.Fields, res *catalog.Resource, name string) {
	if rel := res.Member(name); rel != nil {
		fs.AddRel(rel)
		addHeld(fs, res, rel)
		return
	}
	if cols, ok := attributeColumns[res.JSONAPI][name]; ok {
		for _, c := range cols {
			fs.AddColumn(res, c)
		}
		return
	}
	if resolve.IsColumn(res, name) {
		fs.AddColumn(res, name)
		return
	}
	fs.AddAll(res)
}

// addHeld adds to fs the columns of res that carry rel's linkage in the
// record's own row (catalog.Target.HeldCol), if any.
func addHeld(fs resolve.Fields, res *catalog.Resource, rel *catalog.Rel) {
	if rel.Linkage == nil {
		return
	}
	for _, t := range rel.Linkage.Targets {
		if t.HeldCol != "" {
			fs.AddColumn(res, t.HeldCol)
		}
	}
}

// attributeColumns are the attributes read from columns other than their
// own (an attribute named as its column needs no entry).
var attributeColumns = map[string]map[string][]string{
	"container":    {"import_deadlines": {"pickup_lfd_terminal", "pickup_lfd_rail", "pickup_lfd_line"}},
	"custom_field": {"display_value": {"value", "data_type", "reference_type", "option_labels"}},
}

// allStoreFields are storeFields without fieldsets: every attribute and
// relationship of every type. Shared by requests, which only read it.
var allStoreFields = sync.OnceValue(func() resolve.Fields {
	out := resolve.Fields{}
	for typ, names := range resourceTypes() {
		res := catalog.ByJSONAPI(typ)
		for n := range names {
			addMember(out, res, n)
		}
	}
	return out
})
