package graph_test

import (
	"regexp"
	"strings"
	"testing"

	"shipgraph/model"
	"shipgraph/testkit"
)

// The webhook admin API over GraphQL: the same rules as /v2 (resolve):
// admins only, the secret shown at creation and rotation only, the URL and
// event checks, another account's webhook unknown.

const webhookFields = `id url active events secret headers { name value }`

var hexSecret = regexp.MustCompile(`^[0-9a-f]{64}$`)

type gqlWebhook struct {
	ID, URL string
	Active  bool
	Events  []string
	Secret  *string
	Headers []struct{ Name, Value string }
}

func TestWebhookMutations(t *testing.T) {
	e := newWriteEnv(t)
	admin := e.Key(t, "acme/admin")
	var created struct{ CreateWebhook gqlWebhook }
	e.Must(t, admin, `mutation($in: WebhookInput!) { createWebhook(input: $in) { `+webhookFields+` } }`, testkit.Vars{
		"in": map[string]any{"url": "https://93.184.216.34/in", "events": []string{"container.updated"}, "headers": []map[string]string{{"name": "x-a", "value": "b"}}},
	}, &created)
	w := created.CreateWebhook
	if w.Secret == nil || !hexSecret.MatchString(*w.Secret) || !w.Active || len(w.Headers) != 1 || w.Headers[0].Name != "X-A" {
		t.Fatalf("created %+v", w)
	}

	var list struct {
		Webhooks struct {
			TotalCount int
			Nodes      []gqlWebhook
		}
	}
	e.Must(t, admin, `{ webhooks(first: 10) { totalCount nodes { `+webhookFields+` } } }`, nil, &list)
	if list.Webhooks.TotalCount != 1 || len(list.Webhooks.Nodes) != 1 || list.Webhooks.Nodes[0].Secret != nil {
		t.Errorf("list %+v (the secret is never listed)", list)
	}

	var updated struct{ UpdateWebhook gqlWebhook }
	e.Must(t, admin, `mutation($id: ID!) { updateWebhook(id: $id, input: {active: false, events: ["shipment.estimated.arrival", "container.created"]}) { `+webhookFields+` } }`,
		testkit.Vars{"id": w.ID}, &updated)
	if u := updated.UpdateWebhook; u.Active || len(u.Events) != 2 || u.Secret != nil || u.URL != w.URL {
		t.Errorf("updated %+v", u)
	}

	var rotated struct{ RotateWebhookSecret gqlWebhook }
	e.Must(t, admin, `mutation($id: ID!) { rotateWebhookSecret(id: $id) { id secret } }`, testkit.Vars{"id": w.ID}, &rotated)
	if s := rotated.RotateWebhookSecret.Secret; s == nil || !hexSecret.MatchString(*s) || *s == *w.Secret {
		t.Errorf("rotated secret %v", s)
	}

	// Refused input: INVALID naming the field.
	for name, in := range map[string]map[string]any{
		"url":    {"url": "https://127.0.0.1/", "events": []string{"container.updated"}},
		"events": {"url": "https://93.184.216.34/in", "events": []string{"document.split"}},
	} {
		res := e.Do(t, admin, `mutation($in: WebhookInput!) { createWebhook(input: $in) { id } }`, testkit.Vars{"in": in})
		if !testkit.CodesEqual(res.Codes(), "BAD_USER_INPUT") || res.Errors[0].Extensions["field"] != name {
			t.Errorf("%s: %s", name, res)
		}
	}

	// Another account's webhook is unknown.
	other := e.Key(t, "globex/admin")
	var one struct{ Webhook *gqlWebhook }
	e.Must(t, other, `query($id: ID!) { webhook(id: $id) { id } }`, testkit.Vars{"id": w.ID}, &one)
	if one.Webhook != nil {
		t.Errorf("globex reads acme's webhook")
	}
	for _, m := range []string{`updateWebhook(id: $id, input: {active: true}) { id }`, `rotateWebhookSecret(id: $id) { id }`, `deleteWebhook(id: $id) { id }`} {
		res := e.Do(t, other, `mutation($id: ID!) { `+m+` }`, testkit.Vars{"id": w.ID})
		if !testkit.CodesEqual(res.Codes(), "NOT_FOUND") {
			t.Errorf("globex %s: %s", m, res)
		}
	}

	// Members and viewers: FORBIDDEN, reads included.
	for _, who := range []string{"acme/member", "acme/viewer"} {
		key := e.Key(t, who)
		for _, op := range []string{
			`{ webhooks { totalCount } }`,
			`{ webhookNotifications { totalCount } }`,
			`mutation { createWebhook(input: {url: "https://93.184.216.34/x", events: ["container.updated"]}) { id } }`,
			`mutation { deleteWebhook(id: "` + w.ID + `") { id } }`,
		} {
			if res := e.Do(t, key, op, nil); !testkit.CodesEqual(res.Codes(), "FORBIDDEN") {
				t.Errorf("%s %s: %s", who, op, res)
			}
		}
		var ev struct{ WebhookEvents []struct{ ID string } }
		e.Must(t, key, `{ webhookEvents { id name events { name description } } }`, nil, &ev)
		if len(ev.WebhookEvents) == 0 {
			t.Errorf("%s: no webhook events", who)
		}
	}

	var deleted struct{ DeleteWebhook struct{ ID string } }
	e.Must(t, admin, `mutation($id: ID!) { deleteWebhook(id: $id) { id } }`, testkit.Vars{"id": w.ID}, &deleted)
	e.Must(t, admin, `query($id: ID!) { webhook(id: $id) { id } }`, testkit.Vars{"id": w.ID}, &one)
	if deleted.DeleteWebhook.ID != w.ID || one.Webhook != nil {
		t.Errorf("deleted %v, then read %v", deleted, one.Webhook)
	}
}

