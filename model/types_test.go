package model_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"shipgraph/model"
)

// Holds and fees scan as json.Unmarshal reads them, the empty list (read
// without parsing) included: empty, not nil.
func TestHoldsAndFeesScanLikeUnmarshal(t *testing.T) {
	for _, src := range []string{`[]`, `[{"name":"customs","status":"hold","description":null}]`,
		`[{"type":"demurrage","amount":1.5,"currency_code":"USD"}]`, `[ ]`} {
		for _, in := range []any{[]byte(src), src} {
			var h, wantH model.TerminalHolds
			var f, wantF model.TerminalFees
			errH, errF := h.Scan(in), f.Scan(in)
			wantErrH, wantErrF := json.Unmarshal([]byte(src), &wantH), json.Unmarshal([]byte(src), &wantF)
			if (errH != nil) != (wantErrH != nil) || (errF != nil) != (wantErrF != nil) {
				t.Fatalf("%s: errors %v %v, json.Unmarshal %v %v", src, errH, errF, wantErrH, wantErrF)
			}
			if !reflect.DeepEqual(h, wantH) || (h == nil) != (wantH == nil) {
				t.Errorf("%s: holds %#v, json.Unmarshal %#v", src, h, wantH)
			}
			if !reflect.DeepEqual(f, wantF) || (f == nil) != (wantF == nil) {
				t.Errorf("%s: fees %#v, json.Unmarshal %#v", src, f, wantF)
			}
		}
	}
}
