package resolve_test

import (
	"context"
	"strings"
	"testing"

	"shipgraph/model"
	"shipgraph/resolve"
)

// decodeErr is an input error a transport found while decoding a write's
// body (the commands' Invalid): the resolver layer reports it only once
// the target was found.
var decodeErr = model.Errorf(model.EINVALID, "a transport's decoding error").AtField("decoded")

// The error order of every write: the key may write (403), the target is
// the account's (404: another account's or an unknown id, even when the
// body is invalid too), then the input (422: the transport's Invalid, then
// the rules here, naming the member neutrally in Field), then the store.
func testWriteErrorOrder(t *testing.T, e *env, acme, globex *records) {
	r := e.r
	long := strings.Repeat("x", 256)
	blank := "  "
	badType := "not_a_document_type"
	shipmentKind := model.CustomFieldEntityType("Shipment")
	type write = func(ctx context.Context, rec *records) error
	cases := []struct {
		name string
		who  string
		// write runs against rec: another account's records, or the
		// writer's own.
		write               write
		foreign, own        string // want code on another account's target, on its own
		ownField            string // want Field on its own
		ownIsTransportError bool   // own answers decodeErr itself
	}{
		{name: "UpdateShipment invalid body", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.UpdateShipment(ctx, who(ctx), resolve.UpdateShipment{ID: rec.shipment, Tags: model.Given([]string{long}), Invalid: decodeErr})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: "decoded", ownIsTransportError: true},
		{name: "UpdateShipment tag too long", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.UpdateShipment(ctx, who(ctx), resolve.UpdateShipment{ID: rec.shipment, Tags: model.Given([]string{long})})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: "tags"},
		{name: "UpdateShipment too many ref numbers", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			refs := make([]string, 101)
			for i := range refs {
				refs[i] = "REF" + strings.Repeat("9", i+1)
			}
			_, err := r.UpdateShipment(ctx, who(ctx), resolve.UpdateShipment{ID: rec.shipment, RefNumbers: model.Given(refs)})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: "ref_numbers"},
		{name: "StopTracking", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.StopTracking(ctx, who(ctx), rec.shipment)
			return err
		}, foreign: model.ENOTFOUND},
		{name: "ResumeTracking", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.ResumeTracking(ctx, who(ctx), rec.shipment)
			return err
		}, foreign: model.ENOTFOUND},
		{name: "UpdateDocument invalid body", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.UpdateDocument(ctx, who(ctx), resolve.UpdateDocument{ID: rec.document, DocumentTypeManual: model.Given(&badType), Invalid: decodeErr})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: "decoded", ownIsTransportError: true},
		{name: "UpdateDocument unknown type", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.UpdateDocument(ctx, who(ctx), resolve.UpdateDocument{ID: rec.document, DocumentTypeManual: model.Given(&badType)})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: "document_type_manual"},
		{name: "UpdateDefinition blank name", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.UpdateDefinition(ctx, who(ctx), resolve.UpdateDefinition{ID: rec.definition, Patch: model.CustomFieldDefinitionPatch{DisplayName: &blank}})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: "display_name"},
		{name: "UpdateDefinition validation not an object", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.UpdateDefinition(ctx, who(ctx), resolve.UpdateDefinition{ID: rec.definition, Patch: model.CustomFieldDefinitionPatch{Validation: model.Given(model.JSON(`[1]`))}})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: "validation"},
		{name: "CreateOption invalid body", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.CreateOption(ctx, who(ctx), resolve.CreateOption{DefinitionID: rec.enumDefinition, Input: model.CustomFieldOptionInput{Label: blank}, Invalid: decodeErr})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: "decoded", ownIsTransportError: true},
		{name: "CreateOption blank label", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.CreateOption(ctx, who(ctx), resolve.CreateOption{DefinitionID: rec.enumDefinition, Input: model.CustomFieldOptionInput{Label: blank, Value: "v"}})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: "label"},
		{name: "CreateOption on a definition without options", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.CreateOption(ctx, who(ctx), resolve.CreateOption{DefinitionID: rec.definition, Input: model.CustomFieldOptionInput{Label: "l", Value: "v"}})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: model.WholeInput},
		{name: "UpdateOption blank value", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.UpdateOption(ctx, who(ctx), resolve.UpdateOption{DefinitionID: rec.enumDefinition, OptionID: rec.option, Patch: model.CustomFieldOptionPatch{Value: &blank}})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: "value"},
		{name: "SetValue invalid body", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.SetValue(ctx, who(ctx), resolve.SetValue{EntityType: shipmentKind, EntityID: rec.valueEntity, APISlug: "no_such_field", Value: model.JSON(`{`), Invalid: decodeErr})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: "decoded", ownIsTransportError: true},
		{name: "SetValue unknown slug", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.SetValue(ctx, who(ctx), resolve.SetValue{EntityType: shipmentKind, EntityID: rec.valueEntity, APISlug: "no_such_field", Value: model.JSON(`{`)})
			return err
		}, foreign: model.ENOTFOUND, own: model.ENOTFOUND},
		{name: "CreateValue", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.CreateValue(ctx, who(ctx), resolve.CreateValue{EntityID: rec.valueEntity, APISlug: rec.valueSlug, Value: model.JSON(`{`), Invalid: decodeErr})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: "decoded", ownIsTransportError: true},
		{name: "UpdateValue invalid body", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.UpdateValue(ctx, who(ctx), resolve.UpdateValue{ID: rec.value, Value: model.JSON(`{`), Invalid: decodeErr})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: "decoded", ownIsTransportError: true},
		{name: "RemoveValue", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.RemoveValue(ctx, who(ctx), shipmentKind, rec.valueEntity, "no_such_field")
			return err
		}, foreign: model.ENOTFOUND, own: model.ENOTFOUND},
		{name: "UpdateWebhook invalid body", who: "acme/admin", write: func(ctx context.Context, rec *records) error {
			_, err := r.UpdateWebhook(ctx, who(ctx), resolve.UpdateWebhook{ID: rec.webhook, Patch: model.WebhookPatch{URL: &blank}, Invalid: decodeErr})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: "decoded", ownIsTransportError: true},
		{name: "UpdateWebhook blank url", who: "acme/admin", write: func(ctx context.Context, rec *records) error {
			_, err := r.UpdateWebhook(ctx, who(ctx), resolve.UpdateWebhook{ID: rec.webhook, Patch: model.WebhookPatch{URL: &blank}})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: "url"},
		{name: "UpdateWebhook unknown event", who: "acme/admin", write: func(ctx context.Context, rec *records) error {
			_, err := r.UpdateWebhook(ctx, who(ctx), resolve.UpdateWebhook{ID: rec.webhook, Patch: model.WebhookPatch{Events: []string{"container.exploded"}}})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: "events"},
		{name: "UpdateWebhook reserved header", who: "acme/admin", write: func(ctx context.Context, rec *records) error {
			_, err := r.UpdateWebhook(ctx, who(ctx), resolve.UpdateWebhook{ID: rec.webhook, Patch: model.WebhookPatch{Headers: []*model.WebhookHeaderInput{{Name: "content-type", Value: "x"}}}})
			return err
		}, foreign: model.ENOTFOUND, own: model.EINVALID, ownField: "headers"},
		{name: "RotateWebhookSecret", who: "acme/admin", write: func(ctx context.Context, rec *records) error {
			_, err := r.RotateWebhookSecret(ctx, who(ctx), rec.webhook)
			return err
		}, foreign: model.ENOTFOUND},
		// Deletes last: the own ones are not run (own == "").
		{name: "DeleteDocument", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.DeleteDocument(ctx, who(ctx), rec.document)
			return err
		}, foreign: model.ENOTFOUND},
		{name: "DeleteDefinition", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.DeleteDefinition(ctx, who(ctx), rec.definition)
			return err
		}, foreign: model.ENOTFOUND},
		{name: "DeleteOption", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.DeleteOption(ctx, who(ctx), rec.enumDefinition, rec.option)
			return err
		}, foreign: model.ENOTFOUND},
		{name: "DeleteValue", who: "acme/member", write: func(ctx context.Context, rec *records) error {
			_, err := r.DeleteValue(ctx, who(ctx), rec.value)
			return err
		}, foreign: model.ENOTFOUND},
		{name: "DeleteWebhook", who: "acme/admin", write: func(ctx context.Context, rec *records) error {
			_, err := r.DeleteWebhook(ctx, who(ctx), rec.webhook)
			return err
		}, foreign: model.ENOTFOUND},
	}
	before := must[*model.Shipment](t, "globex's shipment")(r.Shipment(e.as("globex/viewer"), e.who["globex/viewer"], globex.shipment, nil))
	unknown := &records{shipment: unknownID, container: unknownID, document: unknownID, definition: unknownID,
		enumDefinition: unknownID, option: unknownID, value: unknownID, valueEntity: unknownID, webhook: unknownID}
	malformed := &records{shipment: "x", container: "x", document: "x", definition: "x",
		enumDefinition: "x", option: "x", value: "x", valueEntity: "x", webhook: "x"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantErr(t, "globex's target", c.write(e.as(c.who), globex), c.foreign, "", "")
			wantErr(t, "unknown target", c.write(e.as(c.who), unknown), c.foreign, "", "")
			wantErr(t, "malformed target", c.write(e.as(c.who), malformed), c.foreign, "", "")
			// 403 before 404: a viewer is refused before its target is
			// looked for.
			wantErr(t, "viewer, unknown target", c.write(e.as("acme/viewer"), unknown), model.EFORBIDDEN, "", "")
			if c.own == "" {
				return
			}
			err := c.write(e.as(c.who), acme)
			wantErr(t, "own target", err, c.own, c.ownField, "")
			if c.ownIsTransportError && err != error(decodeErr) {
				t.Errorf("own target: %v, want the transport's error itself", err)
			}
		})
	}

	// Nothing of globex's changed.
	ctx := e.as("globex/admin")
	if s, err := r.Shipment(ctx, who(ctx), globex.shipment, nil); err != nil || !s.UpdatedAt.Equal(before.UpdatedAt) {
		t.Errorf("globex's shipment after acme's writes: %+v, %v", s, err)
	}
	for name, get := range map[string]func() error{
		"document":   func() error { _, err := r.Document(ctx, who(ctx), globex.document, nil); return err },
		"definition": func() error { _, err := r.Definition(ctx, who(ctx), globex.definition, nil); return err },
		"value":      func() error { _, err := r.CustomField(ctx, who(ctx), globex.value, nil); return err },
		"webhook":    func() error { _, err := r.Webhook(ctx, who(ctx), globex.webhook, nil); return err },
		"option": func() error {
			os, err := r.Options(ctx, who(ctx), globex.enumDefinition)
			if err == nil && (len(os) == 0 || os[0].ID != globex.option) {
				t.Errorf("globex's options: %v", os)
			}
			return err
		},
	} {
		if err := get(); err != nil {
			t.Errorf("globex's %s after acme's deletes: %v", name, err)
		}
	}
}

