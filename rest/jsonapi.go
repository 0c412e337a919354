package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
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
	One  *Identifier
	List []Identifier
}

// toOne returns a to-one relationship; an empty id is null linkage.
func toOne(name, typ string, id *string) Relationship {
	if id == nil || *id == "" {
		return Relationship{Name: name}
	}
	return Relationship{Name: name, One: &Identifier{Type: typ, ID: *id}}
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

// appendTo writes the relationships object to b: names and identifiers are
// plain ASCII (writeString escapes anything else).
func (rs Relationships) appendTo(b *bytes.Buffer) {
	b.WriteByte('{')
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, r.Name)
		b.WriteString(`:{"data":`)
		switch {
		case r.Many:
			b.WriteByte('[')
			for j, id := range r.List {
				if j > 0 {
					b.WriteByte(',')
				}
				id.appendTo(b)
			}
			b.WriteByte(']')
		case r.One != nil:
			r.One.appendTo(b)
		default:
			b.WriteString("null")
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
}

func (id Identifier) appendTo(b *bytes.Buffer) {
	b.WriteString(`{"type":`)
	writeString(b, id.Type)
	b.WriteString(`,"id":`)
	writeString(b, id.ID)
	b.WriteByte('}')
}

// writeString writes s as a JSON string: as it is when it needs no
// escaping (ids, types, member names), else through encoding/json.
func writeString(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			v, _ := json.Marshal(s)
			b.Write(v)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}

// Links is a links object; members without a link are left out.
type Links struct {
	Self     string `json:"self,omitempty"`
	Download string `json:"download,omitempty"`
	First    string `json:"first,omitempty"`
	Prev     string `json:"prev,omitempty"`
	Next     string `json:"next,omitempty"`
	Last     string `json:"last,omitempty"`
}

// Meta is the meta object of a list: size is the page size the list was
// read with and total the number of records of the whole (filtered) list,
// as the live API answers.
type Meta struct {
	Size  int `json:"size"`
	Total int `json:"total"`
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

// tsp is ts for nullable times.
func tsp(t *time.Time) *timestamp {
	if t == nil {
		return nil
	}
	v := timestamp(*t)
	return &v
}

// strings returns s, or an empty list for nil, for non-nullable arrays.
func strs(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// writeDocument answers a JSON:API document.
func writeDocument(w http.ResponseWriter, r *http.Request, status int, doc *Document) {
	var b bytes.Buffer
	if err := doc.encode(&b); err != nil {
		// Every member is a plain value: only a bug gets here, and it is
		// logged and answered as a generic 500.
		WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", MediaType)
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// encode writes the document as encoding/json would write the struct (with
// HTML escaping off, so links keep their & literal, and a final newline),
// the resources and their linkage by hand: a page of a hundred documents
// with includes has thousands of identifiers, and a MarshalJSON result is
// parsed again by encoding/json to be checked.
func (d *Document) encode(b *bytes.Buffer) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	value := func(v any) error {
		if err := enc.Encode(v); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1) // Encode ends with a newline
		return nil
	}
	resources := func(rs []*Resource) error {
		b.WriteByte('[')
		for i, r := range rs {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := r.encode(b, value); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	}
	b.WriteString(`{"data":`)
	var err error
	switch data := d.Data.(type) {
	case []*Resource:
		err = resources(data)
	case *Resource:
		if data == nil {
			b.WriteString("null")
		} else {
			err = data.encode(b, value)
		}
	default:
		err = value(d.Data)
	}
	if err == nil && d.Included != nil {
		b.WriteString(`,"included":`)
		err = resources(d.Included)
	}
	if err == nil && d.Links != nil {
		b.WriteString(`,"links":`)
		err = value(d.Links)
	}
	if err == nil && d.Meta != nil {
		b.WriteString(`,"meta":`)
		err = value(d.Meta)
	}
	b.WriteString("}\n")
	return err
}

func (r *Resource) encode(b *bytes.Buffer, value func(any) error) error {
	b.WriteString(`{"id":`)
	writeString(b, r.ID)
	b.WriteString(`,"type":`)
	writeString(b, r.Type)
	if r.Attributes != nil {
		b.WriteString(`,"attributes":`)
		var err error
		if sa, ok := r.Attributes.(sparseAttributes); ok {
			err = sa.encode(b, value)
		} else {
			err = value(r.Attributes)
		}
		if err != nil {
			return err
		}
	}
	if r.Relationships != nil {
		b.WriteString(`,"relationships":`)
		r.Relationships.appendTo(b)
	}
	if r.Links != nil {
		b.WriteString(`,"links":`)
		if err := value(r.Links); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}
