// Command extract copies the response schemas the /v2 tests validate
// against out of the OpenAPI document (../shared/reference) into one JSON
// Schema (draft 2020-12) document, testdata/openapi-schemas.json:
//
//	go generate ./rest   (or: go run ./rest/testdata/extract -in … -out …)
//
// OpenAPI 3.0 is not JSON Schema; the conversion
//
//   - turns `nullable: true` into a type list with "null" (and adds null to
//     an enum), or into anyOf [null, …] for a schema without a type;
//   - rewrites #/components/schemas/X references to #/$defs/X;
//   - drops examples and x-* extensions.
//
// and the patches, each recorded in the output's $comment, are where the
// OpenAPI document differs from what the live API (and Shipgraph) answers:
//
//  1. container.type says "account": containers are "container";
//  2. the document responses reference a "user" schema that does not
//     exist: a user resource is added (email, first_name, last_name,
//     created_at);
//  3. to-one relationship linkage is null when the relationship is empty,
//     though some are not marked nullable (shipment.pod_terminal,
//     destination_terminal, line_tracking_stopped_by_user, container
//     relationships …): every relationship's data may be null;
//  4. (none: terminal and rail terminal attributes are validated against
//     the document unchanged; an attribute the data lacks is omitted);
//  5. included of the shipment responses can also hold metro areas, rail
//     terminals (destination, destination_terminal) and users
//     (line_tracking_stopped_by_user); included of the container list can
//     hold terminals (pod_terminal, pickup_facility) — the OpenAPI lists
//     only some of the relationships' types;
//  6. container_updated_event has no type enum: it is
//     "container_updated_event";
//  7. webhook.secret may be null: Shipgraph shows a secret only in the
//     answers to the create and to a rotation (docs/webhooks.md);
//  8. included of the notification list and of the examples can hold
//     container_updated_event (the single notification's lists it), and
//     the webhook payload
//     (a single notification) includes the reference object's records:
//     container, shipment, terminal, port; the examples and a
//     notification can include the document of the document.* events,
//     whose reference object the OpenAPI does not list;
//  9. included of the container responses can hold the container's
//     transport and raw events (the OpenAPI lists neither).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

