package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"shipgraph/db/seed"
	"shipgraph/jobs"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"shipgraph/db"
	"shipgraph/docproc"
	"shipgraph/files"
	"shipgraph/resolve"
	"shipgraph/testkit"
)

// Documents that are processed (issue 28, point 4), through the whole
// chain: the extraction job inserted with the upload, run by a River
// client built as the server builds it (the tracking engine's, with the
// documents queue), and the job requests of /v2.

// documentJobs runs the document jobs of a test server and reports each
// job that ended.
type documentJobs struct {
	ended chan endedJob
}

type endedJob struct {
	args  docproc.JobArgs
	state rivertype.JobState
}

func (j *documentJobs) start(t testing.TB, store *db.DB, fs *files.Store) resolve.DocumentJobs {
	t.Helper()
	eng := jobs.New(store, jobs.Config{FetchInterval: 50 * time.Millisecond, MaxAttempts: 5})
	p, err := docproc.New(store, fs, eng, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Open(); err != nil {
		t.Fatal(err)
	}
	j.ended = make(chan endedJob, 100)
	events, cancel, err := eng.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev := range events {
			var a docproc.JobArgs
			if ev.Job.Kind == a.Kind() && json.Unmarshal(ev.Job.EncodedArgs, &a) == nil {
				j.ended <- endedJob{a, ev.Job.State}
			}
		}
	}()
	t.Cleanup(cancel) // after the engine's stop
	testkit.StartJobs(t, eng)
	return p
}

// wait returns once the job of step on document id ended.
func (j *documentJobs) wait(t testing.TB, id, step string) rivertype.JobState {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case e := <-j.ended:
			// A failed attempt that River retries (retryable: a
			// transient error, seen on Citus under load) has not ended
			// the job: its retry writes the outcome.
			if e.args.DocumentID == id && e.args.Step == step && e.state != rivertype.JobStateRetryable {
				return e.state
			}
		case <-timeout:
			t.Fatalf("the %s job of document %s did not end", step, id)
		}
	}
}

func processingEnv(t *testing.T) (*env, *documentJobs, *files.Store) {
	fs := testkit.OpenFiles(t, files.Config{Dir: t.TempDir(), Secret: testSecret(t), MaxSize: testFileMax})
	jobs := &documentJobs{}
	return newEnv(t, envOptions{files: fs, jobs: jobs}), jobs, fs
}

// createDoc uploads data and creates a document of it as acme's admin.
func createDoc(t *testing.T, e *env, name, file, ct string, data []byte) string {
	t.Helper()
	r := e.do("acme/admin", "POST", "/v2/documents", createBody(name, upload(e, "acme/admin", file, ct, data)))
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d\n%s", r.status, r.body)
	}
	return obj(r.json(t), "data")["id"].(string)
}

