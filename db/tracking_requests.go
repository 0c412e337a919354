package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"shipgraph/model"
)

// Tracking requests (migration 00013): the numbers an account asked to
// track, with their lifecycle. The API reads and writes them here; the
// poller (another file) moves them through their states.

const trackingRequestCols = `tr.id, tr.account_id, tr.request_type, tr.request_number, tr.scac, tr.ref_numbers,
	tr.tags, tr.status, tr.failed_reason, tr.is_retrying, tr.retry_count, tr.shipment_id, tr.user_id,
	tr.last_polled_at, tr.next_poll_at, tr.created_at, tr.updated_at, tr.customer_id`

// trackingRequestReturning is what a write returns (the columns without
// the alias).
var trackingRequestReturning = strings.ReplaceAll(trackingRequestCols, "tr.", "")

// TrackingRequestLiveNumberIndex is the unique index that keeps one live
// request per number, type and SCAC in an account: its violation is a
// duplicate request.
const TrackingRequestLiveNumberIndex = "tracking_requests_live_number_idx"

var trackingRequestList = &listSpec{
	plural: "tracking requests",
	from:   "tracking_requests tr",
	alias:  "tr",
	cols:   trackingRequestCols,
	orders: map[string]sortSpec{
		"created_at": {expr: "tr.created_at", typ: "timestamptz"},
		"updated_at": {expr: "tr.updated_at", typ: "timestamptz"},
	},
}

type trackingRequestRow struct {
	model.TrackingRequest
	pageMeta
}

// TrackingRequestsByIDs reads tracking requests of the account.
func (db *DB) TrackingRequestsByIDs(ctx context.Context, accountID string, ids []string) ([]*model.TrackingRequest, error) {
	return byIDs[model.TrackingRequest](ctx, db.read(accountID),
		`SELECT `+trackingRequestCols+` FROM tracking_requests tr WHERE tr.id = ANY($1) AND tr.account_id = $2`, ids, accountID)
}

// TrackingRequestsByShipmentIDs reads the tracking requests of shipments,
// in (shipment, created_at, id) order.
func (db *DB) TrackingRequestsByShipmentIDs(ctx context.Context, accountID string, shipmentIDs []string) ([]*model.TrackingRequest, error) {
	return byIDs[model.TrackingRequest](ctx, db.read(accountID),
		`SELECT `+trackingRequestCols+` FROM tracking_requests tr WHERE tr.shipment_id = ANY($1) AND tr.account_id = $2
		 ORDER BY tr.shipment_id, tr.created_at, tr.id`, shipmentIDs, accountID)
}

// trackingRequestFilter maps a filter to SQL.
func trackingRequestFilter(accountID string, f model.TrackingRequestFilter) *conds {
	c := &conds{}
	c.add("tr.account_id = %s", accountID)
	if len(f.Statuses) > 0 {
		s := make([]string, len(f.Statuses))
		for i, v := range f.Statuses {
			s[i] = string(v)
		}
		c.add("tr.status = ANY(%s)", pq.Array(s))
	}
	if len(f.RequestTypes) > 0 {
		c.add("tr.request_type = ANY(%s)", pq.Array(f.RequestTypes))
	}
	if len(f.Scacs) > 0 {
		c.add("tr.scac = ANY(%s)", pq.Array(f.Scacs))
	}
	if f.RequestNumber != "" {
		// Stored normalised: the filter is normalised the same way.
		c.add("tr.request_number = %s", model.NormalizeTrackingNumber(f.RequestNumber))
	}
	if f.Search != "" {
		t := model.NormalizeTrackingNumber(f.Search)
		c.add(`(tr.request_number LIKE %s ESCAPE '\' OR tr.ref_numbers @> ARRAY[%s::text])`, escapeLike(t)+"%", strings.TrimSpace(f.Search))
	}
	if len(f.Tags) > 0 {
		c.add("tr.tags @> %s::text[]", pq.Array(f.Tags))
	}
	if len(f.ShipmentIDs) > 0 {
		c.add("tr.shipment_id = ANY(%s)", pq.Array(validUUIDs(f.ShipmentIDs)))
	}
	if f.CreatedFrom != nil {
		c.add("tr.created_at >= %s", *f.CreatedFrom)
	}
	if f.CreatedTo != nil {
		c.add("tr.created_at < %s", *f.CreatedTo)
	}
	if f.UpdatedFrom != nil {
		c.add("tr.updated_at >= %s", *f.UpdatedFrom)
	}
	if f.UpdatedTo != nil {
		c.add("tr.updated_at < %s", *f.UpdatedTo)
	}
	return c
}

// ListTrackingRequests reads one page of the account's tracking requests
// that f keeps.
func (db *DB) ListTrackingRequests(ctx context.Context, accountID string, f model.TrackingRequestFilter, p model.PageRequest) (*model.Page[*model.TrackingRequest], error) {
	if !validUUID(accountID) {
		return &model.Page[*model.TrackingRequest]{Items: []*model.TrackingRequest{}, Keys: []*string{}}, nil
	}
	st, err := trackingRequestList.pageQuery(trackingRequestFilter(accountID, f), p, trackingRequestList.cols)
	if err != nil {
		return nil, err
	}
	return readPage(ctx, db.read(accountID), st, func(r *trackingRequestRow) (*model.TrackingRequest, *pageMeta) {
		return &r.TrackingRequest, &r.pageMeta
	})
}