// responses are the responses the tests check: name → path, method, status.
var responses = []struct{ name, path, method, status string }{
	{"get-documents-200", "/documents", "get", "200"},
	{"get-documents-400", "/documents", "get", "400"},
	{"get-documents-401", "/documents", "get", "401"},
	{"get-document-200", "/documents/{id}", "get", "200"},
	{"get-shipments-200", "/shipments", "get", "200"},
	{"get-shipment-200", "/shipments/{id}", "get", "200"},
	{"get-shipment-404", "/shipments/{id}", "get", "404"},
	{"get-containers-200", "/containers", "get", "200"},
	{"get-container-200", "/containers/{id}", "get", "200"},
	{"get-terminal-200", "/terminals/{id}", "get", "200"},
	{"get-port-200", "/ports/{id}", "get", "200"},
	{"get-custom-field-definitions-200", "/custom_field_definitions", "get", "200"},
	{"get-custom-field-definition-200", "/custom_field_definitions/{id}", "get", "200"},
	{"get-custom-field-options-200", "/custom_field_definitions/{definition_id}/options", "get", "200"},
	{"post-custom-field-option-201", "/custom_field_definitions/{definition_id}/options", "post", "201"},
	{"get-custom-field-option-200", "/custom_field_definitions/{definition_id}/options/{option_id}", "get", "200"},
	{"patch-custom-field-option-200", "/custom_field_definitions/{definition_id}/options/{option_id}", "patch", "200"},
	{"get-shipment-custom-fields-200", "/shipments/{shipment_id}/custom_fields", "get", "200"},
	{"patch-shipment-custom-field-200", "/shipments/{shipment_id}/custom_fields/{api_slug}", "patch", "200"},
	{"post-shipment-custom-field-201", "/shipments/{shipment_id}/custom_fields", "post", "201"},
	{"get-container-custom-fields-200", "/containers/{container_id}/custom_fields", "get", "200"},
	{"post-container-custom-field-201", "/containers/{container_id}/custom_fields", "post", "201"},
	{"patch-container-custom-field-200", "/containers/{container_id}/custom_fields/{api_slug}", "patch", "200"},
	{"get-tracking-request-custom-fields-200", "/tracking_requests/{tracking_request_id}/custom_fields", "get", "200"},
	{"post-tracking-request-custom-field-201", "/tracking_requests/{tracking_request_id}/custom_fields", "post", "201"},
	{"patch-tracking-request-custom-field-200", "/tracking_requests/{tracking_request_id}/custom_fields/{api_slug}", "patch", "200"},
	{"get-custom-fields-200", "/custom_fields", "get", "200"},
	{"post-custom-field-201", "/custom_fields", "post", "201"},
	{"get-custom-field-200", "/custom_fields/{id}", "get", "200"},
	{"patch-custom-field-200", "/custom_fields/{id}", "patch", "200"},
	{"post-custom-field-definition-201", "/custom_field_definitions", "post", "201"},
	{"patch-custom-field-definition-200", "/custom_field_definitions/{id}", "patch", "200"},
	{"patch-shipment-200", "/shipments/{id}", "patch", "200"},
	{"patch-shipment-stop-tracking-200", "/shipments/{id}/stop_tracking", "patch", "200"},
	{"patch-shipment-resume-tracking-200", "/shipments/{id}/resume_tracking", "patch", "200"},
	{"patch-document-200", "/documents/{id}", "patch", "200"},
	{"get-document-types-200", "/documents/types", "get", "200"},
	{"post-documents-201", "/documents", "post", "201"},
	{"post-documents-409", "/documents", "post", "409"},
	{"post-documents-422", "/documents", "post", "422"},
	{"get-document-download-url-200", "/documents/{id}/download_url", "get", "200"},
	{"get-document-download-url-404", "/documents/{id}/download_url", "get", "404"},
	{"get-email-submissions-200", "/email_submissions", "get", "200"},
	{"get-email-submission-200", "/email_submissions/{id}", "get", "200"},
	{"get-shipping-lines-200", "/shipping_lines", "get", "200"},
	{"get-shipping-line-200", "/shipping_lines/{id}", "get", "200"},
	{"get-metro-area-200", "/metro_areas/{id}", "get", "200"},
	{"get-webhooks-200", "/webhooks", "get", "200"},
	{"post-webhooks-201", "/webhooks", "post", "201"},
	{"get-search-200", "/search", "get", "200"},
	{"get-search-400", "/search", "get", "400"},
	{"get-parties-200", "/parties", "get", "200"},
	{"post-parties-201", "/parties", "post", "201"},
	{"post-parties-422", "/parties", "post", "422"},
	{"get-party-200", "/parties/{id}", "get", "200"},
	{"patch-party-200", "/parties/{id}", "patch", "200"},
	{"patch-party-422", "/parties/{id}", "patch", "422"},
	{"patch-container-200", "/containers", "patch", "200"},
	{"post-webhooks-trigger-200", "/webhooks/trigger", "post", "200"},
	{"get-webhook-200", "/webhooks/{id}", "get", "200"},
	{"patch-webhook-200", "/webhooks/{id}", "patch", "200"},
	{"get-webhook-events-200", "/webhooks/events", "get", "200"},
	{"get-webhook-notifications-200", "/webhook_notifications", "get", "200"},
	{"get-webhook-notification-200", "/webhook_notifications/{id}", "get", "200"},
	{"get-webhook-notification-examples-200", "/webhook_notifications/examples", "get", "200"},
	{"get-webhook-ips-200", "/webhooks/ips", "get", "200"},
	{"get-tracking-requests-200", "/tracking_requests", "get", "200"},
	{"post-tracking-requests-201", "/tracking_requests", "post", "201"},
	{"post-tracking-requests-422", "/tracking_requests", "post", "422"},
	{"get-tracking-request-200", "/tracking_requests/{id}", "get", "200"},
	{"patch-tracking-request-200", "/tracking_requests/{id}", "patch", "200"},
	{"post-tracking-requests-infer-number-200", "/tracking_requests/infer_number", "post", "200"},
	{"get-container-transport-events-200", "/containers/{id}/transport_events", "get", "200"},
	{"get-container-raw-events-200", "/containers/{id}/raw_events", "get", "200"},
	{"get-container-map-geojson-200", "/containers/{id}/map_geojson", "get", "200"},
	{"get-vessel-200", "/vessels/{id}", "get", "200"},
	{"get-vessel-by-imo-200", "/vessels/{imo}", "get", "200"},
	{"get-vessel-future-positions-200", "/vessels/{id}/future_positions", "get", "200"},
	{"get-vessel-future-positions-with-coordinates-200", "/vessels/{id}/future_positions_with_coordinates", "get", "200"},
	{"post-document-reextract-202", "/documents/{id}/reextract", "post", "202"},
	{"post-document-reextract-404", "/documents/{id}/reextract", "post", "404"},
	{"post-document-reclassify-202", "/documents/{id}/reclassify", "post", "202"},
	{"post-document-relink-202", "/documents/{id}/relink", "post", "202"},
	{"post-document-rotate-202", "/documents/{id}/rotate", "post", "202"},
	{"post-document-rotate-422", "/documents/{id}/rotate", "post", "422"},
	{"get-document-schema-200", "/document_schemas/{id}", "get", "200"},
	{"get-document-schema-404", "/document_schemas/{id}", "get", "404"},
}

