package db_test

import (
	"context"
	"testing"

	"shipgraph/model"
)

func TestNodeType(t *testing.T) {
	f := newFixture(t)
	a, b := f.A, f.B
	for want, c := range map[string]struct{ mine, other string }{
		"account":                 {a.Account, b.Account},
		"user":                    {a.Member, b.Member},
		"shipment":                {a.Shipments[0], b.Shipments[0]},
		"container":               {a.Containers[0], b.Containers[0]},
		"document":                {a.Documents[0], b.Documents[0]},
		"email_submission":        {a.Email, b.Email},
		"document_representation": {a.Representation, b.Representation},
		"custom_field_definition": {a.DefPriority, b.DefPriority},
		"custom_field_option":     {a.OptHigh, b.OptHigh},
		"custom_field":            {a.ValFlags, b.ValFlags},
		"port":                    {f.PortLA, ""},
		"metro_area":              {f.Metro, ""},
		"terminal":                {f.TermOK, ""},
		"rail_terminal":           {f.Rail, ""},
		"shipping_line":           {f.LineMS, ""},
	} {
		t.Run(want, func(t *testing.T) {
			ctx, n := counting()
			got, err := f.DB.NodeType(ctx, a.Account, c.mine)
			if err != nil || got != want {
				t.Fatalf("NodeType = %q, %v", got, err)
			}
			if n.Load() != 1 {
				t.Fatalf("%d statements", n.Load())
			}
			if c.other != "" {
				_, err := f.DB.NodeType(context.Background(), a.Account, c.other)
				wantCode(t, err, model.ENOTFOUND)
			} else if got, err := f.DB.NodeType(context.Background(), b.Account, c.mine); err != nil || got != want {
				t.Fatalf("shared reference data for account B: %q, %v", got, err)
			}
		})
	}
	_, err := f.DB.NodeType(context.Background(), a.Account, "00000000-0000-0000-0000-000000000000")
	wantCode(t, err, model.ENOTFOUND)
	ctx, n := counting()
	_, err = f.DB.NodeType(ctx, a.Account, "nope")
	wantCode(t, err, model.ENOTFOUND)
	if n.Load() != 0 {
		t.Fatalf("malformed id sent %d statements", n.Load())
	}
}
