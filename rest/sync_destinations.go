package rest

import (
	"net/http"
	"time"

	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// Data sync destinations (docs/datasync.md), a Shipgraph extension outside
// the public OpenAPI document:
//
//	GET, POST     /v2/sync_destinations
//	GET, DELETE   /v2/sync_destinations/{id}
//	POST          /v2/sync_destinations/{id}/pause | resume | resync
//
// Admin keys only (403 for members and viewers). The URL is shown without
// its password, in every answer. DELETE answers 204.

// syncDestinationAttributes are a destination's attributes: the URL
// without its password, and where each table stands.
type syncDestinationAttributes struct {
	Name      string           `json:"name"`
	Kind      string           `json:"kind"`
	URL       string           `json:"url"`
	Tables    []string         `json:"tables"`
	Paused    bool             `json:"paused"`
	Status    []syncStatusJSON `json:"status"`
	CreatedAt time.Time        `json:"created_at"`
	UpdatedAt time.Time        `json:"updated_at"`
}

type syncStatusJSON struct {
	Table         string     `json:"table"`
	Phase         string     `json:"phase"`
	Position      int64      `json:"position"`
	Lag           int64      `json:"lag"`
	RowsWritten   int64      `json:"rows_written"`
	LastError     *string    `json:"last_error"`
	LastErrorAt   *time.Time `json:"last_error_at"`
	LastSyncedAt  *time.Time `json:"last_synced_at"`
	BackfillAfter *string    `json:"backfill_after,omitempty"`
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// syncDestinationResource renders d; the backfill's place shows only while
// a table is in its backfill.
func syncDestinationResource(b *builder, d *model.SyncDestination) *Resource {
	a := syncDestinationAttributes{Name: d.Name, Kind: d.Kind, URL: d.URL, Tables: d.Tables, Paused: d.Paused,
		Status: []syncStatusJSON{}, CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC()}
	for _, st := range d.Status {
		j := syncStatusJSON{Table: st.Table, Phase: st.Phase, Position: st.Pos, Lag: st.Lag, RowsWritten: st.RowsWritten,
			LastError: optString(st.LastError), LastErrorAt: optTime(st.LastErrorAt), LastSyncedAt: optTime(st.SyncedAt)}
		if st.Phase == "backfill" {
			j.BackfillAfter = optString(st.BackfillAfter)
		}
		a.Status = append(a.Status, j)
	}
	return &Resource{ID: d.ID, Type: "sync_destination", Attributes: a, Links: &jsonapi.Links{Self: b.base + "/v2/sync_destinations/" + d.ID}}
}

// writeSyncDestination answers d (with its Location when created), or
// err.
func (s *server) writeSyncDestination(w http.ResponseWriter, r *http.Request, status int, d *model.SyncDestination, err error) {
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	data := syncDestinationResource(s.newBuilder(s.baseURL(r), nil), d)
	if status == http.StatusCreated {
		w.Header().Set("Location", data.Links.Self)
	}
	jsonapi.WriteDocument(w, r, status, &Document{Data: data})
}

func (s *server) listSyncDestinations(w http.ResponseWriter, r *http.Request) {
	ds, err := s.res.SyncDestinations(r.Context(), who(r))
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	b := s.newBuilder(s.baseURL(r), nil)
	data := make([]*Resource, len(ds))
	for i, d := range ds {
		data[i] = syncDestinationResource(b, d)
	}
	jsonapi.WriteDocument(w, r, http.StatusOK, &Document{Data: data})
}

func (s *server) getSyncDestination(w http.ResponseWriter, r *http.Request) {
	d, err := s.res.SyncDestination(r.Context(), who(r), r.PathValue("id"))
	s.writeSyncDestination(w, r, http.StatusOK, d, err)
}

func (s *server) createSyncDestination(w http.ResponseWriter, r *http.Request) {
	attrs, err := jsonapi.ReadAttributes(r, "sync_destination")
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	var in model.SyncDestinationInput
	if err := attrs.Read(jsonapi.Str("name", false, &in.Name), jsonapi.Str("kind", true, &in.Kind), jsonapi.Str("url", true, &in.URL)); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	if in.Tables, _, err = attrs.StringList("tables"); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	d, err := s.res.CreateSyncDestination(r.Context(), who(r), in)
	s.writeSyncDestination(w, r, http.StatusCreated, d, err)
}

func (s *server) actOnSyncDestination(a resolve.SyncDestinationAction) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d, err := s.res.ActOnSyncDestination(r.Context(), who(r), r.PathValue("id"), a)
		s.writeSyncDestination(w, r, http.StatusOK, d, err)
	}
}

func (s *server) deleteSyncDestination(w http.ResponseWriter, r *http.Request) {
	if err := s.res.DeleteSyncDestination(r.Context(), who(r), r.PathValue("id")); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
