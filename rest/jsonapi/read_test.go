package jsonapi

import (
	"encoding/json"
	"testing"

	"shipgraph/model"
)

func attributesOf(t *testing.T, body string) Attributes {
	t.Helper()
	var a Attributes
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// A field table reads in its order and answers its first error, at the
// attribute's pointer; a patch's readers tell absent from null.
func TestReadersInOrder(t *testing.T) {
	var (
		name, kind  string
		note        *string
		cleared     model.Optional[*string]
		untouched   model.Optional[*string]
		pos         model.Optional[*int]
		value       model.Optional[model.JSON]
		flag        *bool
		list        []string
		enum        model.CustomFieldDataType
		readerTable = func(a Attributes) error {
			return a.Read(Str("name", true, &name), Enum("kind", model.DataTypes.Values(), &enum), StrP("note", &note),
				NullableGiven("cleared", &cleared), NullableGiven("untouched", &untouched), IntGiven("pos", &pos),
				JSONGiven("value", &value), BoolP("flag", &flag), Strings("list", &list))
		}
	)
	err := readerTable(attributesOf(t, `{"name": "n", "kind": "NUMBER", "note": "x", "cleared": null, "pos": null, "value": null, "flag": true, "list": ["a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if name != "n" || enum != "number" || *note != "x" || !cleared.IsSet() || cleared.Value() != nil || untouched.IsSet() ||
		!pos.IsSet() || pos.Value() != nil || !value.IsSet() || string(value.Value()) != "null" || !*flag || len(list) != 1 {
		t.Fatalf("read %q %q %v %v %v %v %v %v %v", name, enum, note, cleared, untouched, pos, value, flag, list)
	}
	// Two bad attributes: the table's first is the answer.
	err = readerTable(attributesOf(t, `{"name": "n", "kind": "colour", "pos": 1.5}`))
	if e, ok := model.AsError(err); !ok || e.Field != "kind" {
		t.Fatalf("first error %v, want kind's", err)
	}
	err = readerTable(attributesOf(t, `{"kind": "number"}`))
	if e, ok := model.AsError(err); !ok || e.Field != "name" || e.Message != "name is required" {
		t.Fatalf("missing name: %v", err)
	}
	kind = "kept"
	if err := (Attributes{}).Read(Str("kind", false, &kind)); err != nil || kind != "kept" {
		t.Fatalf("absent optional string: %q %v", kind, err)
	}
}

// A relationship's linkage: an identifier, null, or a list; anything else
// is refused.
func TestLinkageData(t *testing.T) {
	for raw, want := range map[string]string{
		`{"data": {"type": "party", "id": "1"}}`: "party/1",
		`{"data": null}`:                         "null",
		`{}`:                                     "null",
		`{"data": "x"}`:                          "refused",
		`{"data": [{"type": "party"}]}`:          "refused",
		`5`:                                      "refused",
	} {
		got := "refused"
		if id, ok := ToOneData(json.RawMessage(raw)); ok && id == nil {
			got = "null"
		} else if ok {
			got = id.Type + "/" + id.ID
		}
		if got != want {
			t.Errorf("ToOneData(%s) = %s, want %s", raw, got, want)
		}
	}
	for raw, want := range map[string]int{
		`{"data": [{"type": "shipment", "id": "1"}, {"type": "shipment", "id": "2"}]}`: 2,
		`{"data": []}`:   0,
		`{"data": null}`: -1,
		`{}`:             -1,
		`{"data": {}}`:   -1,
	} {
		got := -1
		if ids, ok := ToManyData(json.RawMessage(raw)); ok {
			got = len(ids)
		}
		if got != want {
			t.Errorf("ToManyData(%s) = %d, want %d", raw, got, want)
		}
	}
}
