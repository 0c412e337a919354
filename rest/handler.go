package rest

import (
	"net/http"
	"slices"
	"strings"

	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// Config holds what the adapter needs besides the resolver layer.
type Config struct {
	// PublicBaseURL is the scheme and host for absolute links
	// (e.g. https://api.example.com); empty means taken from the request.
	PublicBaseURL string
}

// server holds the dependencies of the handlers: the resolver layer
// (every read and write) and the configuration.
type server struct {
	res *resolve.Resolver
	cfg Config
}

// methods maps HTTP methods to the handlers of one path.
type methods map[string]http.HandlerFunc

// NewHandler returns the /v2 router. It expects the server's middleware in
// front of it: the body-size limit, authentication (the principal in the
// context) and the request's session (resolve.Session: the principal and
// its loaders). Handlers pass the principal to every resolve call (who).
func NewHandler(r *resolve.Resolver, cfg Config) http.Handler {
	s := &server{res: r, cfg: cfg}
	mux := http.NewServeMux()
	route := func(pattern string, m methods) { mux.Handle(pattern, m) }

	route("/v2/documents", methods{http.MethodGet: s.listDocuments, http.MethodPost: s.createDocument})
	route("/v2/documents/{id}/download_url", methods{http.MethodGet: s.documentDownloadURL})
	route(directUploadsPath, methods{http.MethodPost: s.directUpload})
	route("/v2/documents/{id}", methods{http.MethodGet: s.getDocument, http.MethodPatch: s.updateDocument, http.MethodDelete: s.deleteDocument})
	route("/v2/documents/types", methods{http.MethodGet: s.documentTypes})
	route("/v2/documents/{id}/reextract", methods{http.MethodPost: s.reextractDocument})
	route("/v2/documents/{id}/reclassify", methods{http.MethodPost: s.reclassifyDocument})
	route("/v2/documents/{id}/relink", methods{http.MethodPost: s.relinkDocument})
	route("/v2/documents/{id}/rotate", methods{http.MethodPost: s.rotateDocument})
	route("/v2/document_schemas/{id}", methods{http.MethodGet: s.getDocumentSchema})
	route("/v2/shipments", methods{http.MethodGet: s.listShipments})
	route("/v2/shipments/{id}", methods{http.MethodGet: s.getShipment, http.MethodPatch: s.updateShipment})
	route("/v2/shipments/{id}/stop_tracking", methods{http.MethodPatch: s.stopTracking})
	route("/v2/shipments/{id}/resume_tracking", methods{http.MethodPatch: s.resumeTracking})
	route("/v2/containers", methods{http.MethodGet: s.listContainers})
	route("/v2/containers/{id}", methods{http.MethodGet: s.getContainer, http.MethodPatch: s.updateContainer})
	route("/v2/containers/{id}/transport_events", methods{http.MethodGet: s.containerTransportEvents})
	route("/v2/containers/{id}/raw_events", methods{http.MethodGet: s.containerRawEvents})
	route("/v2/containers/{id}/route", methods{http.MethodGet: s.containerRoute})
	route("/v2/containers/{id}/map_geojson", methods{http.MethodGet: s.containerMap})
	route("/v2/vessels/{id}", methods{http.MethodGet: s.getVessel})
	route("/v2/vessels/{id}/future_positions", methods{http.MethodGet: s.vesselFuturePositions})
	route("/v2/vessels/{id}/future_positions_with_coordinates", methods{http.MethodGet: s.vesselFuturePositionsWithCoordinates})
	route("/v2/containers/{id}/refresh", methods{http.MethodPatch: s.refreshContainer})
	for _, e := range []struct {
		prefix string
		route  entityRoute
	}{{"/v2/shipments/{shipment_id}", shipmentFields}, {"/v2/containers/{container_id}", containerFields},
		{"/v2/tracking_requests/{tracking_request_id}", requestFields}} {
		route(e.prefix+"/custom_fields", methods{
			http.MethodGet:  s.listEntityCustomFields(e.route),
			http.MethodPost: s.createEntityCustomField(e.route),
		})
		route(e.prefix+"/custom_fields/{api_slug}", methods{
			http.MethodGet:    s.getEntityCustomField(e.route),
			http.MethodPatch:  s.patchEntityCustomField(e.route),
			http.MethodDelete: s.deleteEntityCustomField(e.route),
		})
	}
	route("/v2/custom_fields", methods{http.MethodGet: s.listCustomFields, http.MethodPost: s.createCustomField})
	route("/v2/custom_fields/{id}", methods{
		http.MethodGet:    s.getCustomField,
		http.MethodPatch:  s.patchCustomField,
		http.MethodDelete: s.deleteCustomField,
	})
	route("/v2/email_submissions", methods{http.MethodGet: s.listEmailSubmissions})
	route("/v2/email_submissions/{id}", methods{http.MethodGet: s.getEmailSubmission})
	route("/v2/terminals/{id}", methods{http.MethodGet: s.getTerminal})
	route("/v2/shipping_lines", methods{http.MethodGet: s.listShippingLines})
	route("/v2/shipping_lines/{id}", methods{http.MethodGet: s.getShippingLine})
	route("/v2/metro_areas/{id}", methods{http.MethodGet: s.getMetroArea})
	route("/v2/ports/{id}", methods{http.MethodGet: s.getPort})
	route("/v2/custom_field_definitions", methods{http.MethodGet: s.listDefinitions, http.MethodPost: s.createDefinition})
	route("/v2/custom_field_definitions/{id}", methods{
		http.MethodGet:    s.getDefinition,
		http.MethodPatch:  s.updateDefinition,
		http.MethodDelete: s.deleteDefinition,
	})
	route("/v2/custom_field_definitions/{definition_id}/options", methods{
		http.MethodGet:  s.listOptions,
		http.MethodPost: s.createOption,
	})
	route("/v2/custom_field_definitions/{definition_id}/options/{option_id}", methods{
		http.MethodGet:    s.getOption,
		http.MethodPatch:  s.updateOption,
		http.MethodDelete: s.deleteOption,
	})
	route("/v2/tracking_requests", methods{http.MethodGet: s.listTrackingRequests, http.MethodPost: s.createTrackingRequest})
	route("/v2/tracking_requests/infer_number", methods{http.MethodPost: s.inferNumber})
	route("/v2/tracking_requests/{id}", methods{http.MethodGet: s.getTrackingRequest, http.MethodPatch: s.updateTrackingRequest})
	route("/v2/sync_destinations", methods{http.MethodGet: s.listSyncDestinations, http.MethodPost: s.createSyncDestination})
	route("/v2/sync_destinations/{id}", methods{http.MethodGet: s.getSyncDestination, http.MethodDelete: s.deleteSyncDestination})
	route("/v2/sync_destinations/{id}/pause", methods{http.MethodPost: s.actOnSyncDestination(resolve.SyncPause)})
	route("/v2/sync_destinations/{id}/resume", methods{http.MethodPost: s.actOnSyncDestination(resolve.SyncResume)})
	route("/v2/sync_destinations/{id}/resync", methods{http.MethodPost: s.actOnSyncDestination(resolve.SyncResync)})
	route("/v2/webhooks", methods{http.MethodGet: s.listWebhooks, http.MethodPost: s.createWebhook})
	route("/v2/webhooks/events", methods{http.MethodGet: s.webhookEvents})
	route("/v2/webhooks/ips", methods{http.MethodGet: s.webhookIPs})
	route("/v2/webhooks/trigger", methods{http.MethodPost: s.triggerWebhook})
	route("/v2/webhook_notifications/examples", methods{http.MethodGet: s.notificationExamples})
	route("/v2/webhooks/{id}", methods{http.MethodGet: s.getWebhook, http.MethodPatch: s.updateWebhook, http.MethodDelete: s.deleteWebhook})
	route("/v2/webhook_notifications", methods{http.MethodGet: s.listNotifications})
	route("/v2/webhook_notifications/{id}", methods{http.MethodGet: s.getNotification})
	route("/v2/search", methods{http.MethodGet: s.search})
	route("/v2/parties", methods{http.MethodGet: s.listParties, http.MethodPost: s.createParty})
	route("/v2/parties/{id}", methods{http.MethodGet: s.getParty, http.MethodPatch: s.updateParty})
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		jsonapi.WriteError(w, req, model.Errorf(model.ENOTFOUND, "no such endpoint: %s", req.URL.Path))
	})
	return RequireKey(mux)
}

