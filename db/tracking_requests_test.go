package db_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/model"
	"shipgraph/testkit"
)

// TestTrackingRequestDuplicateRace: concurrent creates of one number, type
// and SCAC in an account: the unique index lets exactly one through, and
// the others get ErrDuplicateTrackingRequest (a conflict), not an internal
// error; another account and another type are not duplicates.
func TestTrackingRequestDuplicateRace(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const n = 8
	errs := make([]error, n)
	testkit.AtOnce(n, func(i int) {
		errs[i] = f.DB.CreateTrackingRequest(ctx, f.A.Account,
			&model.TrackingRequest{RequestType: "bill_of_lading", RequestNumber: "MEDURACE1", Scac: "MSCU"}, nil, nil)
	})
	created := 0
	for _, err := range errs {
		switch {
		case err == nil:
			created++
		case model.ErrorCode(err) != model.ECONFLICT || model.ErrorMessage(err) != db.ErrDuplicateTrackingRequest.Message:
			t.Errorf("a racing create: %v", err)
		}
	}
	if created != 1 {
		t.Fatalf("%d of %d racing creates succeeded, want 1", created, n)
	}
	for _, c := range []struct {
		account, typ string
	}{{f.B.Account, "bill_of_lading"}, {f.A.Account, "booking_number"}} {
		r := &model.TrackingRequest{RequestType: c.typ, RequestNumber: "MEDURACE1", Scac: "MSCU"}
		if err := f.DB.CreateTrackingRequest(ctx, c.account, r, nil, nil); err != nil || r.Status != model.TrackingPending || r.NextPollAt == nil || r.AccountID != c.account {
			t.Errorf("%s %s: %v %+v", c.account, c.typ, err, r)
		}
	}
	// Another account's request is not read, listed or updated.
	page, err := f.DB.ListTrackingRequests(ctx, f.B.Account, model.TrackingRequestFilter{RequestNumber: "medu race1"}, model.PageRequest{Limit: 10})
	if err != nil || len(page.Items) != 1 || page.Items[0].AccountID != f.B.Account {
		t.Fatalf("globex's list: %v %+v", err, page)
	}
	theirs := page.Items[0].ID
	if got, err := f.DB.TrackingRequestsByIDs(ctx, f.A.Account, []string{theirs}); err != nil || len(got) != 0 {
		t.Errorf("acme reads globex's request: %v %v", got, err)
	}
	if _, err := f.DB.UpdateTrackingRequest(ctx, f.A.Account, theirs, db.TrackingRequestPatch{Tags: []string{"x"}, SetTags: true}); model.ErrorCode(err) != model.ENOTFOUND {
		t.Errorf("acme updates globex's request: %v", err)
	}
}

// newTrackingRequest inserts a pending tracking request of the account.
func (f *fixture) newTrackingRequest(t *testing.T, accountID, number string) string {
	t.Helper()
	return f.id(t, `INSERT INTO tracking_requests (account_id, request_type, request_number, scac)
		VALUES ($1, 'bill_of_lading', $2, 'MAEU') RETURNING id`, accountID, number)
}

