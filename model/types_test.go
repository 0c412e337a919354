package model_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"shipgraph/model"
)

// holdsAndFeesTexts are jsonb texts of the holds and fees columns: the
// ones PostgreSQL writes, which are read without encoding/json, and the
// ones left to it (escapes, non-ASCII, other keys, kinds and shapes).
var holdsAndFeesTexts = []string{
	`[]`, `[ ]`, `[{"name":"customs","status":"hold","description":null}]`,
	`[{"type":"demurrage","amount":1.5,"currency_code":"USD"}]`,
	`[{"name": "freight", "status": "hold", "description": "Freight charges not paid to the carrier"}]`,
	`[{"name": "USDA", "status": "hold", "description": "x"}, {"name": "freight", "status": "pending", "description": null}]`,
	`[{"type": "extended_dwell_time", "amount": 254.19, "currency_code": "USD"}, {"type": "other", "amount": -1e+3, "currency_code": "EUR"}]`,
	`[{}]`, `[{}, {}]`, `null`, `[null]`, `{}`, `[{"name":"a\"b","status":"hold"}]`, `[{"name":"caf\u00e9"}]`,
	`[{"name":"café"}]`, `[{"Name":"x"}]`, `[{"other":1}]`, `[{"name":null}]`, `[{"name":1}]`,
	`[{"amount":"1"}]`, `[{"amount":01}]`, `[{"amount":.5}]`, `[{"amount":1.}]`, `[{"amount":inf}]`,
	`[{"amount":0x10}]`, `[{"amount":1_0}]`, `[{"amount":true}]`, `[{"amount":1e400}]`,
	`[{"description":"a","description":null}]`, `[{"name":"x"},]`, `[{"name":"x"}`, `[{"name":"x",}]`,
	`[{"name":"x"}] x`, ` [ { "name" : "x" } ] `, `[{"name":{"a":1}}]`, `[{"name":["a"]}]`, `["a"]`, `[1]`,
	"[{\"name\":\"a\tb\"}]", `[{"name":"x"}{"name":"y"}]`, `[{"name" "x"}]`, ``, `[`,
}

// Holds and fees scan as json.Unmarshal reads them, the empty list (read
// without parsing) included: empty, not nil.
func TestHoldsAndFeesScanLikeUnmarshal(t *testing.T) {
	for _, src := range holdsAndFeesTexts {
		holdsAndFeesLikeUnmarshal(t, src)
	}
}

// FuzzHoldsAndFeesScanLikeUnmarshal runs the comparison on any text
// (go test -fuzz FuzzHoldsAndFeesScanLikeUnmarshal ./model).
func FuzzHoldsAndFeesScanLikeUnmarshal(f *testing.F) {
	for _, src := range holdsAndFeesTexts {
		f.Add(src)
	}
	f.Fuzz(holdsAndFeesLikeUnmarshal)
}

func holdsAndFeesLikeUnmarshal(t *testing.T, src string) {
	for _, in := range []any{[]byte(src), src} {
		var h, wantH model.TerminalHolds
		var f, wantF model.TerminalFees
		errH, errF := h.Scan(in), f.Scan(in)
		wantErrH, wantErrF := json.Unmarshal([]byte(src), &wantH), json.Unmarshal([]byte(src), &wantF)
		if (errH != nil) != (wantErrH != nil) || (errF != nil) != (wantErrF != nil) {
			t.Fatalf("%s: errors %v %v, json.Unmarshal %v %v", src, errH, errF, wantErrH, wantErrF)
		}
		if errH == nil && (!reflect.DeepEqual(h, wantH) || (h == nil) != (wantH == nil)) {
			t.Errorf("%s: holds %#v, json.Unmarshal %#v", src, h, wantH)
		}
		if errF == nil && (!reflect.DeepEqual(f, wantF) || (f == nil) != (wantF == nil)) {
			t.Errorf("%s: fees %#v, json.Unmarshal %#v", src, f, wantF)
		}
	}
	// The values do not share the driver's buffer.
	b := []byte(src)
	var h model.TerminalHolds
	if h.Scan(b) == nil {
		want := fmt.Sprintf("%#v", h)
		for i := range b {
			b[i] = 'x'
		}
		if got := fmt.Sprintf("%#v", h); got != want {
			t.Errorf("%s: holds changed with the buffer: %s", src, got)
		}
	}
}
