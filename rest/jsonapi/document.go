package jsonapi

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"
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
	Data     any         `json:"data"`
	Included []*Resource `json:"included,omitzero"`
	Links    *Links      `json:"links,omitempty"`
	Meta     *Meta       `json:"meta,omitempty"`
}

// Resource is a resource object.
type Resource struct {
	ID            string        `json:"id"`
	Type          string        `json:"type"`
	Attributes    any           `json:"attributes,omitempty"`
	Relationships Relationships `json:"relationships,omitzero"`
	Links         *Links        `json:"links,omitempty"`

	// Keep is the sparse fieldset of an AttributeWriter's attributes
	// (nil: every attribute); Sparse sets it.
	Keep map[string]bool `json:"-"`
}

// Identifier is a resource identifier object (linkage).
type Identifier struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

func (r *Resource) Identifier() Identifier { return Identifier{Type: r.Type, ID: r.ID} }

// Relationship is one named relationship with its linkage: a to-one
// relationship renders {"data": null} or {"data": {…}}, a to-many one
// {"data": [...]}, never null.
type Relationship struct {
	Name string
	Many bool
	One  Identifier // to-one linkage; null when its ID is empty
	List []Identifier
}

// ToOne returns a to-one relationship; an empty id is null linkage.
func ToOne(name, typ string, id *string) Relationship {
	if id == nil || *id == "" {
		return Relationship{Name: name}
	}
	return Relationship{Name: name, One: Identifier{Type: typ, ID: *id}}
}

// ToMany returns a to-many relationship (an empty list renders as []).
func ToMany(name string, ids []Identifier) Relationship {
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
		b = AppendString(b, r.Name)
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
	b = AppendString(b, id.Type)
	b = append(b, `,"id":`...)
	b = AppendString(b, id.ID)
	return append(b, '}')
}

// Time renders a time in UTC (RFC 3339, with fractional seconds only
// when there are any), whatever the location the driver gave it.
type Time time.Time

// It is a TextMarshaler rather than a json.Marshaler: encoding/json quotes
// text as it writes it, while a MarshalJSON result is parsed again to be
// checked and compacted (a /v2 page of containers has thousands of times).
func (t Time) MarshalText() ([]byte, error) {
	return time.Time(t).UTC().AppendFormat(make([]byte, 0, 32), time.RFC3339Nano), nil
}

// bufs are the buffers documents are written into, reused: a page of a
// hundred documents with includes is some 700 KB, and a fresh buffer grown
// to that size was copied and cleared on every request.
var bufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBuf is the largest buffer kept for reuse.
const maxPooledBuf = 8 << 20

// WriteDocument answers a JSON:API document.
func WriteDocument(w http.ResponseWriter, r *http.Request, status int, doc *Document) {
	buf := bufs.Get().(*[]byte)
	b, err := doc.AppendJSON((*buf)[:0])
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
		WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", MediaType)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// AppendJSON appends the document as encoding/json would write the struct
// (with HTML escaping off, so links keep their & literal, and a final
// newline), the resources, their linkage and their attributes by hand
// (encode.go): a page of a hundred documents with includes has thousands
// of identifiers and attribute values.
func (d *Document) AppendJSON(b []byte) ([]byte, error) {
	e := &Encoder{B: b}
	resources := func(rs []*Resource) {
		e.B = append(e.B, '[')
		for i, r := range rs {
			if i > 0 {
				e.B = append(e.B, ',')
			}
			r.encode(e)
		}
		e.B = append(e.B, ']')
	}
	e.B = append(e.B, `{"data":`...)
	switch data := d.Data.(type) {
	case []*Resource:
		resources(data)
	case *Resource:
		if data == nil {
			e.B = append(e.B, "null"...)
		} else {
			data.encode(e)
		}
	default:
		e.Value(d.Data)
	}
	if d.Included != nil {
		e.B = append(e.B, `,"included":`...)
		resources(d.Included)
	}
	if d.Links != nil {
		e.B = append(e.B, `,"links":`...)
		e.B = appendLinks(e.B, d.Links)
	}
	if d.Meta != nil {
		e.B = append(e.B, `,"meta":`...)
		e.B = appendMeta(e.B, d.Meta)
	}
	e.B = append(e.B, "}\n"...)
	return e.B, e.err
}

// ReflectAttributes, set by tests only, writes every attributes struct
// through encoding/json: the reference the writers are compared with.
var ReflectAttributes atomic.Bool

func (r *Resource) encode(e *Encoder) {
	e.B = append(e.B, `{"id":`...)
	e.B = AppendString(e.B, r.ID)
	e.B = append(e.B, `,"type":`...)
	e.B = AppendString(e.B, r.Type)
	if r.Attributes != nil {
		mark := len(e.B)
		e.B = append(e.B, `,"attributes":`...)
		w, ok := r.Attributes.(AttributeWriter)
		switch {
		case ok && !ReflectAttributes.Load():
			e.B = append(e.B, '{')
			e.attrs = Attrs{E: e, keep: r.Keep}
			w.WriteAttributes(&e.attrs)
			if e.attrs.n == 0 && r.Keep != nil {
				// A sparse fieldset that keeps no attribute leaves the
				// member out.
				e.B = e.B[:mark]
			} else {
				e.B = append(e.B, '}')
			}
		case r.Keep != nil:
			if s := (sparseAttributes{v: r.Attributes, keep: r.Keep}); len(s.members()) > 0 {
				s.encode(e)
			} else {
				e.B = e.B[:mark]
			}
		default:
			if s, ok := r.Attributes.(sparseAttributes); ok {
				s.encode(e)
			} else {
				e.Value(r.Attributes)
			}
		}
	}
	if r.Relationships != nil {
		e.B = append(e.B, `,"relationships":`...)
		e.B = r.Relationships.appendJSON(e.B)
	}
	if r.Links != nil {
		e.B = append(e.B, `,"links":`...)
		e.B = appendLinks(e.B, r.Links)
	}
	e.B = append(e.B, '}')
}