// TestTrackingRequestCustomFields: values of TrackingRequest definitions
// are stored in tracking_request_id (entity_id follows it), set in one
// statement as a shipment's are, refused on another account's request or
// an entity of another type, logged with the request as parent, and
// deleted with the request; the database itself refuses a value on
// another account's request or on two entities.
func TestTrackingRequestCustomFields(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	reqA := f.newTrackingRequest(t, f.A.Account, "MAEU100")
	reqA2 := f.newTrackingRequest(t, f.A.Account, "MAEU101")
	reqB := f.newTrackingRequest(t, f.B.Account, "MAEU200")

	desk := &model.CustomFieldDefinition{EntityType: "TrackingRequest", APISlug: "desk", DisplayName: "Desk", DataType: "short_text"}
	if err := f.DB.CreateCustomFieldDefinition(ctx, f.A.Account, desk); err != nil {
		t.Fatal(err)
	}
	// The slug is unique per entity type: a shipment field may share it.
	shipDesk := &model.CustomFieldDefinition{EntityType: "Shipment", APISlug: "desk", DisplayName: "Desk", DataType: "short_text"}
	if err := f.DB.CreateCustomFieldDefinition(ctx, f.A.Account, shipDesk); err != nil {
		t.Fatal(err)
	}
	again := &model.CustomFieldDefinition{EntityType: "TrackingRequest", APISlug: "desk", DisplayName: "Again", DataType: "number"}
	wantCode(t, f.DB.CreateCustomFieldDefinition(ctx, f.A.Account, again), model.ECONFLICT)
	if got, err := f.DB.FindCustomFieldDefinitionBySlug(ctx, f.A.Account, "TrackingRequest", "desk"); err != nil || got.ID != desk.ID {
		t.Fatalf("by slug: %+v, %v", got, err)
	}

	// Set: one statement, the value on the request.
	cctx, n := counting()
	cf, err := f.DB.SetCustomField(cctx, f.A.Account, desk, reqA, model.JSON(`"D-1"`))
	if err != nil {
		t.Fatal(err)
	}
	if n.Load() != 1 {
		t.Fatalf("SetCustomField cost %d statements", n.Load())
	}
	if cf.TrackingRequestID == nil || *cf.TrackingRequestID != reqA || cf.EntityID != reqA || cf.ShipmentID != nil || cf.ContainerID != nil ||
		cf.APISlug != "desk" || cf.AccountID != f.A.Account || cf.EntityKind() != "TrackingRequest" || cf.EntityType() != "tracking_request" {
		t.Fatalf("created %+v", cf)
	}
	// Set again: the same row; create refuses a second value.
	cf2, err := f.DB.SetCustomField(ctx, f.A.Account, desk, reqA, model.JSON(`"D-2"`))
	if err != nil || cf2.ID != cf.ID || f.storedValue(t, cf.ID) != `"D-2"` {
		t.Fatalf("updated %+v, %v", cf2, err)
	}
	_, err = f.DB.CreateCustomField(ctx, f.A.Account, desk, reqA, model.JSON(`"D-3"`))
	wantCode(t, err, model.ECONFLICT)
	if _, err := f.DB.CreateCustomField(ctx, f.A.Account, desk, reqA2, model.JSON(`"E-1"`)); err != nil {
		t.Fatal(err)
	}

	// Batched reads by entity id, with shipments' values in the same
	// statement.
	shipValue, err := f.DB.SetCustomField(ctx, f.A.Account, shipDesk, f.A.Shipments[2], model.JSON(`"S-1"`))
	if err != nil {
		t.Fatal(err)
	}
	cctx, n = counting()
	cfs, err := f.DB.CustomFieldsByEntityIDs(cctx, f.A.Account, []string{reqA, reqA2, f.A.Shipments[2], reqB})
	if err != nil || n.Load() != 1 {
		t.Fatalf("by entity: %v, %d statements", err, n.Load())
	}
	byEntity := map[string]string{}
	for _, c := range cfs {
		if c.APISlug == "desk" {
			byEntity[c.EntityID] = c.ID
		}
	}
	if byEntity[reqA] != cf.ID || byEntity[reqA2] == "" || byEntity[f.A.Shipments[2]] != shipValue.ID || byEntity[reqB] != "" {
		t.Fatalf("by entity: %v", byEntity)
	}

	// Another account's request, a shipment as a request, a request as a
	// shipment: not found, nothing written.
	_, err = f.DB.SetCustomField(ctx, f.A.Account, desk, reqB, model.JSON(`"x"`))
	wantCode(t, err, model.ENOTFOUND)
	if model.ErrorMessage(err) != "tracking request not found" {
		t.Fatalf("message %q", model.ErrorMessage(err))
	}
	_, err = f.DB.SetCustomField(ctx, f.A.Account, desk, f.A.Shipments[0], model.JSON(`"x"`))
	wantCode(t, err, model.ENOTFOUND)
	_, err = f.DB.SetCustomField(ctx, f.A.Account, shipDesk, reqA, model.JSON(`"x"`))
	wantCode(t, err, model.ENOTFOUND)
	if model.ErrorMessage(err) != "shipment not found" {
		t.Fatalf("message %q", model.ErrorMessage(err))
	}
	var nB int
	if err := f.SQL.QueryRow(`SELECT count(*) FROM custom_fields WHERE tracking_request_id = $1`, reqB).Scan(&nB); err != nil || nB != 0 {
		t.Fatalf("values on account B's request: %d, %v", nB, err)
	}

	// The database refuses what the statements never write: a value on
	// another account's request (the composite key), a value on two
	// entities (the CHECK), a definition of an unknown entity type.
	for name, q := range map[string]string{
		"cross-account": `INSERT INTO custom_fields (account_id, definition_id, tracking_request_id, value) VALUES ($1, $2, $3, '"x"')`,
		"two entities":  `INSERT INTO custom_fields (account_id, definition_id, tracking_request_id, shipment_id, value) VALUES ($1, $2, $4, $5, '"x"')`,
	} {
		if _, err := f.SQL.ExecContext(ctx, q, f.A.Account, desk.ID, reqB, reqA2, f.A.Shipments[3]); err == nil {
			t.Errorf("%s: inserted", name)
		}
	}
	if _, err := f.SQL.ExecContext(ctx, `INSERT INTO custom_field_definitions (account_id, entity_type, api_slug, display_name, data_type)
		VALUES ($1, 'Vessel', 'x', 'x', 'short_text')`, f.A.Account); err == nil {
		t.Errorf("a Vessel definition was inserted")
	}

	// The change log names the request as the value's parent.
	var parent string
	if err := f.SQL.QueryRow(`SELECT parent_id::text FROM change_log WHERE record_type = 'custom_field' AND record_id = $1 AND op = 'INSERT'`,
		cf.ID).Scan(&parent); err != nil || parent != reqA {
		t.Fatalf("change log parent %q, %v; want %s", parent, err, reqA)
	}

	// Deleting by definition and entity, then the request takes its
	// remaining values with it.
	del, err := f.DB.DeleteCustomField(ctx, f.A.Account, desk.ID, reqA)
	if err != nil || del.ID != cf.ID || del.TrackingRequestID == nil || *del.TrackingRequestID != reqA {
		t.Fatalf("deleted %+v, %v", del, err)
	}
	if _, err := f.SQL.ExecContext(ctx, `DELETE FROM tracking_requests WHERE account_id = $1 AND id = $2`, f.A.Account, reqA2); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := f.SQL.QueryRow(`SELECT count(*) FROM custom_fields WHERE tracking_request_id IN ($1, $2)`, reqA, reqA2).Scan(&left); err != nil || left != 0 {
		t.Fatalf("after deleting the request: %d values, %v", left, err)
	}
}

