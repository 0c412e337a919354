package tracking

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"shipgraph/db"
)

// errTrackingBusy: another transaction holds the request (another
// instance applying a poll of it); nothing was written, try again later.
var errTrackingBusy = errors.New("tracking request locked by another poll")

// Poll is the outcome of one successful answer of a carrier, to be
// applied at once.
type Poll struct {
	AccountID, RequestID string
	// Status: created, awaiting_manifest or failed (FailedReason).
	Status       string
	FailedReason *string
	Shipment     *db.PolledShipment // nil unless created
	Containers   []db.PolledContainer
	Events       []db.PolledEvent
	Vessels      []db.PolledVessel
	// NextPollAt is when to look again (nil: never).
	NextPollAt *time.Time
	// StopAfterArrival: tracking stops once the shipment arrived this long
	// ago (past_arrival_window); 0 never.
	StopAfterArrival time.Duration
}

// Result says what a poll changed.
type Result struct {
	Status      string
	ShipmentID  *string
	StopReason  *string
	RequestGone bool // the request ended (or was deleted) before the poll applied
}

// applied is one poll of a batch and, once written, its result.
type applied struct {
	Poll
	prior    db.LockedRequest
	shipment string
	marked   bool // marked created by this batch (MarkCreated)
	res      Result
	err      error
}

// applyBatch writes the polls of one account in one transaction, each
// statement once for the whole batch: the requests are locked (a request
// another transaction holds is busy and skipped: errTrackingBusy), each
// found or created shipment gets its milestones, containers and events,
// a request the carrier just answered becomes created before anything may
// stop it (so its receivers hear tracking_request.succeeded before
// .tracking_stopped), the stop rules run on each shipment, and every
// request's status and schedule are written. An error fails every poll of
// the batch (nothing written).
func applyBatch(ctx context.Context, store *db.DB, account string, polls []*applied) error {
	return store.InTrackingTx(ctx, account, func(tx *db.TrackingTx) error {
		live, err := lockLive(tx, polls)
		if err != nil || len(live) == 0 {
			return err
		}
		tracked, err := claimShipments(tx, live)
		if err != nil {
			return err
		}
		facts, err := writeTracked(tx, tracked)
		if err != nil {
			return err
		}
		if err := stopRules(tx, tracked, facts); err != nil {
			return err
		}
		return writeOutcomes(tx, live)
	})
}