func TestDocumentProcessing(t *testing.T) {
	e, jobs, fs := processingEnv(t)
	f := findFixtures(t, e)
	ctx := context.Background()

	// A shipment of acme and its containers' numbers, printed on a bill
	// of lading that links nothing by hand.
	ship := e.get("/v2/shipments/" + f.shipment + "?include=containers")
	var boxes, boxIDs []string
	for _, inc := range ship["included"].([]any) {
		if c := inc.(map[string]any); c["type"] == "container" {
			boxes = append(boxes, obj(c, "attributes")["number"].(string))
			boxIDs = append(boxIDs, c["id"].(string))
		}
	}
	lines := seed.DocumentLines("bill_of_lading", seed.DocumentRefs{BillOfLading: f.bol, Booking: "BK" + t.Name()[:4], Containers: boxes})
	id := createDoc(t, e, "Scanned BL", "bl.pdf", "application/pdf", testkit.FormPDF(t, lines))
	if st := jobs.wait(t, id, docproc.StepExtract); st != rivertype.JobStateCompleted {
		t.Fatalf("extraction job: %s", st)
	}
	r := e.do("acme/admin", "GET", "/v2/documents/"+id+"?include=shipments,cargos,last_document_representation", nil)
	validate(t, "get-document-200", r.body)
	doc := r.json(t)
	a := obj(doc, "data", "attributes")
	if a["document_type"] != "bill_of_lading" || !strings.HasPrefix(a["classification_notes"].(string), "rules: bill_of_lading scored") {
		t.Errorf("classified: %v / %v", a["document_type"], a["classification_notes"])
	}
	rels := obj(doc, "data", "relationships")
	if got := dataIDs(obj(rels, "shipments")); !slices.Equal(got, []string{f.shipment}) {
		t.Errorf("linked shipments %v, want %s", got, f.shipment)
	}
	got := dataIDs(obj(rels, "cargos"))
	slices.Sort(got)
	slices.Sort(boxIDs)
	if !slices.Equal(got, boxIDs) {
		t.Errorf("linked containers %v, want %v", got, boxIDs)
	}
	var payload map[string]any
	for _, inc := range doc["included"].([]any) {
		if x := inc.(map[string]any); x["type"] == "document_representation" {
			if sv := obj(x, "attributes")["schema_version"]; sv != "bill_of_lading@"+docproc.SchemaVersion {
				t.Errorf("schema_version %v", sv)
			}
			payload = obj(x, "attributes", "payload")
		}
	}
	if payload["bill_of_lading_number"] != f.bol || payload["vessel"] != "MAERSK ESSEN" || payload["issue_date"] != "2026-02-10" {
		t.Errorf("payload %v", payload)
	}
	// The text is kept with the document; the status change is logged,
	// which raises document.extracted (webhook/events.go).
	var status, text string
	if err := e.store.SQL().QueryRowContext(ctx, `SELECT d.extraction_status, x.text FROM documents d
		JOIN document_texts x ON x.account_id = d.account_id AND x.document_id = d.id WHERE d.id = $1`, id).Scan(&status, &text); err != nil {
		t.Fatal(err)
	}
	if status != "extracted" || !strings.Contains(text, "Port of Loading: Yantian, China") {
		t.Errorf("status %s, text %q", status, text)
	}
	var logged int
	if err := e.store.SQL().QueryRowContext(ctx, `SELECT count(*) FROM change_log WHERE record_id = $1 AND op = 'UPDATE'
		AND new ->> 'extraction_status' = 'extracted'`, id).Scan(&logged); err != nil || logged != 1 {
		t.Errorf("change log: %d %v", logged, err)
	}

	// reclassify: a type changed behind its back comes back; relink: a
	// link removed comes back. Both answer 202 before the job runs.
	if _, err := e.store.SQL().ExecContext(ctx, `UPDATE documents SET document_type = 'other' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	r = e.do("acme/admin", "POST", "/v2/documents/"+id+"/reclassify", nil)
	wantJSON(t, r, http.StatusAccepted, "post-document-reclassify-202")
	golden(t, "post-document-reclassify-202", r)
	jobs.wait(t, id, docproc.StepClassify)
	if a := obj(e.get("/v2/documents/"+id), "data", "attributes"); a["document_type"] != "bill_of_lading" {
		t.Errorf("reclassified as %v", a["document_type"])
	}
	if _, err := e.store.SQL().ExecContext(ctx, `DELETE FROM document_shipments WHERE document_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	r = e.do("acme/admin", "POST", "/v2/documents/"+id+"/relink", nil)
	validate(t, "post-document-relink-202", r.body)
	jobs.wait(t, id, docproc.StepLink)
	if got := dataIDs(obj(e.get("/v2/documents/"+id), "data", "relationships", "shipments")); !slices.Equal(got, []string{f.shipment}) {
		t.Errorf("relinked shipments %v", got)
	}
	// reextract: pending again at once, extracted again after; the
	// change log has the second transition too.
	r = e.do("acme/admin", "POST", "/v2/documents/"+id+"/reextract", nil)
	validate(t, "post-document-reextract-202", r.body)
	jobs.wait(t, id, docproc.StepExtract)
	if err := e.store.SQL().QueryRowContext(ctx, `SELECT count(*) FROM change_log WHERE record_id = $1 AND op = 'UPDATE'
		AND new ->> 'extraction_status' = 'extracted'`, id).Scan(&logged); err != nil || logged != 2 {
		t.Errorf("change log after reextract: %d %v", logged, err)
	}

	// Rotation of an image: the stored file turns, its text stays.
	img := createDoc(t, e, "Gate photo", "gate.png", "image/png", testkit.TextPNG(t, 4, 2, "tEXt", "Description\x00DELIVERY ORDER\nB/L No: "+f.bol+"\nRelease Number: R-1\nDeliver To: Dock 4"))
	jobs.wait(t, img, docproc.StepExtract)
	r = e.do("acme/admin", "POST", "/v2/documents/"+img+"/rotate", map[string]any{"degrees": 90})
	wantJSON(t, r, http.StatusAccepted, "post-document-rotate-202")
	jobs.wait(t, img, docproc.StepRotate)
	u, err := e.store.DocumentFile(ctx, e.acme(t), img)
	if err != nil || u == nil {
		t.Fatalf("file: %v", err)
	}
	data, err := fs.Read(ctx, u.Key)
	if err != nil {
		t.Fatal(err)
	}
	turned, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if b := turned.Bounds(); b.Dx() != 2 || b.Dy() != 4 {
		t.Errorf("rotated size %v, want 2x4", b)
	}
	if r, _, _, _ := turned.At(1, 0).RGBA(); r>>8 != 255 {
		t.Error("the red pixel did not move to the top right")
	}
	if x, err := docproc.Extract("image/png", data); err != nil || !strings.Contains(x.Text, "DELIVERY ORDER") {
		t.Errorf("text after rotation: %q %v", x.Text, err)
	}
	if a := obj(e.get("/v2/documents/"+img), "data", "attributes"); int(a["file_size_bytes"].(float64)) != len(data) || a["document_type"] != "delivery_order" {
		t.Errorf("after rotation: %v", a)
	}

	// A photo without embedded text fails, saying why; no pretending.
	var plain bytes.Buffer
	_ = png.Encode(&plain, image.NewGray(image.Rect(0, 0, 3, 3)))
	scan := createDoc(t, e, "Phone scan", "scan.png", "image/png", plain.Bytes())
	jobs.wait(t, scan, docproc.StepExtract)
	var reason string
	if err := e.store.SQL().QueryRowContext(ctx, `SELECT extraction_status || ' ' || extraction_error FROM documents WHERE id = $1`, scan).Scan(&reason); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(reason, "failed needs_ocr: ") || !strings.Contains(reason, "OCR model") {
		t.Errorf("scan: %q", reason)
	}
	if err := e.store.SQL().QueryRowContext(ctx, `SELECT count(*) FROM change_log WHERE record_id = $1 AND op = 'UPDATE'
		AND new ->> 'extraction_status' = 'failed'`, scan).Scan(&logged); err != nil || logged != 1 {
		t.Errorf("change log of the failure: %d %v", logged, err)
	}

	// Refusals: rotate of a PDF, bad degrees, documents without a file.
	r = e.do("acme/admin", "POST", "/v2/documents/"+id+"/rotate", map[string]any{"degrees": 90})
	wantError(t, r, http.StatusUnprocessableEntity, "", "")
	validate(t, "post-document-rotate-422", r.body)
	r = e.do("acme/admin", "POST", "/v2/documents/"+img+"/rotate", map[string]any{"degrees": 45})
	wantError(t, r, http.StatusUnprocessableEntity, "pointer", "/data/attributes/degrees")
	validate(t, "post-document-rotate-422", r.body)
	golden(t, "post-document-rotate-422", r, img, "{id}")
	r = e.do("acme/admin", "POST", "/v2/documents/"+img+"/rotate", map[string]any{"degrees": "ninety"})
	wantError(t, r, http.StatusUnprocessableEntity, "pointer", "/data/attributes/degrees")
	var seeded string
	if err := e.store.SQL().QueryRowContext(ctx, `SELECT id FROM documents WHERE account_id = $1 AND upload_id IS NULL
		AND id NOT IN (SELECT document_id FROM document_texts) ORDER BY id LIMIT 1`, e.acme(t)).Scan(&seeded); err != nil {
		t.Fatal(err)
	}
	r = e.do("acme/admin", "POST", "/v2/documents/"+seeded+"/reextract", nil)
	wantError(t, r, http.StatusUnprocessableEntity, "", "")
	r = e.do("acme/admin", "POST", "/v2/documents/"+seeded+"/reclassify", nil)
	wantError(t, r, http.StatusUnprocessableEntity, "", "")
}

// acme is acme's account id.
func (e *env) acme(t testing.TB) string {
	t.Helper()
	var id string
	if err := e.store.SQL().QueryRowContext(context.Background(), `SELECT id FROM accounts WHERE slug = 'acme'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestDocumentJobAccess: every new path refuses without a key (401), a
// viewer (403, before the body is read), another account's or an unknown
// document (404), and never answers 5xx to what a client can send.
func TestDocumentJobAccess(t *testing.T) {
	e, _, _ := processingEnv(t)
	doc := e.firstID("/v2/documents?page[size]=1")
	globexDoc := e.firstIDAs("globex/admin", "/v2/documents?page[size]=1")
	paths := []string{"reextract", "reclassify", "relink", "rotate"}
	for _, p := range paths {
		body := any(nil)
		if p == "rotate" {
			body = map[string]any{"degrees": 90}
		}
		r := e.do("", "POST", "/v2/documents/"+doc+"/"+p, body)
		wantError(t, r, http.StatusUnauthorized, "", "")
		validate(t, "get-documents-401", r.body)
		r = e.do("acme/viewer", "POST", "/v2/documents/"+doc+"/"+p, body)
		wantError(t, r, http.StatusForbidden, "", "")
		r = e.do("acme/admin", "POST", "/v2/documents/"+globexDoc+"/"+p, body)
		wantError(t, r, http.StatusNotFound, "", "")
		validate(t, "post-document-reextract-404", r.body)
		for _, bad := range []string{"nope", "00000000-0000-0000-0000-000000000000", "%00", "' OR 1=1 --", strings.Repeat("9", 300)} {
			r = e.do("acme/admin", "POST", "/v2/documents/"+bad+"/"+p, body)
			if r.status >= 500 || r.status == http.StatusAccepted {
				t.Errorf("%s of %q: %d %s", p, bad, r.status, r.body)
			}
		}
		for _, b := range []string{`{`, `[]`, `{"degrees": 1e400}`, `{"degrees": null}`, "\x00", `{"data": {"type": "shipment"}}`} {
			r = e.do("acme/admin", "POST", "/v2/documents/"+doc+"/"+p, b)
			if r.status >= 500 {
				t.Errorf("%s with %q: %d %s", p, b, r.status, r.body)
			}
		}
		r = e.do("acme/admin", "GET", "/v2/documents/"+doc+"/"+p, nil)
		if r.status != http.StatusMethodNotAllowed {
			t.Errorf("GET %s: %d", p, r.status)
		}
	}
	// A seeded document with text (db/seed) is reclassified and relinked
	// by its stored text: 202 for acme, 404 for globex.
	seededText := ""
	if err := e.store.SQL().QueryRowContext(context.Background(), `SELECT x.document_id FROM document_texts x
		JOIN accounts a ON a.id = x.account_id WHERE a.slug = 'acme' ORDER BY x.document_id LIMIT 1`).Scan(&seededText); err != nil {
		t.Fatal(err)
	}
	if r := e.do("acme/admin", "POST", "/v2/documents/"+seededText+"/relink", nil); r.status != http.StatusAccepted {
		t.Errorf("relink of a seeded document: %d %s", r.status, r.body)
	}
	if r := e.do("globex/admin", "POST", "/v2/documents/"+seededText+"/reclassify", nil); r.status != http.StatusNotFound {
		t.Errorf("globex reclassifies acme's document: %d", r.status)
	}
}

func TestDocumentSchemas(t *testing.T) {
	e := newEnv(t, envOptions{})
	r := e.do("acme/viewer", "GET", "/v2/document_schemas/commercial_invoice@"+docproc.SchemaVersion, nil)
	wantDocument(t, r, http.StatusOK, "get-document-schema-200")
	golden(t, "get-document-schema-200", r)
	for _, dt := range []string{"bill_of_lading", "packing_list", "certificate_of_origin", "arrival_notice", "delivery_order", "customs_entry", "other"} {
		r := e.do("globex/admin", "GET", "/v2/document_schemas/"+dt+"@"+docproc.SchemaVersion, nil)
		if r.status != http.StatusOK {
			t.Errorf("%s: %d", dt, r.status)
		}
		validate(t, "get-document-schema-200", r.body)
	}
	r = e.do("acme/admin", "GET", "/v2/document_schemas/unknown@2026-03-23", nil)
	wantError(t, r, http.StatusNotFound, "", "")
	validate(t, "get-document-schema-404", r.body)
	golden(t, "get-document-schema-404", r)
	r = e.do("", "GET", "/v2/document_schemas/commercial_invoice@"+docproc.SchemaVersion, nil)
	wantError(t, r, http.StatusUnauthorized, "", "")
	for _, bad := range []string{"%00", "x@y@z", strings.Repeat("a", 2000), "commercial_invoice@2020-01-01"} {
		if r := e.do("acme/admin", "GET", "/v2/document_schemas/"+bad, nil); r.status != http.StatusNotFound && r.status != http.StatusBadRequest {
			t.Errorf("%q: %d %s", bad, r.status, r.body)
		}
	}
	// Without a document engine the job paths answer 503, not 202.
	doc := e.firstID("/v2/documents?page[size]=1")
	if _, err := e.store.SQL().ExecContext(context.Background(), `INSERT INTO document_texts (account_id, document_id, text, extractor)
		SELECT account_id, id, 'BILL OF LADING', 'plain' FROM documents WHERE id = $1 ON CONFLICT DO NOTHING`, doc); err != nil {
		t.Fatal(err)
	}
	wantError(t, e.do("acme/admin", "POST", "/v2/documents/"+doc+"/reclassify", nil), http.StatusServiceUnavailable, "", "")
}
