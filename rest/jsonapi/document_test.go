package jsonapi

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"testing"
	"time"
)

// Document.AppendJSON writes the document encoding/json writes for the same
// struct (the same JSON values, members in the same order), including
// strings that need escaping.
func TestDocumentEncodeMatchesEncodingJSON(t *testing.T) {
	odd := "a\"b\\c<d>&e\u00e9\u2028\x01"
	res := func(id string) *Resource {
		return &Resource{
			ID: id, Type: "container",
			Attributes: struct {
				Name string  `json:"name"`
				At   Time    `json:"at"`
				Nil  *string `json:"nil"`
			}{odd, Time(time.Date(2026, 1, 2, 3, 4, 5, 600, time.FixedZone("x", 3600))), nil},
			Relationships: Relationships{
				ToOne("shipment", "shipment", &id),
				ToOne("pod_terminal", "terminal", nil),
				ToMany("docs", []Identifier{{Type: odd, ID: "1"}, {Type: "document", ID: "2"}}),
				ToMany("raw_events", nil),
			},
			Links: &Links{Self: "https://x.test/v2/c?a=1&b=2"},
		}
	}
	for _, doc := range []*Document{
		{Data: []*Resource{res("1"), res(odd)}, Included: []*Resource{}, Links: &Links{Self: "s", Next: "n&x"}, Meta: &Meta{Size: 30, Total: 1}},
		{Data: res("1"), Included: []*Resource{res("2")}},
		{Data: (*Resource)(nil)},
		{Data: []*Resource{}},
		{Data: []*Resource{{ID: "x", Type: "port"}}},
	} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(reference(doc)); err != nil {
			t.Fatal(err)
		}
		got, err := doc.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(tokens(t, got), tokens(t, want.Bytes())) {
			t.Errorf("encode:\n got %s\nwant %s", got, want.Bytes())
		}
	}
}

// tokens is the token stream of a JSON text: equal streams are the same
// values with members in the same order, whatever the escaping.
func tokens(t *testing.T, b []byte) []any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	var out []any
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("invalid JSON: %v\n%s", err, b)
		}
		out = append(out, tok)
	}
}

// The reference rendering: the document types as plain structs for
// encoding/json, relationships marshalled member by member with
// json.Marshal (independent of the code under test).

type refResource struct {
	ID            string  `json:"id"`
	Type          string  `json:"type"`
	Attributes    any     `json:"attributes,omitempty"`
	Relationships refRels `json:"relationships,omitzero"`
	Links         *Links  `json:"links,omitempty"`
}

type refRels []Relationship

func (rs refRels) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(r.Name)
		b.Write(name)
		b.WriteString(`:{"data":`)
		var data any
		if r.One.ID != "" {
			data = r.One
		}
		if r.Many {
			data = r.List
		}
		v, err := json.Marshal(data)
		if err != nil {
			return nil, err
		}
		b.Write(v)
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type refDocument struct {
	Data     any           `json:"data"`
	Included []refResource `json:"included,omitzero"`
	Links    *Links        `json:"links,omitempty"`
	Meta     *Meta         `json:"meta,omitempty"`
}

func reference(d *Document) refDocument {
	conv := func(r *Resource) refResource {
		return refResource{r.ID, r.Type, r.Attributes, refRels(r.Relationships), r.Links}
	}
	out := refDocument{Links: d.Links, Meta: d.Meta}
	switch data := d.Data.(type) {
	case []*Resource:
		list := []refResource{}
		for _, r := range data {
			list = append(list, conv(r))
		}
		out.Data = list
	case *Resource:
		if data != nil {
			out.Data = conv(data)
		}
	}
	if d.Included != nil {
		out.Included = []refResource{}
		for _, r := range d.Included {
			out.Included = append(out.Included, conv(r))
		}
	}
	return out
}
