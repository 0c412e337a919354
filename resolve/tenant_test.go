package resolve_test

import (
	"context"
	"slices"
	"testing"

	"shipgraph/catalog"
	"shipgraph/load"
	"shipgraph/model"
	"shipgraph/resolve"
)

// Every read of account data is scoped to the request's account: another
// account's id is the same NOT FOUND as an unknown or malformed one, never
// the record, and a list never holds another account's rows. Reference
// data is every account's.
func testTenantIsolation(t *testing.T, e *env, acme, globex *records) {
	if acme.emailSubmission == "" {
		t.Fatal("seed: acme has no email submission")
	}
	// A get by id, and the id of what it read.
	type get func(r *resolve.Resolver, ctx context.Context, id string) (string, error)
	gets := []struct {
		name string
		id   func(*records) string
		get  get
	}{
		{"Shipment", func(r *records) string { return r.shipment }, func(r *resolve.Resolver, ctx context.Context, id string) (string, error) {
			v, err := r.Shipment(ctx, who(ctx), id, load.NewPlan(catalog.Shipment, "containers"))
			return idOf(v, err)
		}},
		{"Container", func(r *records) string { return r.container }, func(r *resolve.Resolver, ctx context.Context, id string) (string, error) {
			v, err := r.Container(ctx, who(ctx), id, nil)
			return idOf(v, err)
		}},
		{"Document", func(r *records) string { return r.document }, func(r *resolve.Resolver, ctx context.Context, id string) (string, error) {
			v, err := r.Document(ctx, who(ctx), id, nil)
			return idOf(v, err)
		}},
		{"Definition", func(r *records) string { return r.definition }, func(r *resolve.Resolver, ctx context.Context, id string) (string, error) {
			v, err := r.Definition(ctx, who(ctx), id, nil)
			return idOf(v, err)
		}},
		{"EmailSubmission", func(r *records) string { return r.emailSubmission }, func(r *resolve.Resolver, ctx context.Context, id string) (string, error) {
			v, err := r.EmailSubmission(ctx, who(ctx), id, nil)
			return idOf(v, err)
		}},
		{"CustomField", func(r *records) string { return r.value }, func(r *resolve.Resolver, ctx context.Context, id string) (string, error) {
			v, err := r.CustomField(ctx, who(ctx), id, nil)
			return idOf(v, err)
		}},
		{"Webhook", func(r *records) string { return r.webhook }, func(r *resolve.Resolver, ctx context.Context, id string) (string, error) {
			v, err := r.Webhook(ctx, who(ctx), id, nil)
			if err != nil {
				return "", err
			}
			return v.ID, nil
		}},
		{"Node(shipment)", func(r *records) string { return r.shipment }, nodeGet},
		{"Node(container)", func(r *records) string { return r.container }, nodeGet},
		{"Node(document)", func(r *records) string { return r.document }, nodeGet},
		{"Node(definition)", func(r *records) string { return r.definition }, nodeGet},
		{"Node(option)", func(r *records) string { return r.option }, nodeGet},
		{"Node(custom field)", func(r *records) string { return r.value }, nodeGet},
		{"CustomFieldsOf", func(r *records) string { return r.valueEntity }, func(r *resolve.Resolver, ctx context.Context, id string) (string, error) {
			vs, err := r.CustomFieldsOf(ctx, who(ctx), "Shipment", id)
			if err != nil || len(vs) == 0 {
				return "", err
			}
			return vs[0].EntityID, nil
		}},
		{"Options", func(r *records) string { return r.enumDefinition }, func(r *resolve.Resolver, ctx context.Context, id string) (string, error) {
			os, err := r.Options(ctx, who(ctx), id)
			if err != nil || len(os) == 0 {
				return "", err
			}
			return os[0].DefinitionID, nil
		}},
	}
	for _, g := range gets {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range []struct {
				owner, other string
				rec          *records
			}{{"acme", "globex", acme}, {"globex", "acme", globex}} {
				id := g.id(c.rec)
				if id == "" {
					continue // the account has none (globex: email submissions)
				}
				reader := "/viewer" // reads are every key's
				if g.name == "Webhook" {
					reader = "/admin" // but webhooks are admins' (TestRoles)
				}
				got, err := g.get(e.r, e.as(c.owner+reader), id)
				if err != nil || got != id {
					t.Errorf("%s reads its own %s: %q, %v", c.owner, id, got, err)
				}
				got, err = g.get(e.r, e.as(c.other+"/admin"), id)
				if got != "" {
					t.Errorf("%s read %s's %s: got %q", c.other, c.owner, id, got)
				}
				wantErr(t, c.other+" reads "+c.owner+"'s", err, model.ENOTFOUND, "", "")
			}
			for _, id := range []string{unknownID, "not-an-id", ""} {
				got, err := g.get(e.r, e.as("acme/admin"), id)
				if got != "" {
					t.Errorf("%q read: got %q", id, got)
				}
				wantErr(t, "unknown id "+id, err, model.ENOTFOUND, "", "")
			}
		})
	}

	// The batch reads of federation: another account's key is a null
	// entity, aligned with the keys, never the record.
	t.Run("ShipmentsByID", func(t *testing.T) {
		got := must[[]*model.Shipment](t, "entities")(e.r.ShipmentsByID(e.as("acme/viewer"), e.who["acme/viewer"], []string{acme.shipment, globex.shipment, "nope"}, nil))
		if len(got) != 3 || got[0] == nil || got[0].ID != acme.shipment || got[1] != nil || got[2] != nil {
			t.Errorf("entities %v", got)
		}
	})

	// Lists: filtered to the other account's ids they are empty, and
	// whole they hold none of its rows.
	t.Run("lists", func(t *testing.T) {
		ctx := e.as("acme/admin")
		all := resolve.PageArgs{First: ptr(model.MaxPageSize)}
		lists := []struct {
			name string
			list func() ([]string, error)
			own  []string
			its  []string
		}{
			{"Shipments", func() ([]string, error) {
				p, err := e.r.Shipments(ctx, who(ctx), resolve.ShipmentQuery{Page: all, Filter: model.ShipmentFilter{IDs: append([]string{acme.shipment}, globex.shipmentIDs...)}})
				return pageIDs(p, err)
			}, []string{acme.shipment}, globex.shipmentIDs},
			{"Containers", func() ([]string, error) {
				p, err := e.r.Containers(ctx, who(ctx), resolve.ContainerQuery{Page: all, Filter: model.ContainerFilter{ShipmentIDs: globex.shipmentIDs}})
				return pageIDs(p, err)
			}, nil, globex.containerIDs},
			{"Documents", func() ([]string, error) {
				p, err := e.r.Documents(ctx, who(ctx), resolve.DocumentQuery{Page: all, Filter: model.DocumentFilter{IDs: globex.documentIDs}})
				return pageIDs(p, err)
			}, nil, globex.documentIDs},
			{"Definitions", func() ([]string, error) {
				p, err := e.r.Definitions(ctx, who(ctx), resolve.DefinitionQuery{Page: all})
				return pageIDs(p, err)
			}, acme.definitionIDs, globex.definitionIDs},
			{"CustomFields", func() ([]string, error) {
				p, err := e.r.CustomFields(ctx, who(ctx), resolve.CustomFieldQuery{Page: all, Filter: model.CustomFieldFilter{EntityID: &globex.valueEntity}})
				return pageIDs(p, err)
			}, nil, globex.valueIDs},
			{"EmailSubmissions(globex)", func() ([]string, error) {
				p, err := e.r.EmailSubmissions(e.as("globex/admin"), e.who["globex/admin"], resolve.EmailSubmissionQuery{Page: all})
				return pageIDs(p, err)
			}, globex.submissionIDs, acme.submissionIDs},
			{"Webhooks", func() ([]string, error) {
				p, err := e.r.Webhooks(ctx, who(ctx), resolve.WebhookQuery{Page: all})
				if err != nil {
					return nil, err
				}
				var ids []string
				for _, w := range p.Items {
					ids = append(ids, w.ID)
				}
				return ids, nil
			}, []string{acme.webhook}, []string{globex.webhook}},
		}
		for _, l := range lists {
			got, err := l.list()
			if err != nil {
				t.Errorf("%s: %v", l.name, err)
				continue
			}
			if len(got) != len(l.own) {
				t.Errorf("%s: %d rows, want %d (%v)", l.name, len(got), len(l.own), got)
			}
			for _, id := range got {
				if slices.Contains(l.its, id) {
					t.Errorf("%s: the other account's %s listed", l.name, id)
				}
			}
		}
		for _, c := range []struct {
			name string
			n    func() (int, error)
		}{
			{"CountShipments", func() (int, error) {
				return e.r.CountShipments(ctx, who(ctx), model.ShipmentFilter{IDs: globex.shipmentIDs})
			}},
			{"CountContainers", func() (int, error) {
				return e.r.CountContainers(ctx, who(ctx), model.ContainerFilter{IDs: globex.containerIDs})
			}},
			{"CountDocuments", func() (int, error) {
				return e.r.CountDocuments(ctx, who(ctx), model.DocumentFilter{IDs: globex.documentIDs})
			}},
			{"CountCustomFields", func() (int, error) {
				return e.r.CountCustomFields(ctx, who(ctx), model.CustomFieldFilter{EntityID: &globex.valueEntity})
			}},
		} {
			if n, err := c.n(); n != 0 || err != nil {
				t.Errorf("%s of the other account's ids: %d, %v", c.name, n, err)
			}
		}
	})

	// Reference data is shared: both accounts read the same terminal.
	t.Run("reference data", func(t *testing.T) {
		lines := must[*resolve.Page[*model.ShippingLine]](t, "shipping lines")(e.r.ShippingLines(e.as("acme/viewer"), e.who["acme/viewer"], resolve.ShippingLineQuery{}))
		if len(lines.Items) == 0 {
			t.Fatal("no shipping lines")
		}
		for _, who := range []string{"acme/viewer", "globex/viewer"} {
			l, err := e.r.ShippingLine(e.as(who), e.who[who], lines.Items[0].ID)
			if err != nil || l.ID != lines.Items[0].ID {
				t.Errorf("%s reads shipping line %s: %v, %v", who, lines.Items[0].ID, l, err)
			}
		}
	})
}

func nodeGet(r *resolve.Resolver, ctx context.Context, id string) (string, error) {
	n, err := r.Node(ctx, who(ctx), id, nil)
	if err != nil || n == nil {
		return "", err
	}
	return n.GetID(), nil
}

// idOf is the id of what a get read ("" for nothing).
func idOf[T interface{ GetID() string }](v T, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return v.GetID(), nil
}

// pageIDs are the ids of a page's rows.
func pageIDs[T interface{ GetID() string }](p *resolve.Page[T], err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(p.Items))
	for i, it := range p.Items {
		ids[i] = it.GetID()
	}
	return ids, nil
}
