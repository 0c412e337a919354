package datasync_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"shipgraph/datasync"
	"shipgraph/db/dbtest"
	"shipgraph/jobs"
	"shipgraph/model"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

type destDoc struct {
	Data struct {
		ID         string `json:"id"`
		Type       string `json:"type"`
		Attributes struct {
			URL    string   `json:"url"`
			Kind   string   `json:"kind"`
			Tables []string `json:"tables"`
			Paused bool     `json:"paused"`
			Status []struct {
				Table       string  `json:"table"`
				Phase       string  `json:"phase"`
				Position    int64   `json:"position"`
				Lag         int64   `json:"lag"`
				RowsWritten int64   `json:"rows_written"`
				LastError   *string `json:"last_error"`
			} `json:"status"`
		} `json:"attributes"`
	} `json:"data"`
}

// Destinations through /v2: an admin adds one (its password never shown
// again), sees it fill and follow, pauses, resumes, re-syncs and deletes
// it; members and viewers are refused, another account's admin does not
// find it.
func TestSyncDestinationsAPI(t *testing.T) {
	ctx := context.Background()
	seeded := pg.New(t, 30)
	store, keys := seeded.Store, seeded.Keys
	e := &env{t: t, ctx: ctx, store: store, src: store.SQL()}
	e.acme = e.id(`SELECT id FROM accounts WHERE slug = 'acme'`)
	e.syncer = start(t, store, datasync.Config{Page: 50})
	c := testkit.Config(testkit.Defaults().GraphQL, testkit.Defaults().Resolver.Loaders)
	c.Resolver.DataSync = e.syncer
	base := strings.TrimSuffix(testkit.On(t, seeded, testkit.Start(t, store, c)).URL(), "/graphql")

	do := func(method, key, path string, body any) (int, []byte) {
		t.Helper()
		var b []byte
		if body != nil {
			b, _ = json.Marshal(body)
		}
		r := testkit.Send(t, method, base+path, key, b)
		return r.Status, r.Body
	}

	_, destURL := destination(t)
	dest := dbtest.Open(t, destURL)
	u, _ := url.Parse(destURL)
	u.User = url.UserPassword("postgres", "s3cret-pw")
	withPassword := u.String()

	admin := keys["acme/admin"]
	create := map[string]any{"data": map[string]any{"type": "sync_destination", "attributes": map[string]any{
		"name": "warehouse", "kind": "postgres", "url": withPassword}}}
	for _, role := range []string{"member", "viewer"} {
		if st, body := do(http.MethodPost, keys["acme/"+role], "/v2/sync_destinations", create); st != http.StatusForbidden {
			t.Fatalf("a %s's create: %d %s, want 403", role, st, body)
		}
	}
	bad := map[string]any{"data": map[string]any{"type": "sync_destination", "attributes": map[string]any{
		"kind": "postgres", "url": withPassword, "tables": []string{"nope"}}}}
	if st, body := do(http.MethodPost, admin, "/v2/sync_destinations", bad); st != http.StatusUnprocessableEntity {
		t.Fatalf("unknown table: %d %s, want 422", st, body)
	}
	st, body := do(http.MethodPost, admin, "/v2/sync_destinations", create)
	if st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, body)
	}
	if bytes.Contains(body, []byte("s3cret-pw")) {
		t.Fatalf("the create's answer shows the password: %s", body)
	}
	var d destDoc
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	id := d.Data.ID
	if d.Data.Type != "sync_destination" || len(d.Data.Attributes.Tables) != 4 || len(d.Data.Attributes.Status) != 4 {
		t.Fatalf("create answered %s", body)
	}
	var stored []byte
	if err := store.SQL().QueryRow(`SELECT url_display || encode(url_sealed, 'escape') FROM sync_destinations WHERE id = $1`, id).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(stored, []byte("s3cret-pw")) {
		t.Fatal("the password is stored in clear")
	}
	for _, role := range []string{"member", "viewer"} {
		if st, _ := do(http.MethodGet, keys["acme/"+role], "/v2/sync_destinations/"+id, nil); st != http.StatusForbidden {
			t.Fatalf("a %s's read: %d, want 403", role, st)
		}
	}
	if st, _ := do(http.MethodGet, keys["globex/admin"], "/v2/sync_destinations/"+id, nil); st != http.StatusNotFound {
		t.Fatalf("another account's admin: %d, want 404", st)
	}
	if st, body := do(http.MethodGet, keys["globex/admin"], "/v2/sync_destinations", nil); st != http.StatusOK || strings.Contains(string(body), id) {
		t.Fatalf("another account's list: %d %s", st, body)
	}

	// GraphQL shows the same destination, without the password; a viewer is
	// refused.
	gql := func(key, query string) (int, []byte) {
		return do(http.MethodPost, key, "/graphql", map[string]any{"query": query})
	}
	st, body = gql(admin, `{ syncDestinations { id url kind tables status { table phase position lag rowsWritten lastError lastSyncedAt } } }`)
	if st != http.StatusOK || !strings.Contains(string(body), id) || strings.Contains(string(body), "s3cret-pw") || strings.Contains(string(body), `"errors"`) {
		t.Fatalf("GraphQL syncDestinations: %d %s", st, body)
	}
	if _, body := gql(keys["acme/viewer"], `{ syncDestinations { id } }`); !strings.Contains(string(body), "FORBIDDEN") {
		t.Fatalf("a viewer's GraphQL read: %s", body)
	}
	if _, body := gql(keys["globex/admin"], `{ syncDestination(id: "`+id+`") { id } }`); !strings.Contains(string(body), `"syncDestination":null`) {
		t.Fatalf("another account's GraphQL read: %s", body)
	}

	caughtUp := func() {
		t.Helper()
		e.waitEqual(dest, e.acme, 60*time.Second)
		testkit.WaitFor(t, 30*time.Second, "every table following at lag 0", func() bool {
			_, body := do(http.MethodGet, admin, "/v2/sync_destinations/"+id, nil)
			var d destDoc
			if json.Unmarshal(body, &d) != nil {
				return false
			}
			for _, s := range d.Data.Attributes.Status {
				if s.Phase != "follow" || s.Lag != 0 || s.LastError != nil {
					return false
				}
			}
			return true
		})
	}
	caughtUp()

	if st, body := do(http.MethodPost, admin, "/v2/sync_destinations/"+id+"/pause", nil); st != http.StatusOK || !strings.Contains(string(body), `"paused":true`) {
		t.Fatalf("pause: %d %s", st, body)
	}
	e.exec(`UPDATE shipments SET tags = '{paused}' WHERE account_id = $1`, e.acme)
	if _, body := gql(admin, `mutation { resumeSyncDestination(id: "`+id+`") { paused } }`); !strings.Contains(string(body), `"paused":false`) {
		t.Fatalf("GraphQL resume: %s", body)
	}
	caughtUp()

	// A re-sync copies again from scratch: a row changed behind the sync's
	// back at the destination comes back as the source has it.
	if _, err := dest.Exec(`UPDATE shipments SET tags = 'tampered'`); err != nil {
		t.Fatal(err)
	}
	if st, body := do(http.MethodPost, admin, "/v2/sync_destinations/"+id+"/resync", nil); st != http.StatusOK {
		t.Fatalf("resync: %d %s", st, body)
	}
	caughtUp()

	if st, _ := do(http.MethodDelete, keys["acme/viewer"], "/v2/sync_destinations/"+id, nil); st != http.StatusForbidden {
		t.Fatalf("a viewer's delete: %d, want 403", st)
	}
	if st, body := do(http.MethodDelete, admin, "/v2/sync_destinations/"+id, nil); st != http.StatusNoContent {
		t.Fatalf("delete: %d %s", st, body)
	}
	if st, _ := do(http.MethodGet, admin, "/v2/sync_destinations/"+id, nil); st != http.StatusNotFound {
		t.Fatalf("read after delete: %d, want 404", st)
	}
}