// Creates have no target: the key's role, then the transport's error, then
// the input's rules, then the store's conflicts (named by Field too).
func testCreateErrors(t *testing.T, e *env, acme *records) {
	r := e.r
	def := func(slug, name string) resolve.CreateDefinition {
		return resolve.CreateDefinition{Input: model.CustomFieldDefinitionInput{EntityType: "Shipment", APISlug: slug, DisplayName: name, DataType: "short_text"}}
	}
	existing := must[*model.CustomFieldDefinition](t, "definition")(e.r.Definition(e.as("acme/viewer"), e.who["acme/viewer"], acme.definition, nil))
	hook := func(url string, events ...string) resolve.CreateWebhook {
		return resolve.CreateWebhook{Input: model.WebhookInput{URL: url, Events: events}}
	}
	cases := []struct {
		name        string
		who         string
		create      func(ctx context.Context) error
		code, field string
	}{
		{"definition: viewer", "acme/viewer", func(ctx context.Context) error {
			_, err := r.CreateDefinition(ctx, who(ctx), def("Bad Slug", ""))
			return err
		}, model.EFORBIDDEN, ""},
		{"definition: slug", "acme/member", func(ctx context.Context) error {
			_, err := r.CreateDefinition(ctx, who(ctx), def("Bad Slug", ""))
			return err
		}, model.EINVALID, "api_slug"},
		{"definition: name", "acme/member", func(ctx context.Context) error {
			_, err := r.CreateDefinition(ctx, who(ctx), def("ok_slug", blankName))
			return err
		}, model.EINVALID, "display_name"},
		{"definition: slug taken", "acme/member", func(ctx context.Context) error {
			_, err := r.CreateDefinition(ctx, who(ctx), resolve.CreateDefinition{Input: model.CustomFieldDefinitionInput{
				EntityType: existing.EntityType, APISlug: existing.APISlug, DisplayName: "Again", DataType: "short_text"}})
			return err
		}, model.ECONFLICT, "api_slug"},
		{"webhook: member", "acme/member", func(ctx context.Context) error {
			_, err := r.CreateWebhook(ctx, who(ctx), resolve.CreateWebhook{Invalid: decodeErr})
			return err
		}, model.EFORBIDDEN, ""},
		{"webhook: transport's error first", "acme/admin", func(ctx context.Context) error {
			_, err := r.CreateWebhook(ctx, who(ctx), resolve.CreateWebhook{Input: hook("", "nope").Input, Invalid: decodeErr})
			return err
		}, model.EINVALID, "decoded"},
		{"webhook: url", "acme/admin", func(ctx context.Context) error {
			_, err := r.CreateWebhook(ctx, who(ctx), hook(" ", "container.updated"))
			return err
		}, model.EINVALID, "url"},
		{"webhook: no events", "acme/admin", func(ctx context.Context) error {
			_, err := r.CreateWebhook(ctx, who(ctx), hook("http://127.0.0.1:9/x"))
			return err
		}, model.EINVALID, "events"},
		{"webhook: event twice", "acme/admin", func(ctx context.Context) error {
			_, err := r.CreateWebhook(ctx, who(ctx), hook("http://127.0.0.1:9/x", "container.updated", "container.updated"))
			return err
		}, model.EINVALID, "events"},
		{"value: unknown entity", "acme/member", func(ctx context.Context) error {
			_, err := r.CreateValue(ctx, who(ctx), resolve.CreateValue{EntityID: unknownID, APISlug: acme.valueSlug, Value: model.JSON(`"x"`)})
			return err
		}, model.ENOTFOUND, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantErr(t, c.who, c.create(e.as(c.who)), c.code, c.field, "")
		})
	}
	// The store refused nothing by accident: the same inputs, valid, write.
	d, err := r.CreateDefinition(e.as("acme/member"), e.who["acme/member"], def("ok_slug", "OK"))
	if err != nil || d.ID == "" || d.APISlug != "ok_slug" {
		t.Errorf("a valid definition: %+v, %v", d, err)
	}
	w, err := r.CreateWebhook(e.as("acme/admin"), e.who["acme/admin"], hook("http://127.0.0.1:9/x", "container.updated"))
	if err != nil || w.Secret == nil || len(*w.Secret) != 64 {
		t.Errorf("a valid webhook: %+v, %v", w, err)
	}
}

const blankName = " \t "