// lockLive locks the batch's requests and keeps the live ones: a request
// that ended (failed, tracking_stopped) or was deleted takes no poll, one
// another transaction holds is busy.
func lockLive(tx *db.TrackingTx, polls []*applied) ([]*applied, error) {
	ids := make([]string, len(polls))
	for i, p := range polls {
		ids[i] = p.RequestID
		p.res, p.err = Result{}, nil
	}
	locked, busy, err := tx.Lock(ids)
	if err != nil {
		return nil, err
	}
	var live []*applied
	for _, p := range polls {
		r, ok := locked[p.RequestID]
		switch {
		case !ok && contains(busy, p.RequestID):
			p.err = errTrackingBusy
		case !ok:
			p.res.RequestGone = true
		case r.Status == "failed" || r.Status == "tracking_stopped":
			p.res.RequestGone, p.res.Status = true, r.Status
		default:
			p.prior = r
			p.res.Status = p.Status
			live = append(live, p)
		}
	}
	return live, nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// claimShipments finds or creates the shipment of every live poll that
// has one (the carrier knows the number and its equipment) and writes its
// milestones, in one statement: the polls with a shipment. A poll whose
// shipment another transaction created after that statement's snapshot
// is claimed again, and its milestones written, by two more statements.
func claimShipments(tx *db.TrackingTx, live []*applied) ([]*applied, error) {
	var tracked []*applied
	var polls []db.ShipmentPoll
	for _, p := range live {
		if p.Shipment != nil {
			tracked = append(tracked, p)
			polls = append(polls, db.ShipmentPoll{
				ShipmentClaim:  db.ShipmentClaim{RequestID: p.RequestID, Number: p.Shipment.BillOfLadingNumber, Current: p.prior.ShipmentID},
				PolledShipment: *p.Shipment})
		}
	}
	ids, err := tx.ClaimShipments(polls)
	if err != nil {
		return nil, err
	}
	var late []*applied
	var claims []db.ShipmentClaim
	for _, p := range tracked {
		if _, ok := ids[p.RequestID]; !ok {
			late = append(late, p)
			claims = append(claims, db.ShipmentClaim{RequestID: p.RequestID, Number: p.Shipment.BillOfLadingNumber, Current: p.prior.ShipmentID})
		}
	}
	if len(claims) > 0 {
		more, err := tx.Shipments(claims)
		if err != nil {
			return nil, err
		}
		for _, p := range late {
			if id, ok := more[p.RequestID]; ok {
				ids[p.RequestID] = id
				p.shipment = id
			}
		}
	}
	for _, p := range tracked {
		id, ok := ids[p.RequestID]
		if !ok {
			return nil, errors.New("tracking: no shipment for request " + p.RequestID)
		}
		p.shipment = id
		p.res.ShipmentID = &id
	}
	if len(late) > 0 {
		if err := tx.UpdateShipments(shipmentUpdates(late)); err != nil {
			return nil, err
		}
	}
	return tracked, nil
}

// writeTracked writes what the polls said about their shipments'
// containers (one per shipment and number) and events (one per container
// and carrier event id); claimShipments wrote the shipments' milestones.
// Two polls of one shipment in a batch (a bill of lading and one of its
// containers) merge: the later one's known values replace the earlier
// one's. It returns what the stop rules read of the shipments after these
// writes (read by the events' statement).
func writeTracked(tx *db.TrackingTx, tracked []*applied) (map[string]db.StopFacts, error) {
	if len(tracked) == 0 {
		return nil, nil
	}
	if err := tx.Containers(containerUpdates(tracked)); err != nil {
		return nil, err
	}
	var shipments []string
	seen := map[string]bool{}
	for _, p := range tracked {
		if !seen[p.shipment] {
			seen[p.shipment] = true
			shipments = append(shipments, p.shipment)
		}
	}
	return tx.Events(eventInserts(tracked), shipments)
}

func shipmentUpdates(tracked []*applied) []db.ShipmentUpdate {
	at := map[string]int{}
	var out []db.ShipmentUpdate
	for _, p := range tracked {
		if i, ok := at[p.shipment]; ok {
			mergeShipment(&out[i].PolledShipment, p.Shipment)
			continue
		}
		at[p.shipment] = len(out)
		out = append(out, db.ShipmentUpdate{ShipmentID: p.shipment, RequestID: p.RequestID, PolledShipment: *p.Shipment})
	}
	return out
}

func containerUpdates(tracked []*applied) []db.ContainerUpdate {
	type key struct{ shipment, number string }
	at := map[key]int{}
	var out []db.ContainerUpdate
	for _, p := range tracked {
		for _, c := range p.Containers {
			k := key{p.shipment, c.Number}
			if i, ok := at[k]; ok {
				mergeContainer(&out[i].PolledContainer, &c)
				continue
			}
			at[k] = len(out)
			out = append(out, db.ContainerUpdate{ShipmentID: p.shipment, PodFacility: p.Shipment.PodFacility,
				PodLocode: p.Shipment.PodLocode, PolledContainer: c})
		}
	}
	return out
}

func eventInserts(tracked []*applied) []db.EventInsert {
	type key struct{ shipment, number, id string }
	seen := map[key]bool{}
	var out []db.EventInsert
	for _, p := range tracked {
		for _, e := range p.Events {
			k := key{p.shipment, e.ContainerNumber, e.CarrierEventID}
			if !seen[k] {
				seen[k] = true
				out = append(out, db.EventInsert{ShipmentID: p.shipment, PolledEvent: e})
			}
		}
	}
	return out
}

// stopRules stops the shipments whose tracking is over, by their facts:
// every container back empty (all_containers_terminated), arrived longer
// ago than StopAfterArrival (past_arrival_window). A shipment stopped
// before keeps its reason (one a user stopped without one:
// cancelled_by_user). The requests of a stopped shipment stop tracking
// and are no longer scheduled; one the carrier just answered is marked
// created first (its receivers hear tracking_request.succeeded before
// .tracking_stopped). The staged initial custom fields of the requests
// that first succeed are written too.
func stopRules(tx *db.TrackingTx, tracked []*applied, facts map[string]db.StopFacts) error {
	if len(tracked) == 0 {
		return nil
	}
	var staged []db.RequestShipment
	for _, p := range tracked {
		if p.Status == "created" && p.prior.Status != "created" && p.prior.Staged {
			staged = append(staged, db.RequestShipment{RequestID: p.RequestID, ShipmentID: p.shipment})
		}
	}
	if err := tx.ApplyInitialCustomFields(staged); err != nil {
		return err
	}
	reasons := map[string]string{}
	var stops []db.ShipmentStop
	for _, p := range tracked {
		f, ok := facts[p.shipment]
		if !ok {
			continue
		}
		reason, decided := reasons[p.shipment]
		if !decided {
			var stop bool
			reason, stop = stopReason(f, p.StopAfterArrival)
			reasons[p.shipment] = reason
			if stop {
				stops = append(stops, db.ShipmentStop{ShipmentID: p.shipment, Reason: reason})
			}
		}
		if reason != "" {
			p.res.StopReason = &reason
			p.res.Status = "tracking_stopped"
			p.NextPollAt = nil
		}
	}
	var created []db.RequestShipment
	for _, p := range tracked {
		if p.Status == "created" && p.prior.Status != "created" && p.res.Status == "tracking_stopped" {
			created = append(created, db.RequestShipment{RequestID: p.RequestID, ShipmentID: p.shipment})
			p.marked = true
		}
	}
	if err := tx.MarkCreated(created); err != nil {
		return err
	}
	return tx.StopShipments(stops)
}

// stopReason is why a shipment's tracking is over ("": it is not) and
// whether this poll stops it (false: it was stopped before).
func stopReason(f db.StopFacts, afterArrival time.Duration) (reason string, stop bool) {
	switch {
	case f.Stopped && f.StoppedReason != nil:
		return *f.StoppedReason, false
	case f.Stopped:
		return "cancelled_by_user", false
	case f.HasContainers && f.AllTerminated:
		return "all_containers_terminated", true
	case afterArrival > 0 && f.ArrivedAgo != nil && *f.ArrivedAgo > afterArrival.Seconds():
		return "past_arrival_window", true
	}
	return "", false
}

// writeOutcomes writes each live request's status and schedule: a failed
// request (the carrier does not know it) or a stopped one is no longer
// scheduled. A status the row holds already (a repeated poll; a request
// just marked created and not stopped) is not written again: only the
// schedule is.
func writeOutcomes(tx *db.TrackingTx, live []*applied) error {
	out := make([]db.RequestOutcome, len(live))
	for i, p := range live {
		o := db.RequestOutcome{RequestID: p.RequestID, Status: p.res.Status, ShipmentID: p.res.ShipmentID, NextPollAt: p.NextPollAt}
		if p.res.Status == "failed" {
			o.FailedReason, o.NextPollAt = p.FailedReason, nil
		}
		o.Stored = stored(p, o)
		out[i] = o
	}
	return tx.SetOutcomes(out)
}

// stored reports whether p's request row holds o's status already: the
// status, reason and shipment it had under the lock (or was marked created
// with), and no retry counted.
func stored(p *applied, o db.RequestOutcome) bool {
	cur := p.prior
	if p.marked {
		cur.Status, cur.FailedReason, cur.ShipmentID, cur.Retrying, cur.Retries = "created", nil, &p.shipment, false, 0
	}
	return !cur.Retrying && cur.Retries == 0 && cur.Status == o.Status && sameString(cur.FailedReason, o.FailedReason) &&
		(o.ShipmentID == nil || sameString(cur.ShipmentID, o.ShipmentID))
}

func sameString(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// mergeShipment lays what b knows over a.
func mergeShipment(a, b *db.PolledShipment) {
	for _, f := range []struct{ dst, src **string }{{&a.PolLocode, &b.PolLocode}, {&a.PodLocode, &b.PodLocode},
		{&a.DestinationLocode, &b.DestinationLocode}, {&a.VesselName, &b.VesselName}, {&a.VesselIMO, &b.VesselIMO},
		{&a.VoyageNumber, &b.VoyageNumber}, {&a.PodFacility, &b.PodFacility}} {
		if *f.src != nil {
			*f.dst = *f.src
		}
	}
	for _, f := range []struct{ dst, src **time.Time }{{&a.PolEtdAt, &b.PolEtdAt}, {&a.PolAtdAt, &b.PolAtdAt},
		{&a.PodEtaAt, &b.PodEtaAt}, {&a.PodAtaAt, &b.PodAtaAt}, {&a.DestinationEtaAt, &b.DestinationEtaAt},
		{&a.DestinationAtaAt, &b.DestinationAtaAt}} {
		if *f.src != nil {
			*f.dst = *f.src
		}
	}
}

// mergeContainer lays what b knows over a.
func mergeContainer(a, b *db.PolledContainer) {
	for _, f := range []struct{ dst, src **string }{{&a.EquipmentType, &b.EquipmentType},
		{&a.EquipmentHeight, &b.EquipmentHeight}, {&a.CurrentStatus, &b.CurrentStatus}} {
		if *f.src != nil {
			*f.dst = *f.src
		}
	}
	if b.EquipmentLength != nil {
		a.EquipmentLength = b.EquipmentLength
	}
	for _, f := range []struct{ dst, src **time.Time }{{&a.PodArrivedAt, &b.PodArrivedAt}, {&a.PodDischargedAt, &b.PodDischargedAt},
		{&a.PodFullOutAt, &b.PodFullOutAt}, {&a.EmptyTerminatedAt, &b.EmptyTerminatedAt},
		{&a.PodRailLoadedAt, &b.PodRailLoadedAt}, {&a.PodRailDepartedAt, &b.PodRailDepartedAt},
		{&a.IndEtaAt, &b.IndEtaAt}, {&a.IndAtaAt, &b.IndAtaAt}} {
		if *f.src != nil {
			*f.dst = *f.src
		}
	}
}

// maxBatch is the most polls applied in one transaction.
const maxBatch = 200

// waiting is a poll queued for its account's next batch.
type waiting struct {
	a    *applied
	done chan struct{}
}

// batches queue the polls that finished, per account: while one batch of
// an account is being written, the polls of that account that finish
// queue, and the next batch takes them all (group commit). One
// transaction at a time per account in this process: its polls never wait
// on each other's locks (the account's change-log head row, its counters).
type batches struct {
	mu       sync.Mutex
	queued   map[string][]*waiting
	flushing map[string]bool
}

// apply writes a poll with the others of its account that finish
// meanwhile, and returns its result.
func (e *Engine) apply(ctx context.Context, p Poll) (Result, error) {
	w := &waiting{a: &applied{Poll: p}, done: make(chan struct{})}
	b := &e.batches
	b.mu.Lock()
	if b.queued == nil {
		b.queued, b.flushing = map[string][]*waiting{}, map[string]bool{}
	}
	b.queued[p.AccountID] = append(b.queued[p.AccountID], w)
	if !b.flushing[p.AccountID] {
		b.flushing[p.AccountID] = true
		go e.flush(p.AccountID)
	}
	b.mu.Unlock()
	select {
	case <-w.done:
		return w.a.res, w.a.err
	case <-ctx.Done():
		// The poll may still be written: a repeated poll writes nothing twice.
		return Result{}, ctx.Err()
	}
}

// flush writes the account's queued polls, batch after batch, until none
// is left.
func (e *Engine) flush(account string) {
	b := &e.batches
	for {
		b.mu.Lock()
		q := b.queued[account]
		if len(q) == 0 {
			delete(b.queued, account)
			delete(b.flushing, account)
			b.mu.Unlock()
			return
		}
		n := min(len(q), maxBatch)
		batch := slices.Clone(q[:n])
		b.queued[account] = q[n:]
		b.mu.Unlock()
		e.write(account, batch)
		for _, w := range batch {
			close(w.done)
		}
	}
}

// write applies a batch; when it fails, each poll alone, so that one
// poll's failure (a row the database refuses) fails that poll only.
func (e *Engine) write(account string, batch []*waiting) {
	polls := make([]*applied, len(batch))
	for i, w := range batch {
		polls[i] = w.a
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.c.PollTimeout)
	defer cancel()
	if err := e.vessels.write(ctx, e.store, polls); err != nil {
		for _, p := range polls {
			p.err = err
		}
		return
	}
	err := applyBatch(ctx, e.store, account, polls)
	if err == nil {
		return
	}
	if len(polls) == 1 {
		polls[0].err = err
		return
	}
	for _, p := range polls {
		if err := applyBatch(ctx, e.store, account, []*applied{p}); err != nil {
			p.err = err
		}
	}
}

// vessels remembers the vessels this process has written (by IMO, as
// stored), so that a batch writes only the vessels that are new or that
// the carrier now describes differently: most polls name vessels already
// known and send no vessel statement at all.
type vessels struct {
	mu   sync.Mutex
	seen map[string]db.PolledVessel
}

// maxVessels bounds the memory: past it the cache starts afresh (the
// world fleet is about 60,000 ships with an IMO number).
const maxVessels = 100_000

// write stores the batch's vessels that are new or changed to this
// process, on their own (db.UpsertVessels), before the batch's
// transaction, whose events name them.
func (v *vessels) write(ctx context.Context, store *db.DB, polls []*applied) error {
	v.mu.Lock()
	var out []db.PolledVessel
	for _, p := range polls {
		if p.Shipment == nil {
			continue
		}
		for _, x := range p.Vessels {
			if old, ok := v.seen[x.IMO]; !ok || old != merged(old, x) {
				out = append(out, x)
			}
		}
	}
	v.mu.Unlock()
	if len(out) == 0 {
		return nil
	}
	if _, err := store.UpsertVessels(ctx, out); err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.seen == nil || len(v.seen) > maxVessels {
		v.seen = map[string]db.PolledVessel{}
	}
	for _, x := range out {
		old, ok := v.seen[x.IMO]
		if !ok {
			old = db.PolledVessel{IMO: x.IMO}
		}
		v.seen[x.IMO] = merged(old, x)
	}
	return nil
}

// merged is the stored vessel old after x was written: the name replaced,
// the call sign and flag where x knows them (db.UpsertVessels' rule). The
// pointers are interned copies, so that equal vessels compare equal.
func merged(old, x db.PolledVessel) db.PolledVessel {
	out := db.PolledVessel{IMO: x.IMO, Name: x.Name, CallSign: old.CallSign, Flag: old.Flag}
	if x.CallSign != nil && (old.CallSign == nil || *old.CallSign != *x.CallSign) {
		out.CallSign = ptr(*x.CallSign)
	}
	if x.Flag != nil && (old.Flag == nil || *old.Flag != *x.Flag) {
		out.Flag = ptr(*x.Flag)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