// TestFirstPollLeavesRequestToItsJob: a request created with its first
// poll enqueued in the same transaction is left to that poll for the
// lease, so the schedule's claim does not take it again (a claim of every
// new request re-inserted a job River already had and held the rows its
// polls were writing); one created without a poll is due at once, for the
// schedule.
func TestFirstPollLeavesRequestToItsJob(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	enqueued := 0
	first := &db.FirstPoll{Lease: time.Hour, Enqueue: func(context.Context, *sql.Tx, *model.TrackingRequest) error {
		enqueued++
		return nil
	}}
	polled := &model.TrackingRequest{RequestType: "bill_of_lading", RequestNumber: "MEDUFIRST1", Scac: "MSCU"}
	if err := f.DB.CreateTrackingRequest(ctx, f.A.Account, polled, nil, first); err != nil {
		t.Fatal(err)
	}
	plain := &model.TrackingRequest{RequestType: "bill_of_lading", RequestNumber: "MEDUFIRST2", Scac: "MSCU"}
	if err := f.DB.CreateTrackingRequest(ctx, f.A.Account, plain, nil, nil); err != nil {
		t.Fatal(err)
	}
	if enqueued != 1 {
		t.Fatalf("the first poll was enqueued %d times, want 1", enqueued)
	}
	var claimed []string
	if _, err := f.DB.ClaimDueTrackingRequests(ctx, 100, time.Minute, time.Second, func(_ context.Context, _ *sql.Tx, due []db.DueTracking) ([]db.DueTracking, error) {
		for _, d := range due {
			if d.AccountID == f.A.Account {
				claimed = append(claimed, d.ID)
			}
		}
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(claimed) != 1 || claimed[0] != plain.ID {
		t.Errorf("the schedule claimed %v, want only the request without a poll (%s), not the one with its poll enqueued (%s)",
			claimed, plain.ID, polled.ID)
	}
}