type obj = map[string]any

func main() {
	in := flag.String("in", "../../shared/reference/terminal49-openapi.json", "OpenAPI document")
	out := flag.String("out", "testdata/openapi-schemas.json", "output JSON Schema")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "extract:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	b, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var spec obj
	if err := json.Unmarshal(b, &spec); err != nil {
		return err
	}
	components := spec["components"].(obj)["schemas"].(obj)
	paths := spec["paths"].(obj)

	defs := obj{}
	// The types patch 5 adds to included lists.
	need := map[string]bool{"metro_area": true, "rail_terminal": true, "terminal": true, "container_updated_event": true, "container": true, "shipment": true, "port": true,
		"transport_event": true, "raw_event": true}
	for _, r := range responses {
		op, ok := paths[r.path].(obj)[r.method].(obj)
		if !ok {
			return fmt.Errorf("%s %s: no such operation", r.method, r.path)
		}
		resp, ok := op["responses"].(obj)[r.status].(obj)
		if !ok {
			return fmt.Errorf("%s %s: no %s response", r.method, r.path, r.status)
		}
		schema := resp["content"].(obj)["application/json"].(obj)["schema"]
		defs[r.name] = convert(schema, need)
	}
	// Pull in the component schemas referenced, transitively.
	for len(need) > 0 {
		names := make([]string, 0, len(need))
		for n := range need {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			delete(need, n)
			if _, done := defs[n]; done {
				continue
			}
			c, ok := components[n]
			if !ok {
				if n == "user" {
					continue // patch 2
				}
				return fmt.Errorf("component %s is referenced but missing", n)
			}
			defs[n] = convert(c, need)
		}
	}
	patch(defs)
	doc := obj{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$comment": "Generated by rest/testdata/extract from the OpenAPI document " + fmt.Sprint(spec["info"].(obj)["version"]) +
			"; do not edit. Patches: (1) container.type is \"container\"; (2) a user schema is added; (3) every relationship's data may be null;" +
			" (5) included of the shipment responses also holds metro_area," +
			" rail_terminal and user, included of the container list also holds terminal;" +
			" (6) container_updated_event.type is \"container_updated_event\"; (7) webhook.secret may be null;" +
			" (8) included of the notification list and examples also holds container_updated_event, of a notification container, shipment, terminal and port; of the examples and a notification, the document of the document.* events;" +
			" (9) included of the container responses also holds transport_event and raw_event.",
		"$defs": defs,
	}
	b, err = json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, append(b, '\n'), 0o644)
}

// convert turns an OpenAPI 3.0 schema into JSON Schema 2020-12, noting the
// component schemas it references in need.
func convert(v any, need map[string]bool) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = convert(e, need)
		}
		return out
	case obj:
		out := obj{}
		for k, e := range x {
			switch {
			case strings.HasPrefix(k, "x-"), k == "example", k == "examples", k == "nullable":
				continue
			case k == "$ref":
				ref := e.(string)
				name, ok := strings.CutPrefix(ref, "#/components/schemas/")
				if !ok {
					panic("unexpected $ref " + ref)
				}
				need[name] = true
				out[k] = "#/$defs/" + name
			case k == "properties":
				// Property names are not schemas: convert the values only.
				props := obj{}
				for pn, ps := range e.(obj) {
					props[pn] = convert(ps, need)
				}
				out[k] = props
			default:
				out[k] = convert(e, need)
			}
		}
		if x["nullable"] == true {
			return nullable(out)
		}
		return out
	}
	return v
}