// TestWebhookNotificationsQuery reads notifications with their webhook and
// reference object (a union) through the load plan: a fixed number of
// statements whatever the page size.
func TestWebhookNotificationsQuery(t *testing.T) {
	e, f := newWriteFixture(t)
	admin := e.Key(t, "acme/admin")
	var hook, container string
	e.SQL(t, &container, `SELECT id FROM containers WHERE account_id = $1 ORDER BY id LIMIT 1`, f.acme)
	e.SQL(t, &hook, `INSERT INTO webhooks (account_id, url, events, secret) VALUES ($1, 'https://93.184.216.34/h', '{container.updated}', 's') RETURNING id`, f.acme)
	var id string
	for i, ev := range []string{"container.updated", "container.transport.available", "shipment.estimated.arrival", "tracking_request.tracking_stopped",
		"container.updated", "container.transport.available", "shipment.estimated.arrival", "tracking_request.tracking_stopped"} {
		typ, ref := "container", container
		if strings.HasPrefix(ev, "shipment.") || strings.HasPrefix(ev, "tracking_request.") {
			typ, ref = "shipment", f.ship
		}
		e.SQL(t, &id, `INSERT INTO webhook_notifications (account_id, webhook_id, event, change_id, reference_type, reference_id, payload)
			VALUES ($1, $2, $3, $4, $5, $6, '{"changeset": {"pickup_lfd": [null, "2026-03-05"]}}') RETURNING id`, f.acme, hook, ev, i, typ, ref)
	}
	const q = `query($n: Int) { webhookNotifications(first: $n, filter: {deliveryStatus: PENDING}) { totalCount nodes {
		id event deliveryStatus attempts webhook { id url }
		referenceObject {
			__typename
			... on ContainerUpdatedEvent { id attributes container { id number shipment { id } } terminal { id } }
			... on TransportEvent { id event container { id } shipment { id } location { __typename } terminal { __typename } }
			... on EstimatedEvent { id shipment { id billOfLadingNumber } port { id } }
			... on TrackingRequest { id requestNumber requestType status shipment: trackedObject { id lineTrackingStoppedAt } }
		}
	} } }`
	var got struct {
		WebhookNotifications struct {
			TotalCount int
			Nodes      []struct {
				ID, Event, DeliveryStatus string
				Webhook                   struct{ ID string }
				ReferenceObject           struct {
					Typename      string `json:"__typename"`
					ID            string
					Container     *struct{ ID string }
					Shipment      *struct{ ID string }
					RequestNumber string
					RequestType   string
					Status        string
				}
			}
		}
	}
	res := e.Must(t, admin, q, testkit.Vars{"n": 10}, &got)
	nodes := got.WebhookNotifications.Nodes
	if got.WebhookNotifications.TotalCount != 8 || len(nodes) != 8 {
		t.Fatalf("%s", res)
	}
	types := map[string]string{}
	for _, n := range nodes {
		types[n.Event] = n.ReferenceObject.Typename
		if n.Webhook.ID != hook || n.DeliveryStatus != "PENDING" || n.ReferenceObject.ID == "" || n.ReferenceObject.ID == n.ID {
			t.Errorf("node %+v", n)
		}
		onShipment := strings.HasPrefix(n.Event, "shipment.") || strings.HasPrefix(n.Event, "tracking_request.")
		if !onShipment && (n.ReferenceObject.Container == nil || n.ReferenceObject.Container.ID != container) {
			t.Errorf("%s: container %+v", n.Event, n.ReferenceObject.Container)
		}
		if onShipment && (n.ReferenceObject.Shipment == nil || n.ReferenceObject.Shipment.ID != f.ship) {
			t.Errorf("%s: shipment %+v", n.Event, n.ReferenceObject.Shipment)
		}
		// The tracking request is the shipment's, whichever notification
		// names it; the shipment is tracked, so it is CREATED.
		if r := n.ReferenceObject; n.Event == "tracking_request.tracking_stopped" &&
			(r.ID != model.TrackingRequestID(f.ship) || r.RequestNumber == "" || r.RequestType != "bill_of_lading" || r.Status != "CREATED") {
			t.Errorf("tracking request %+v", r)
		}
	}
	if types["container.updated"] != "ContainerUpdatedEvent" || types["container.transport.available"] != "TransportEvent" ||
		types["shipment.estimated.arrival"] != "EstimatedEvent" || types["tracking_request.tracking_stopped"] != "TrackingRequest" {
		t.Errorf("reference object types %v", types)
	}
	// One statement per relationship, target type and level: a page of
	// the four types costs the same at any size.
	four := e.Must(t, admin, q, testkit.Vars{"n": 4}, nil)
	if res.AfterAuth != four.AfterAuth {
		t.Errorf("statements: %d for 8 notifications, %d for 4", res.AfterAuth, four.AfterAuth)
	}
	// Another account sees none of them.
	var other struct{ WebhookNotifications struct{ TotalCount int } }
	e.Must(t, e.Key(t, "globex/admin"), `{ webhookNotifications { totalCount } }`, nil, &other)
	if other.WebhookNotifications.TotalCount != 0 {
		t.Errorf("globex counts %d", other.WebhookNotifications.TotalCount)
	}
}
