package rest

import (
	"bytes"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"shipgraph/rest/jsonapi"
)

// The JSON:API document types. They are written by hand (not reflected from
// the models) so that output is deterministic: members in a fixed order,
// attributes as one struct per resource type in the order of the spec,
// relationships as an ordered list, and included resources in the order they
// were first reached.

// Document is a top-level JSON:API document. Data is a *Resource or a
// []*Resource; Included is rendered only when non-nil (an include was asked
// for), as [] when nothing was reachable.
type Document struct {
	Data     any            `json:"data"`
	Included []*Resource    `json:"included,omitzero"`
	Links    *jsonapi.Links `json:"links,omitempty"`
	Meta     *jsonapi.Meta  `json:"meta,omitempty"`
}

// Resource is a resource object.
type Resource struct {
	ID            string         `json:"id"`
	Type          string         `json:"type"`
	Attributes    any            `json:"attributes,omitempty"`
	Relationships Relationships  `json:"relationships,omitzero"`
	Links         *jsonapi.Links `json:"links,omitempty"`

	// keep is the sparse fieldset of an attributeWriter's attributes
	// (nil: every attribute).
	keep map[string]bool
}

// Identifier is a resource identifier object (linkage).
type Identifier struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

func (r *Resource) identifier() Identifier { return Identifier{Type: r.Type, ID: r.ID} }

// Relationship is one named relationship with its linkage: a to-one
// relationship renders {"data": null} or {"data": {…}}, a to-many one
// {"data": [...]}, never null.
type Relationship struct {
	Name string
	Many bool
	One  Identifier // to-one linkage; null when its ID is empty
	List []Identifier
}

// toOne returns a to-one relationship; an empty id is null linkage.
func toOne(name, typ string, id *string) Relationship {
	if id == nil || *id == "" {
		return Relationship{Name: name}
	}
	return Relationship{Name: name, One: Identifier{Type: typ, ID: *id}}
}

// toMany returns a to-many relationship (an empty list renders as []).
func toMany(name string, ids []Identifier) Relationship {
	if ids == nil {
		ids = []Identifier{}
	}
	return Relationship{Name: name, Many: true, List: ids}
}

// Relationships is the ordered relationships object of a resource.
type Relationships []Relationship

// appendJSON appends the relationships object to b.
func (rs Relationships) appendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, r := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, r.Name)
		b = append(b, `:{"data":`...)
		switch {
		case r.Many:
			b = append(b, '[')
			for j, id := range r.List {
				if j > 0 {
					b = append(b, ',')
				}
				b = id.appendJSON(b)
			}
			b = append(b, ']')
		case r.One.ID != "":
			b = r.One.appendJSON(b)
		default:
			b = append(b, "null"...)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

func (id Identifier) appendJSON(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, id.Type)
	b = append(b, `,"id":`...)
	b = appendString(b, id.ID)
	return append(b, '}')
}

// timestamp renders a time in UTC (RFC 3339, with fractional seconds only
// when there are any), whatever the location the driver gave it.
type timestamp time.Time

// It is a TextMarshaler rather than a json.Marshaler: encoding/json quotes
// text as it writes it, while a MarshalJSON result is parsed again to be
// checked and compacted (a /v2 page of containers has thousands of times).
func (t timestamp) MarshalText() ([]byte, error) {
	return time.Time(t).UTC().AppendFormat(make([]byte, 0, 32), time.RFC3339Nano), nil
}

func ts(t time.Time) timestamp { return timestamp(t) }

// tsp is ts for nullable times: the same value, not a copy.
func tsp(t *time.Time) *timestamp { return (*timestamp)(t) }

// orEmpty returns s, or an empty list for nil: a list the spec does not
// let be null (the jsonapi tag's nonnull).
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// bufs are the buffers documents are written into, reused: a page of a
// hundred documents with includes is some 700 KB, and a fresh buffer grown
// to that size was copied and cleared on every request.
var bufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBuf is the largest buffer kept for reuse.
const maxPooledBuf = 8 << 20