// CountTrackingRequests counts the account's tracking requests that f
// keeps.
func (db *DB) CountTrackingRequests(ctx context.Context, accountID string, f model.TrackingRequestFilter) (int, error) {
	if !validUUID(accountID) {
		return 0, nil
	}
	return count(ctx, db.read(accountID), trackingRequestList, trackingRequestFilter(accountID, f))
}

// ErrDuplicateTrackingRequest is the conflict of a create whose number,
// type and SCAC the account already tracks (a live request: one that did
// not fail).
var ErrDuplicateTrackingRequest = &model.Error{Code: model.ECONFLICT, Message: "the account already has a live tracking request for this number"}

// CreateTrackingRequest stores t (type, number, SCAC, ref numbers, tags)
// for the account as a pending request the poller looks at now, made by
// user (nil for a key of no user), and fills in what the database set. A
// live request of the same number, type and SCAC is
// ErrDuplicateTrackingRequest: the unique index decides, so two creates
// racing cannot both pass. first, when set, is its first poll: it runs in
// the transaction that inserts the request (the poll exists exactly when
// the request does), and the request is not due until first.Lease has
// passed, so the schedule does not claim it while its poll waits in the
// queue; without first it is due at once, for the schedule.
func (db *DB) CreateTrackingRequest(ctx context.Context, accountID string, t *model.TrackingRequest, userID *string,
	first *FirstPoll) error {
	if !validUUID(accountID) {
		return model.NotFound("account")
	}
	var lease time.Duration
	insert := func(q ext) error {
		var staged model.JSON
		if len(t.Staged) > 0 {
			b, err := json.Marshal(t.Staged)
			if err != nil {
				return err
			}
			staged = b
		}
		err := sqlx.GetContext(ctx, q, t,
			`INSERT INTO tracking_requests (account_id, request_type, request_number, scac, ref_numbers, tags, status, user_id, next_poll_at, customer_id,
			     initial_custom_fields)
			 VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, now() + make_interval(secs => $10), $8, $9)
			 RETURNING `+trackingRequestReturning,
			accountID, t.RequestType, t.RequestNumber, t.Scac, pq.StringArray(orEmptyStrings(t.RefNumbers)),
			pq.StringArray(orEmptyStrings(t.Tags)), userID, t.CustomerID, staged, lease.Seconds())
		if isDuplicateTrackingRequest(err) {
			c := *ErrDuplicateTrackingRequest
			return &c
		}
		return mapErr(err)
	}
	if first == nil {
		return insert(db.write(accountID))
	}
	lease = first.Lease
	return db.inRawTx(ctx, accountID, func(q ext, tx *sql.Tx) error {
		if err := insert(q); err != nil {
			return err
		}
		return first.Enqueue(ctx, tx, t)
	})
}

// FirstPoll is a new tracking request's first poll (CreateTrackingRequest).
type FirstPoll struct {
	// Enqueue inserts the poll's job in tx, the transaction that inserts t.
	Enqueue func(ctx context.Context, tx *sql.Tx, t *model.TrackingRequest) error
	// Lease is how long the schedule leaves the request to that job: one
	// that never reports back (its process died) is made up for after it,
	// as the schedule's own claim does.
	Lease time.Duration
}

// isDuplicateTrackingRequest reports a violation of the live number index.
func isDuplicateTrackingRequest(err error) bool {
	var pqe *pq.Error
	return errors.As(err, &pqe) && pqe.Code == "23505" && constraintIs(pqe, TrackingRequestLiveNumberIndex)
}

func orEmptyStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TrackingRequestPatch changes a tracking request; only the Set fields are
// written.
type TrackingRequestPatch struct {
	RefNumbers    []string
	SetRefNumbers bool
	Tags          []string
	SetTags       bool
}

// UpdateTrackingRequest writes the patch to one of the account's tracking
// requests and returns it as it now is.
func (db *DB) UpdateTrackingRequest(ctx context.Context, accountID, id string, p TrackingRequestPatch) (*model.TrackingRequest, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return nil, model.NotFound("tracking request")
	}
	args := []any{id, accountID}
	set := []string{"updated_at = now()"}
	col := func(name string, v any) {
		args = append(args, v)
		set = append(set, name+" = $"+strconv.Itoa(len(args)))
	}
	if p.SetRefNumbers {
		col("ref_numbers", pq.StringArray(orEmptyStrings(p.RefNumbers)))
	}
	if p.SetTags {
		col("tags", pq.StringArray(orEmptyStrings(p.Tags)))
	}
	return getOne[model.TrackingRequest](ctx, db.write(accountID), "tracking request",
		`UPDATE tracking_requests SET `+strings.Join(set, ", ")+` WHERE id = $1 AND account_id = $2 RETURNING `+trackingRequestReturning, args...)
}
