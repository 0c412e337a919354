package resolve_test

import (
	"context"
	"testing"

	"shipgraph/model"
	"shipgraph/resolve"
)

// Roles: viewers only read; admins and members write; webhooks (reads
// included: URLs and headers may carry the receiver's credentials) are
// admins' alone. A refusal is FORBIDDEN — what /v2 answers 403 and GraphQL
// names in extensions.code — before anything else is looked at, and
// changes nothing. Without a principal everything is UNAUTHENTICATED.
func testRoles(t *testing.T, e *env, acme *records) {
	r := e.r
	tags := model.Given([]string{"role-test"})
	shipmentKind := model.CustomFieldEntityType("Shipment")
	label := "Relabelled"
	type op = func(ctx context.Context) error
	writes := map[string]op{
		"UpdateShipment": func(ctx context.Context) error {
			_, err := r.UpdateShipment(ctx, who(ctx), resolve.UpdateShipment{ID: acme.shipment, Tags: tags})
			return err
		},
		"StopTracking":   func(ctx context.Context) error { _, err := r.StopTracking(ctx, who(ctx), acme.shipment); return err },
		"ResumeTracking": func(ctx context.Context) error { _, err := r.ResumeTracking(ctx, who(ctx), acme.shipment); return err },
		"UpdateDocument": func(ctx context.Context) error {
			_, err := r.UpdateDocument(ctx, who(ctx), resolve.UpdateDocument{ID: acme.document, DocumentTypeManual: model.Given[*string](nil)})
			return err
		},
		"DeleteDocument": func(ctx context.Context) error { _, err := r.DeleteDocument(ctx, who(ctx), acme.document); return err },
		"CreateDefinition": func(ctx context.Context) error {
			_, err := r.CreateDefinition(ctx, who(ctx), resolve.CreateDefinition{Input: model.CustomFieldDefinitionInput{EntityType: "Shipment", APISlug: "role_test", DisplayName: "Role test", DataType: "short_text"}})
			return err
		},
		"UpdateDefinition": func(ctx context.Context) error {
			_, err := r.UpdateDefinition(ctx, who(ctx), resolve.UpdateDefinition{ID: acme.definition, Patch: model.CustomFieldDefinitionPatch{DisplayName: &label}})
			return err
		},
		"DeleteDefinition": func(ctx context.Context) error {
			_, err := r.DeleteDefinition(ctx, who(ctx), acme.definition)
			return err
		},
		"CreateOption": func(ctx context.Context) error {
			_, err := r.CreateOption(ctx, who(ctx), resolve.CreateOption{DefinitionID: acme.enumDefinition, Input: model.CustomFieldOptionInput{Label: "Role", Value: "role"}})
			return err
		},
		"UpdateOption": func(ctx context.Context) error {
			_, err := r.UpdateOption(ctx, who(ctx), resolve.UpdateOption{DefinitionID: acme.enumDefinition, OptionID: acme.option, Patch: model.CustomFieldOptionPatch{Label: &label}})
			return err
		},
		"DeleteOption": func(ctx context.Context) error {
			_, err := r.DeleteOption(ctx, who(ctx), acme.enumDefinition, acme.option)
			return err
		},
		"SetValue": func(ctx context.Context) error {
			_, err := r.SetValue(ctx, who(ctx), resolve.SetValue{EntityType: shipmentKind, EntityID: acme.valueEntity, APISlug: acme.valueSlug})
			return err
		},
		"CreateValue": func(ctx context.Context) error {
			_, err := r.CreateValue(ctx, who(ctx), resolve.CreateValue{EntityID: acme.valueEntity, APISlug: acme.valueSlug})
			return err
		},
		"UpdateValue": func(ctx context.Context) error {
			_, err := r.UpdateValue(ctx, who(ctx), resolve.UpdateValue{ID: acme.value})
			return err
		},
		"RemoveValue": func(ctx context.Context) error {
			_, err := r.RemoveValue(ctx, who(ctx), shipmentKind, acme.valueEntity, acme.valueSlug)
			return err
		},
		"DeleteValue": func(ctx context.Context) error { _, err := r.DeleteValue(ctx, who(ctx), acme.value); return err },
	}
	webhooks := map[string]op{
		"Webhooks": func(ctx context.Context) error {
			_, err := r.Webhooks(ctx, who(ctx), resolve.WebhookQuery{})
			return err
		},
		"CountWebhooks": func(ctx context.Context) error { _, err := r.CountWebhooks(ctx, who(ctx)); return err },
		"Webhook":       func(ctx context.Context) error { _, err := r.Webhook(ctx, who(ctx), acme.webhook, nil); return err },
		"Webhook(unknown)": func(ctx context.Context) error {
			_, err := r.Webhook(ctx, who(ctx), unknownID, nil) // 403 before 404
			return err
		},
		"WebhookNotifications": func(ctx context.Context) error {
			_, err := r.WebhookNotifications(ctx, who(ctx), resolve.WebhookNotificationQuery{})
			return err
		},
		"CountWebhookNotifications": func(ctx context.Context) error {
			_, err := r.CountWebhookNotifications(ctx, who(ctx), model.WebhookNotificationFilter{})
			return err
		},
		"WebhookNotification": func(ctx context.Context) error {
			_, err := r.WebhookNotification(ctx, who(ctx), unknownID, nil)
			return err
		},
		"CreateWebhook": func(ctx context.Context) error {
			_, err := r.CreateWebhook(ctx, who(ctx), resolve.CreateWebhook{Input: model.WebhookInput{URL: "http://127.0.0.1:9/role", Events: []string{"container.updated"}}})
			return err
		},
		"UpdateWebhook": func(ctx context.Context) error {
			off := false
			_, err := r.UpdateWebhook(ctx, who(ctx), resolve.UpdateWebhook{ID: acme.webhook, Patch: model.WebhookPatch{Active: &off}})
			return err
		},
		"RotateWebhookSecret": func(ctx context.Context) error {
			_, err := r.RotateWebhookSecret(ctx, who(ctx), acme.webhook)
			return err
		},
		"DeleteWebhook": func(ctx context.Context) error { _, err := r.DeleteWebhook(ctx, who(ctx), acme.webhook); return err },
	}
	shipment := must[*model.Shipment](t, "shipment")(r.Shipment(e.as("acme/viewer"), e.who["acme/viewer"], acme.shipment, nil))
	hooks := must[int](t, "count webhooks")(r.CountWebhooks(e.as("acme/admin"), e.who["acme/admin"]))

	for name, w := range writes {
		wantErr(t, "viewer "+name, w(e.as("acme/viewer")), model.EFORBIDDEN, "", "")
		wantErr(t, "no principal "+name, w(context.Background()), model.EUNAUTHENTICATED, "", "")
	}
	for name, w := range webhooks {
		wantErr(t, "viewer "+name, w(e.as("acme/viewer")), model.EFORBIDDEN, "", "")
		wantErr(t, "member "+name, w(e.as("acme/member")), model.EFORBIDDEN, "", "")
		wantErr(t, "no principal "+name, w(context.Background()), model.EUNAUTHENTICATED, "", "")
	}
	// The refusals changed nothing.
	after := must[*model.Shipment](t, "shipment")(r.Shipment(e.as("acme/viewer"), e.who["acme/viewer"], acme.shipment, nil))
	if !after.UpdatedAt.Equal(shipment.UpdatedAt) {
		t.Errorf("the refused writes changed the shipment: updated at %v, was %v", after.UpdatedAt, shipment.UpdatedAt)
	}
	if n := must[int](t, "count webhooks")(r.CountWebhooks(e.as("acme/admin"), e.who["acme/admin"])); n != hooks {
		t.Errorf("%d webhooks after refused creates, want %d", n, hooks)
	}
	// Reads are every key's; the list of webhook events too.
	if _, err := r.Shipments(e.as("acme/viewer"), e.who["acme/viewer"], resolve.ShipmentQuery{}); err != nil {
		t.Errorf("viewer lists shipments: %v", err)
	}
	if cats, err := r.WebhookEvents(e.as("acme/viewer"), e.who["acme/viewer"]); err != nil || len(cats) == 0 {
		t.Errorf("viewer reads the webhook events: %v, %v", cats, err)
	}
	wantErr(t, "no principal reads", func() error { _, err := r.Shipment(context.Background(), nil, acme.shipment, nil); return err }(), model.EUNAUTHENTICATED, "", "")

	// A member writes; an admin too, and alone manages webhooks.
	s, err := r.UpdateShipment(e.as("acme/member"), e.who["acme/member"], resolve.UpdateShipment{ID: acme.shipment, Tags: tags})
	if err != nil || len(s.Tags) != 1 || s.Tags[0] != "role-test" {
		t.Errorf("member updates a shipment: %+v, %v", s, err)
	}
	for _, name := range []string{"Webhooks", "CountWebhooks", "Webhook", "WebhookNotifications", "CountWebhookNotifications", "UpdateWebhook", "RotateWebhookSecret", "CreateWebhook"} {
		if err := webhooks[name](e.as("acme/admin")); err != nil {
			t.Errorf("admin %s: %v", name, err)
		}
	}
	for name, w := range writes {
		if name == "DeleteDocument" || name == "DeleteDefinition" || name == "DeleteOption" || name == "DeleteValue" ||
			name == "RemoveValue" || name == "CreateValue" || name == "SetValue" || name == "UpdateValue" {
			continue // they would take what the others write
		}
		if err := w(e.as("acme/admin")); err != nil {
			t.Errorf("admin %s: %v", name, err)
		}
	}
}