// writeDocument answers a JSON:API document.
func writeDocument(w http.ResponseWriter, r *http.Request, status int, doc *Document) {
	buf := bufs.Get().(*[]byte)
	b, err := doc.appendJSON((*buf)[:0])
	defer func() {
		if cap(b) <= maxPooledBuf {
			*buf = b[:0]
			bufs.Put(buf)
		}
	}()
	if err != nil {
		// Every member is a plain value: only a bug (or a value JSON
		// cannot hold, such as NaN) gets here, and it is logged and
		// answered as a generic 500.
		jsonapi.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", jsonapi.MediaType)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// encode writes the document into b (see appendJSON).
func (d *Document) encode(b *bytes.Buffer) error {
	out, err := d.appendJSON(b.AvailableBuffer())
	b.Write(out)
	return err
}

// appendJSON appends the document as encoding/json would write the struct
// (with HTML escaping off, so links keep their & literal, and a final
// newline), the resources, their linkage and their attributes by hand
// (encode.go): a page of a hundred documents with includes has thousands
// of identifiers and attribute values.
func (d *Document) appendJSON(b []byte) ([]byte, error) {
	e := &encoder{b: b}
	resources := func(rs []*Resource) {
		e.b = append(e.b, '[')
		for i, r := range rs {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			r.encode(e)
		}
		e.b = append(e.b, ']')
	}
	e.b = append(e.b, `{"data":`...)
	switch data := d.Data.(type) {
	case []*Resource:
		resources(data)
	case *Resource:
		if data == nil {
			e.b = append(e.b, "null"...)
		} else {
			data.encode(e)
		}
	default:
		e.value(d.Data)
	}
	if d.Included != nil {
		e.b = append(e.b, `,"included":`...)
		resources(d.Included)
	}
	if d.Links != nil {
		e.b = append(e.b, `,"links":`...)
		e.b = appendLinks(e.b, d.Links)
	}
	if d.Meta != nil {
		e.b = append(e.b, `,"meta":`...)
		e.b = appendMeta(e.b, d.Meta)
	}
	e.b = append(e.b, "}\n"...)
	return e.b, e.err
}

// reflectAttributes, set by tests only, writes every attributes struct
// through encoding/json: the reference the writers are compared with.
var reflectAttributes atomic.Bool

func (r *Resource) encode(e *encoder) {
	e.b = append(e.b, `{"id":`...)
	e.b = appendString(e.b, r.ID)
	e.b = append(e.b, `,"type":`...)
	e.b = appendString(e.b, r.Type)
	if r.Attributes != nil {
		mark := len(e.b)
		e.b = append(e.b, `,"attributes":`...)
		w, ok := r.Attributes.(attributeWriter)
		switch {
		case ok && !reflectAttributes.Load():
			e.b = append(e.b, '{')
			e.attrs = attrs{e: e, keep: r.keep}
			w.writeAttributes(&e.attrs)
			if e.attrs.n == 0 && r.keep != nil {
				// A sparse fieldset that keeps no attribute leaves the
				// member out.
				e.b = e.b[:mark]
			} else {
				e.b = append(e.b, '}')
			}
		case r.keep != nil:
			if s := (sparseAttributes{v: r.Attributes, keep: r.keep}); len(s.members()) > 0 {
				s.encode(e)
			} else {
				e.b = e.b[:mark]
			}
		default:
			if s, ok := r.Attributes.(sparseAttributes); ok {
				s.encode(e)
			} else {
				e.value(r.Attributes)
			}
		}
	}
	if r.Relationships != nil {
		e.b = append(e.b, `,"relationships":`...)
		e.b = r.Relationships.appendJSON(e.b)
	}
	if r.Links != nil {
		e.b = append(e.b, `,"links":`...)
		e.b = appendLinks(e.b, r.Links)
	}
	e.b = append(e.b, '}')
}