// A destination's host passes the webhook address rule unless private
// addresses are allowed; the URL is shown without its password.
func TestCheckAddressRule(t *testing.T) {
	store := pg.New(t, 0).Store
	s, err := datasync.New(store, jobs.New(store, jobs.Config{}), datasync.Config{Key: testKey}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// refused checks that each address of the kind is refused as invalid.
	refused := func(kind string, addresses ...string) {
		t.Helper()
		for _, u := range addresses {
			if _, err := s.Check(ctx, kind, u); model.ErrorCode(err) != model.EINVALID {
				t.Errorf("%s: %v, want invalid", u, err)
			}
		}
	}
	refused(datasync.KindPostgres,
		"postgres://u:p@127.0.0.1:5432/db",
		"postgres://u:p@10.1.2.3/db",
		"postgres://u:p@169.254.169.254/db",
		"postgres://u:p@localhost/db",
		"postgres://u:p@[::1]/db",
		"postgres://u:p@/db?host=/var/run/postgresql",
		"mysql://u:p@8.8.8.8/db")
	shown, err := s.Check(ctx, datasync.KindPostgres, "postgres://u:p@8.8.8.8:5432/db?sslmode=require&schema=t49")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(shown, ":p@") || !strings.HasPrefix(shown, "postgres://u@8.8.8.8:5432/db?") {
		t.Fatalf("shown as %s", shown)
	}
	open, err := datasync.New(store, jobs.New(store, jobs.Config{}), datasync.Config{Key: testKey, AllowPrivate: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open.Check(ctx, datasync.KindPostgres, "postgres://u:p@127.0.0.1:5432/db"); err != nil {
		t.Fatalf("with private addresses allowed: %v", err)
	}

	// Object stores: the endpoint passes the same rule; credentials are
	// required and never shown; the server's own disk only for demos.
	refused(datasync.KindObjectStore,
		"s3://AK:SK@lake/acme?endpoint=http://127.0.0.1:9000&region=us-east-1",
		"s3://AK:SK@lake/acme?endpoint=10.0.0.5:9000&disable_https=true",
		"s3://AK:SK@lake?endpoint=http://169.254.169.254",
		"s3://AK:SK@lake?endpoint=localhost:9000",
		"s3://lake/acme?region=us-east-1",
		"s3://AK@lake/acme",
		"file:///var/lib/lake",
		"gs://lake/acme")
	shown, err = s.Check(ctx, datasync.KindObjectStore, "s3://AK:SECRETKEY@lake/exports/acme?region=eu-west-1&endpoint=https://8.8.8.8")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(shown, "SECRETKEY") || shown != "s3://AK@lake/exports/acme?endpoint=https%3A%2F%2F8.8.8.8&region=eu-west-1" {
		t.Fatalf("shown as %s", shown)
	}
	for _, u := range []string{"s3://AK:SK@lake/acme?endpoint=http://127.0.0.1:9000&use_path_style=true", "file:///var/lib/lake"} {
		if _, err := open.Check(ctx, datasync.KindObjectStore, u); err != nil {
			t.Errorf("%s with private addresses allowed: %v", u, err)
		}
	}
}