// nullable lets a converted schema also accept null.
func nullable(s obj) obj {
	if t, ok := s["type"].(string); ok {
		s["type"] = []any{t, "null"}
		if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, nil) {
			s["enum"] = append(enum, nil)
		}
		return s
	}
	return obj{"anyOf": []any{obj{"type": "null"}, s}}
}

func patch(defs obj) {
	// (1) containers are "container".
	prop(defs, "container", "type")["enum"] = []any{"container"}

	// (2) the user resource.
	defs["user"] = obj{
		"title": "User (added: the OpenAPI document references but does not define it)",
		"type":  "object",
		"properties": obj{
			"id":   obj{"type": "string", "format": "uuid"},
			"type": obj{"type": "string", "enum": []any{"user"}},
			"attributes": obj{"type": "object", "properties": obj{
				"email":      obj{"type": "string"},
				"first_name": obj{"type": "string"},
				"last_name":  obj{"type": "string"},
				"created_at": obj{"type": "string", "format": "date-time"},
			}},
		},
		"required": []any{"id", "type"},
	}

	// (3) to-one linkage may be null.
	for _, d := range defs {
		rels, ok := get(d, "properties", "relationships", "properties").(obj)
		if !ok {
			continue
		}
		for _, r := range rels {
			data, ok := get(r, "properties", "data").(obj)
			if !ok {
				continue
			}
			if t, ok := data["type"].(string); ok && t == "object" {
				data["type"] = []any{"object", "null"}
			}
		}
	}

	// (5) included types the OpenAPI lists only partly.
	addIncluded(defs, "get-shipments-200", "metro_area", "rail_terminal", "user")
	addIncluded(defs, "get-shipment-200", "metro_area", "rail_terminal", "user")
	addIncluded(defs, "get-containers-200", "terminal")
	// (9) included of the container responses holds the container's
	// transport and raw events (include=transport_events,raw_events).
	addIncluded(defs, "get-containers-200", "transport_event", "raw_event")
	addIncluded(defs, "get-container-200", "transport_event", "raw_event")

	// (6) the container_updated_event type.
	prop(defs, "container_updated_event", "type")["enum"] = []any{"container_updated_event"}

	// (7) a webhook's secret is shown once.
	secret := get(defs["webhook"], "properties", "attributes", "properties", "secret").(obj)
	secret["type"] = []any{"string", "null"}

	// (8) included of the notifications.
	addIncluded(defs, "get-webhook-notifications-200", "container_updated_event")
	addIncluded(defs, "get-webhook-notification-examples-200", "container_updated_event", "document")
	addIncluded(defs, "get-webhook-notification-200", "container", "shipment", "terminal", "port", "document")
	// … and the reference object of the document.* events is a document.
	ref := get(defs["webhook_notification"], "properties", "relationships", "properties", "reference_object", "properties", "data", "properties", "type").(obj)
	ref["enum"] = append(ref["enum"].([]any), "document")
}

// get follows object members, nil when one is missing.
func get(v any, path ...string) any {
	for _, p := range path {
		o, ok := v.(obj)
		if !ok {
			return nil
		}
		v = o[p]
	}
	return v
}

func prop(defs obj, schema, name string) obj {
	return defs[schema].(obj)["properties"].(obj)[name].(obj)
}

func addIncluded(defs obj, response string, types ...string) {
	inc := defs[response].(obj)["properties"].(obj)["included"].(obj)
	items := inc["items"].(obj)
	anyOf, ok := items["anyOf"].([]any)
	if !ok {
		// A single $ref: make it a list.
		anyOf = []any{items}
		inc["items"] = obj{"anyOf": anyOf}
		items = inc["items"].(obj)
	}
	for _, t := range types {
		anyOf = append(anyOf, obj{"$ref": "#/$defs/" + t})
	}
	items["anyOf"] = anyOf
}
