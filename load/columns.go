package load

import (
	"reflect"
	"sync"

	"shipgraph/catalog"
	"shipgraph/model"
)

// ---------------------------------------------------------------- columns

// Fields names, by resource, the columns a request reads of each (the db
// tags of the model type's fields); a resource it does not name is read
// whole. Each API fills it from its own names (AddColumn for an attribute,
// AddRel for a relationship, AddAll when it cannot tell).
type Fields map[*catalog.Resource]map[string]bool

// all is the column that stands for every column of a resource.
const all = "*"

func (fs Fields) set(res *catalog.Resource) map[string]bool {
	s := fs[res]
	if s == nil {
		s = map[string]bool{}
		fs[res] = s
	}
	return s
}

// AddColumn adds a column of res.
func (fs Fields) AddColumn(res *catalog.Resource, col string) { fs.set(res)[col] = true }

// AddRel adds the key columns of rel to its owner's (the foreign key of a
// to-one relationship, the id of a to-many one).
func (fs Fields) AddRel(rel *catalog.Rel) {
	s := fs.set(rel.Owner)
	for _, t := range rel.Targets {
		s[t.KeyCol] = true
	}
}

// AddAll reads every column of res.
func (fs Fields) AddAll(res *catalog.Resource) { fs.set(res)[all] = true }

// Has reports whether fs names res.
func (fs Fields) Has(res *catalog.Resource) bool { return fs[res] != nil }

// columnTags are the db columns of the model types whose reads the store
// can narrow, from their struct tags, by resource.
var columnTags = sync.OnceValue(func() map[*catalog.Resource]map[string]bool {
	out := map[*catalog.Resource]map[string]bool{}
	for _, res := range []*catalog.Resource{catalog.Shipment, catalog.Container, catalog.Document, catalog.Terminal, catalog.Port, catalog.CustomField} {
		t := res.Go.Elem()
		out[res] = map[string]bool{}
		for i := range t.NumField() {
			if tag := t.Field(i).Tag.Get("db"); tag != "" && tag != "-" {
				out[res][tag] = true
			}
		}
	}
	return out
})

// IsColumn reports whether col is a column of res the store can narrow
// its reads to.
func IsColumn(res *catalog.Resource, col string) bool { return columnTags()[res][col] }

// Selection turns the fields of a request into the columns the store
// reads, by model type: the columns named and the id. A resource with a
// column the store does not know (or every column) is read whole.
func (fs Fields) Selection() model.Selection {
	sel := model.Selection{}
	tags := columnTags()
	for res, cols := range fs {
		known, ok := tags[res]
		if !ok {
			continue
		}
		want := make([]string, 0, len(cols)+1)
		whole := false
		for c := range cols {
			if c == "id" {
				continue
			}
			if !known[c] {
				whole = true
				break
			}
			want = append(want, c)
		}
		if !whole {
			sel[typeName(res)] = append(want, "id")
		}
	}
	return sel
}

// typeName is the model type of res, as model.Selection names it.
func typeName(res *catalog.Resource) string {
	t := res.Go
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}
