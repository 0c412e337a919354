package rest

import (
	"encoding/json"
	"net/http"
	"time"

	"shipgraph/model"
	"shipgraph/resolve"
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

type syncDestinationJSON struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	Attributes struct {
		Name      string           `json:"name"`
		Kind      string           `json:"kind"`
		URL       string           `json:"url"`
		Tables    []string         `json:"tables"`
		Paused    bool             `json:"paused"`
		Status    []syncStatusJSON `json:"status"`
		CreatedAt time.Time        `json:"created_at"`
		UpdatedAt time.Time        `json:"updated_at"`
	} `json:"attributes"`
	Links *Links `json:"links,omitempty"`
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

func (s *server) syncDestinationJSON(r *http.Request, d *model.SyncDestination) syncDestinationJSON {
	var out syncDestinationJSON
	out.ID, out.Type = d.ID, "sync_destination"
	a := &out.Attributes
	a.Name, a.Kind, a.URL, a.Tables, a.Paused = d.Name, d.Kind, d.URL, d.Tables, d.Paused
	a.CreatedAt, a.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	a.Status = []syncStatusJSON{}
	for _, st := range d.Status {
		j := syncStatusJSON{Table: st.Table, Phase: st.Phase, Position: st.Pos, Lag: st.Lag, RowsWritten: st.RowsWritten,
			LastError: optString(st.LastError), LastErrorAt: optTime(st.LastErrorAt), LastSyncedAt: optTime(st.SyncedAt)}
		if st.Phase == "backfill" {
			j.BackfillAfter = optString(st.BackfillAfter)
		}
		a.Status = append(a.Status, j)
	}
	out.Links = &Links{Self: s.baseURL(r) + "/v2/sync_destinations/" + d.ID}
	return out
}

func writeSyncDocument(w http.ResponseWriter, status int, doc any) {
	w.Header().Set("Content-Type", MediaType)
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(doc)
}

func (s *server) listSyncDestinations(w http.ResponseWriter, r *http.Request) {
	ds, err := s.res.SyncDestinations(r.Context(), who(r))
	if err != nil {
		WriteError(w, r, err)
		return
	}
	data := make([]syncDestinationJSON, 0, len(ds))
	for _, d := range ds {
		data = append(data, s.syncDestinationJSON(r, d))
	}
	writeSyncDocument(w, http.StatusOK, map[string]any{"data": data})
}

func (s *server) getSyncDestination(w http.ResponseWriter, r *http.Request) {
	d, err := s.res.SyncDestination(r.Context(), who(r), r.PathValue("id"))
	if err != nil {
		WriteError(w, r, err)
		return
	}
	writeSyncDocument(w, http.StatusOK, map[string]any{"data": s.syncDestinationJSON(r, d)})
}

func (s *server) createSyncDestination(w http.ResponseWriter, r *http.Request) {
	attrs, err := readAttributes(r, "sync_destination")
	if err != nil {
		WriteError(w, r, err)
		return
	}
	var in model.SyncDestinationInput
	for name, dst := range map[string]*string{"name": &in.Name, "kind": &in.Kind, "url": &in.URL} {
		v, err := attrs.text(name, name != "name")
		if err != nil {
			WriteError(w, r, err)
			return
		}
		if v != nil {
			*dst = *v
		}
	}
	if in.Tables, _, err = attrs.stringList("tables"); err != nil {
		WriteError(w, r, err)
		return
	}
	d, err := s.res.CreateSyncDestination(r.Context(), who(r), in)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	data := s.syncDestinationJSON(r, d)
	w.Header().Set("Location", data.Links.Self)
	writeSyncDocument(w, http.StatusCreated, map[string]any{"data": data})
}

func (s *server) actOnSyncDestination(a resolve.SyncDestinationAction) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		d, err := s.res.ActOnSyncDestination(r.Context(), who(r), r.PathValue("id"), a)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		writeSyncDocument(w, http.StatusOK, map[string]any{"data": s.syncDestinationJSON(r, d)})
	}
}

func (s *server) deleteSyncDestination(w http.ResponseWriter, r *http.Request) {
	if err := s.res.DeleteSyncDestination(r.Context(), who(r), r.PathValue("id")); err != nil {
		WriteError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
