// Package rest is the /v2 JSON:API adapter: it parses and validates a
// request, calls the resolver layer shared with GraphQL (the same rules,
// loaders and SQL) and renders the JSON:API document. It never imports db/.
//
// Endpoints (all need `Authorization: Token <key>`; the router is
// NewHandler, and HEAD is served like GET):
//
//	GET, POST           /v2/documents
//	GET, PATCH, DELETE  /v2/documents/{id}
//	GET                 /v2/documents/{id}/download_url
//	POST                /rails/active_storage/direct_uploads
//	GET                 /v2/documents/types
//	GET                 /v2/shipments
//	GET, PATCH          /v2/shipments/{id}
//	PATCH               /v2/shipments/{id}/stop_tracking
//	PATCH               /v2/shipments/{id}/resume_tracking
//	GET, POST           /v2/shipments/{shipment_id}/custom_fields
//	GET, PATCH, DELETE  /v2/shipments/{shipment_id}/custom_fields/{api_slug}
//	GET                 /v2/containers
//	GET                 /v2/containers/{id}
//	PATCH               /v2/containers/{id}/refresh   (the tracking engine: polls at once; 10 a minute per key)
//	GET, POST           /v2/containers/{container_id}/custom_fields
//	GET, PATCH, DELETE  /v2/containers/{container_id}/custom_fields/{api_slug}
//	GET, POST           /v2/tracking_requests/{tracking_request_id}/custom_fields
//	GET, PATCH, DELETE  /v2/tracking_requests/{tracking_request_id}/custom_fields/{api_slug}
//	GET, POST           /v2/custom_fields
//	GET, PATCH, DELETE  /v2/custom_fields/{id}
//	GET                 /v2/email_submissions
//	GET                 /v2/email_submissions/{id}
//	GET                 /v2/terminals/{id}
//	GET                 /v2/shipping_lines
//	GET                 /v2/shipping_lines/{id}
//	GET                 /v2/metro_areas/{id}
//	GET                 /v2/ports/{id}
//	GET, POST           /v2/custom_field_definitions
//	GET, PATCH, DELETE  /v2/custom_field_definitions/{id}
//	GET, POST           /v2/custom_field_definitions/{definition_id}/options
//	GET, PATCH, DELETE  /v2/custom_field_definitions/{definition_id}/options/{option_id}
//	GET, POST           /v2/webhooks                          (admin keys; docs/webhooks.md)
//	GET, PATCH, DELETE  /v2/webhooks/{id}
//	GET                 /v2/webhooks/events
//	GET                 /v2/webhooks/ips
//	GET                 /v2/webhook_notifications
//	GET                 /v2/webhook_notifications/{id}
//	GET                 /v2/webhook_notifications/examples
//
// Any other path is a JSON:API 404; another method on a known path is a 405 with
// Allow. docs/v2.md has every rule; the main ones:
//
//   - Default order: newest first (-created_at), ties broken by id; sort
//     takes one field (document_type, added_by, created_at on documents;
//     created_at, pod_eta_at, bill_of_lading_number on shipments;
//     created_at, pickup_lfd, number on containers).
//   - Pages: page[number] from 1, page[size] 1 to 100, default 30
//     (model.DefaultPageSize) on every list. meta.size is the page size the
//     list was read with and meta.total the number of records of the whole
//     filtered list, as the live API answers (size 5, total 34044). links
//     has self (the request), first, last, and prev/next only when they
//     exist; the other parameters are kept in every link.
//   - Includes: every relationship of the resource may be included, one
//     level deep (a nested path is a 400, but for email submissions'
//     documents.last_document_representation). transport_events and raw_events
//     of containers are accepted: Shipgraph has no such records, so their
//     linkage is [] and they add nothing. A relationship the spec does not
//     name (shipping_line on shipments) is a 400, as for documents.
//   - included is present only when include named at least one
//     relationship ([] when nothing was reached); relationships always have
//     data (null or []), included or not.
//   - Sparse fieldsets: fields[type]=a,b shows only the named attributes
//     and relationships of every resource of that type; an unknown type or
//     member is a 400.
//   - Unknown filter[…] and page[…] parameters are a 400 (a misspelled
//     filter would silently answer with the wrong records); other unknown
//     parameters (cache busters) are ignored.
//   - Links are absolute: PUBLIC_BASE_URL, else the request's host (and
//     X-Forwarded-Proto). A document's links.download is
//     /v2/documents/{id}/download_url, the public service's path, which
//     answers a signed URL of the file (files.go, docs/files.md).
//   - Writes take the JSON:API body of the OpenAPI document and the flat
//     forms clients send ({"value": …}, {"data": {"value": …}}).
//     POST answers 201 with Location; DELETE of an option answers 200 with
//     the deleted option. An option still used by stored values cannot be
//     deleted (422). A custom field's value is the raw JSON of its data
//     type (string, number, boolean, list of strings); null clears it by
//     deleting it (PATCH answers 204).
//   - Errors: 400 for query parameters (source.parameter) and bodies that
//     are not JSON:API-shaped (source.pointer), 401, 403 (viewer keys on
//     writes), 404 (unknown, malformed or another account's id: the same
//     answer), 405, 413, 415, 422 for values (source.pointer).
package rest