// ServeHTTP dispatches on the method; HEAD is served like GET, and any
// other method is a JSON:API 405 naming the allowed ones.
func (m methods) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	if h, ok := m[method]; ok {
		normalizePathIDs(r)
		h(w, r)
		return
	}
	allowed := make([]string, 0, len(m)+1)
	for k := range m {
		allowed = append(allowed, k)
		if k == http.MethodGet {
			allowed = append(allowed, http.MethodHead)
		}
	}
	slices.Sort(allowed)
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	if r.ContentLength != 0 {
		// The body is not read: close rather than wait for the rest of
		// a slow one before the connection could be reused.
		w.Header().Set("Connection", "close")
	}
	jsonapi.WriteError(w, r, jsonapi.StatusErrorf(http.StatusMethodNotAllowed, "%s is not allowed here; allowed: %s", r.Method, strings.Join(allowed, ", ")))
}

// pathIDs are the path wildcards that hold ids.
var pathIDs = []string{"id", "shipment_id", "container_id", "definition_id", "option_id", "tracking_request_id"}

// normalizePathIDs lower-cases the UUIDs of the path, once, before any
// handler reads them (model.NormalizeID): an upper-case id finds its record.
func normalizePathIDs(r *http.Request) {
	for _, name := range pathIDs {
		if v := r.PathValue(name); v != "" {
			r.SetPathValue(name, model.NormalizeID(v))
		}
	}
}

// RequireKey answers the JSON:API 401 when the request carries no valid key.
func RequireKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if model.PrincipalFrom(r.Context()) == nil {
			jsonapi.WriteError(w, r, model.Errorf(model.EUNAUTHENTICATED, "Invalid or missing API token: send the header 'Authorization: Token <key>'"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// baseURL returns scheme://host of the links of a response
// (PUBLIC_BASE_URL, else the request's).
func (s *server) baseURL(r *http.Request) string { return jsonapi.BaseURL(r, s.cfg.PublicBaseURL) }

// who is the principal the chain authenticated the request as (nil:
// anonymous), which the handlers pass to the resolver layer.
func who(r *http.Request) *model.Principal { return model.PrincipalFrom(r.Context()) }
