package graph_test

import (
	"testing"

	"shipgraph/docproc"
	"shipgraph/graph/gqlhttp"
	"shipgraph/jobs"
	"shipgraph/load"
	"shipgraph/testkit"
)

// The document job mutations (issue 28) over the same resolver as /v2:
// the job is enqueued on River (an insert-only client here: what runs it is
// tested in rest/document_processing_test.go), the document answered as
// it is; a viewer, another account and an unknown id are refused.
func TestDocumentJobMutations(t *testing.T) {
	e := newWriteEnv(t)
	eng := jobs.New(e.Store, jobs.Config{})
	p, err := docproc.New(e.Store, nil, eng, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Open(); err != nil {
		t.Fatal(err)
	}
	hc := testkit.Config(gqlhttp.DefaultHandlerConfig, load.DefaultLoaderConfig)
	hc.Resolver.DocumentJobs = p
	e.Handler = testkit.Start(t, e.Store, hc)

	var acme, globex string
	e.SQL(t, &acme, `SELECT x.document_id FROM document_texts x JOIN accounts a ON a.id = x.account_id
		WHERE a.slug = 'acme' ORDER BY x.document_id LIMIT 1`)
	e.SQL(t, &globex, `SELECT x.document_id FROM document_texts x JOIN accounts a ON a.id = x.account_id
		WHERE a.slug = 'globex' ORDER BY x.document_id LIMIT 1`)
	admin, viewer := e.Key(t, "acme/admin"), e.Key(t, "acme/viewer")

	for _, m := range []string{"reclassifyDocument", "relinkDocument"} {
		var got map[string]struct{ ID, DocumentType string }
		e.Must(t, admin, `mutation($id: ID!) { `+m+`(id: $id) { id documentType } }`, testkit.Vars{"id": acme}, &got)
		if got[m].ID != acme {
			t.Errorf("%s: %+v", m, got)
		}
		if res := e.Do(t, viewer, `mutation($id: ID!) { `+m+`(id: $id) { id } }`, testkit.Vars{"id": acme}); !testkit.CodesEqual(res.Codes(), "FORBIDDEN") {
			t.Errorf("%s as viewer: %s", m, res)
		}
		if res := e.Do(t, admin, `mutation($id: ID!) { `+m+`(id: $id) { id } }`, testkit.Vars{"id": globex}); !testkit.CodesEqual(res.Codes(), "NOT_FOUND") {
			t.Errorf("%s of globex's document: %s", m, res)
		}
		if res := e.Do(t, "", `mutation($id: ID!) { `+m+`(id: $id) { id } }`, testkit.Vars{"id": acme}); !testkit.CodesEqual(res.Codes(), "UNAUTHENTICATED") {
			t.Errorf("%s without a key: %s", m, res)
		}
	}
	// One job per step waits: the two requests above are two jobs.
	var jobs int
	e.SQL(t, &jobs, `SELECT count(*) FROM river_job WHERE kind = 'document_process' AND args ->> 'document_id' = $1`, acme)
	if jobs != 2 {
		t.Errorf("%d jobs enqueued, want 2", jobs)
	}
	// A seeded document has no file: nothing to extract or rotate.
	for _, q := range []string{`reextractDocument(id: $id) { id }`, `rotateDocument(id: $id, degrees: 90) { id }`} {
		if res := e.Do(t, admin, `mutation($id: ID!) { `+q+` }`, testkit.Vars{"id": acme}); !testkit.CodesEqual(res.Codes(), "BAD_USER_INPUT") {
			t.Errorf("%s: %s", q, res)
		}
	}
	if res := e.Do(t, admin, `mutation($id: ID!) { rotateDocument(id: $id, degrees: 45) { id } }`, testkit.Vars{"id": acme}); !testkit.CodesEqual(res.Codes(), "BAD_USER_INPUT") {
		t.Errorf("45 degrees: %s", res)
	}
}
