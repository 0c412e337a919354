package tracking

import (
	"context"
	"errors"
	"hash/fnv"
	"slices"
	"strings"
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
	prior    string // the request's status under the lock
	staged   bool   // the request carries initial custom field values
	shipment string
	res      Result
	err      error
}

// liveStatuses are the statuses of a request that a poll applies to; an
// ended one (failed, tracking_stopped) takes no poll.
var liveStatuses = []string{"pending", "awaiting_manifest", "created"}

// maxRounds bounds how often a batch's polls are applied again within its
// transaction because another transaction inserted their shipment or a
// container meanwhile (each round sees the rows committed before it).
const maxRounds = 4

// applyBatch writes the polls of one account in one transaction (applyIn).
func applyBatch(ctx context.Context, store *db.DB, account string, polls []*applied) error {
	return store.InTrackingTx(ctx, account, func(tx *db.TrackingTx) error { return applyIn(tx, polls) })
}

// applyGroups writes the polls of several accounts in one transaction
// (db.InTrackingTxs): the polls of them all are locked and written by
// one statement each (a TrackingTx over every account: writePolls), then
// each account's rare statements (finishPolls), in the groups' order. An
// error fails every poll of every group (nothing written).
func applyGroups(ctx context.Context, store *db.DB, groups []group) error {
	accounts := make([]string, len(groups))
	for i, g := range groups {
		accounts[i] = g.account
	}
	return store.InTrackingTxs(ctx, accounts, func(all *db.TrackingTx, txs []*db.TrackingTx) error {
		if all == nil {
			for i, g := range groups {
				if err := applyIn(txs[i], g.polls()); err != nil {
					return err
				}
			}
			return nil
		}
		var polls []*applied
		for _, g := range groups {
			polls = append(polls, g.polls()...)
		}
		tracked, moved, facts, err := writePolls(all, polls)
		if err != nil {
			return err
		}
		for i, g := range groups {
			of := func(ps []*applied) []*applied {
				return slices.DeleteFunc(slices.Clone(ps), func(p *applied) bool { return p.AccountID != g.account })
			}
			if err := finishPolls(txs[i], of(tracked), of(moved), facts); err != nil {
				return err
			}
		}
		return nil
	})
}

// applyIn writes the polls of one account in tx, whose common case is
// two statements: the requests are locked (db.Lock; a request another
// transaction holds is busy and skipped: errTrackingBusy), then one
// statement (db.ApplyPolls) writes everything else: each found or created
// shipment gets its milestones, containers and events (a shipment whose
// port of discharge or ETA moves gets its milestones by a statement of
// its own, after its containers: db.PollApplied.Moved), each live request
// its status (created, before anything may stop it, so that its
// receivers hear tracking_request.succeeded before .tracking_stopped) and
// schedule. A poll that met another transaction's new shipment or
// container is applied again (the statement is idempotent). Then the
// rules that need the statement's answer, each a statement only when it
// applies: the staged initial custom fields of a request that first
// succeeds, and the stop rules on each shipment.
func applyIn(tx *db.TrackingTx, polls []*applied) error {
	tracked, moved, facts, err := writePolls(tx, polls)
	if err != nil {
		return err
	}
	return finishPolls(tx, tracked, moved, facts)
}

// writePolls is applyIn's lock and poll statements, in tx (one account's,
// or one over several accounts, each poll naming its own): the polls that
// have a shipment (tracked), those whose shipment's milestones are left
// to UpdateShipments (moved), and the shipments' stop facts.
func writePolls(tx *db.TrackingTx, polls []*applied) (tracked, moved []*applied, facts map[string]db.StopFacts, err error) {
	for _, p := range polls {
		p.res, p.err, p.shipment, p.prior, p.staged = Result{}, nil, "", "", false
	}
	pending, err := lockLive(tx, polls)
	if err != nil {
		return nil, nil, nil, err
	}
	facts = map[string]db.StopFacts{}
	for round := 0; len(pending) > 0; round++ {
		if round == maxRounds {
			return nil, nil, nil, errors.New("tracking: shipments or containers still claimed by other transactions")
		}
		writes := make([]db.PollWrite, len(pending))
		for i, p := range pending {
			writes[i] = db.PollWrite{AccountID: p.AccountID, RequestID: p.RequestID, Status: p.Status, FailedReason: p.FailedReason,
				NextPollAt: p.NextPollAt, Shipment: p.Shipment, Containers: p.Containers, Events: p.Events}
			if p.Status == "failed" {
				writes[i].NextPollAt = nil
			}
		}
		out, err := tx.ApplyPolls(liveStatuses, writes)
		if err != nil {
			return nil, nil, nil, err
		}
		var again []*applied
		for _, p := range pending {
			r := out[p.RequestID]
			switch {
			case !r.Locked:
				p.res.RequestGone = true
			case p.Shipment != nil && (r.ShipmentID == nil || !r.Complete):
				again = append(again, p)
			default:
				p.res.Status = p.Status
				if r.ShipmentID != nil {
					p.shipment = *r.ShipmentID
					p.res.ShipmentID = &p.shipment
					facts[p.shipment] = r.Facts()
					tracked = append(tracked, p)
					if r.Moved {
						moved = append(moved, p)
					}
				}
			}
		}
		pending = again
	}
	return tracked, moved, facts, nil
}

// finishPolls is applyIn's statements after the polls' (one account's, in
// its tx): the milestones of the moved shipments, then the stop rules.
func finishPolls(tx *db.TrackingTx, tracked, moved []*applied, facts map[string]db.StopFacts) error {
	if err := tx.UpdateShipments(shipmentUpdates(moved)); err != nil {
		return err
	}
	return stopRules(tx, tracked, facts)
}

// lockLive locks the batch's requests and keeps the live ones: a request
// that ended (failed, tracking_stopped) or was deleted takes no poll, one
// another transaction holds is busy.
func lockLive(tx *db.TrackingTx, polls []*applied) ([]*applied, error) {
	ids := make([]string, len(polls))
	accounts := make([]string, len(polls))
	for i, p := range polls {
		ids[i], accounts[i] = p.RequestID, p.AccountID
	}
	locked, busy, err := tx.Lock(accounts, ids)
	if err != nil {
		return nil, err
	}
	var live []*applied
	for _, p := range polls {
		r, ok := locked[p.RequestID]
		switch {
		case !ok && slices.Contains(busy, p.RequestID):
			p.err = errTrackingBusy
		case !ok:
			p.res.RequestGone = true
		case !slices.Contains(liveStatuses, r.Status):
			p.res.RequestGone, p.res.Status = true, r.Status
		default:
			p.prior, p.staged = r.Status, r.Staged
			live = append(live, p)
		}
	}
	return live, nil
}

// shipmentUpdates merges the polls' milestones per shipment (the later
// poll's known values win; the first poll's request gives the customer).
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

// stopRules stops the shipments whose tracking is over, by their facts:
// every container back empty (all_containers_terminated), arrived longer
// ago than StopAfterArrival (past_arrival_window). A shipment stopped
// before keeps its reason (one a user stopped without one:
// cancelled_by_user). The requests of a stopped shipment stop tracking
// and are no longer scheduled (a shipment stopped now stops them by its
// trigger; one stopped before, here); the poll's statement wrote a
// request the carrier just answered as created first. The staged initial
// custom fields of the requests that first succeed are written before.
func stopRules(tx *db.TrackingTx, tracked []*applied, facts map[string]db.StopFacts) error {
	if len(tracked) == 0 {
		return nil
	}
	var staged []db.RequestShipment
	for _, p := range tracked {
		if p.Status == "created" && p.prior != "created" && p.staged {
			staged = append(staged, db.RequestShipment{RequestID: p.RequestID, ShipmentID: p.shipment})
		}
	}
	if err := tx.ApplyInitialCustomFields(staged); err != nil {
		return err
	}
	type decision struct {
		reason string
		stop   bool
	}
	decided := map[string]decision{}
	var stops []db.ShipmentStop
	var before []string
	for _, p := range tracked {
		d, ok := decided[p.shipment]
		if !ok {
			d.reason, d.stop = stopReason(facts[p.shipment], p.StopAfterArrival)
			decided[p.shipment] = d
			if d.stop {
				stops = append(stops, db.ShipmentStop{ShipmentID: p.shipment, Reason: d.reason})
			}
		}
		if d.reason != "" {
			p.res.StopReason = &d.reason
			p.res.Status = "tracking_stopped"
			p.NextPollAt = nil
			if !d.stop {
				before = append(before, p.RequestID)
			}
		}
	}
	if err := tx.StopShipments(stops); err != nil {
		return err
	}
	return tx.StopRequests(liveStatuses, before)
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

// maxBatch is the most polls applied in one transaction. A batch's time
// is about its polls' (each one's rows and triggers; the transaction's
// own statements are few), so larger batches save little, while a batch
// must end within the polls' timeout: at a loaded machine's 100 ms a
// poll, 32 take about 3 s, within any poll timeout.
const maxBatch = 32

// waiting is a poll queued for its account's next batch.
type waiting struct {
	a      *applied
	done   chan struct{}
	queued time.Time
}

// writersPerAccount is how many batches of one account are written at
// once. The account's change-log head is taken only while a batch's
// changes are numbered at commit (migration 00056), so batches of one
// account write their rows side by side. Each poll goes to one of the
// account's queues by its shipment's bill of lading (its request when it
// has none), one batch at a time per queue: the polls of one shipment (its
// bill of lading, booking and container requests) are in one queue, so two
// batches of this process never race to create or lock the same shipment
// (a deadlock, or a poll applied again). Two on two cores; more add lock
// waits on the account's counter rows for little.
const writersPerAccount = 2

// lane is one of an account's queues (writersPerAccount).
type lane struct {
	account string
	n       uint32
}

// laneOf is the queue of p's account that takes it.
func laneOf(p Poll) lane {
	key := p.RequestID
	if p.Shipment != nil && p.Shipment.BillOfLadingNumber != "" {
		key = p.Shipment.BillOfLadingNumber
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return lane{p.AccountID, h.Sum32() % writersPerAccount}
}

// group is one account's polls of a batch.
type group struct {
	account string
	ws      []*waiting
}

func (g group) polls() []*applied {
	out := make([]*applied, len(g.ws))
	for i, w := range g.ws {
		out[i] = w.a
	}
	return out
}

// lanes queue the polls that finished, per account queue (lane), for the
// write transactions: on plain PostgreSQL at most Config.Writers run at
// once, each writing the queued polls of the queues no other writer
// holds, up to maxBatch, in one transaction; elsewhere (db.GroupsAccounts:
// Citus) one queue's polls a transaction, as many at once as queues have
// polls. While a writer writes, the polls that finish queue, and the next
// batch takes them (group commit). A queue is in one writer at a time in
// this process, and waiting polls hold no connection.
//
// Few writers, not one transaction per account: each concurrent write
// transaction takes a poll's relations' locks (tables and indexes, past
// PostgreSQL's 16 fast-path locks a backend into its shared lock table)
// and extends the same tables and indexes; with one per account the
// writers waited on those (LWLock:LockManager, Lock:extend) more than
// they ran. A writer's transaction takes them once for its batch.
type lanes struct {
	mu      sync.Mutex
	queued  map[lane][]*waiting
	order   []lane        // queues with polls, longest waiting first
	held    map[lane]bool // queues in a writer's batch
	running int           // writers running
}

// apply writes a poll with the others that finish meanwhile, and returns
// its result.
func (e *Engine) apply(ctx context.Context, p Poll) (Result, error) {
	w := &waiting{a: &applied{Poll: p}, done: make(chan struct{}), queued: time.Now()}
	k := laneOf(p)
	l := &e.lanes
	l.mu.Lock()
	if l.queued == nil {
		l.queued, l.held = map[lane][]*waiting{}, map[lane]bool{}
	}
	if len(l.queued[k]) == 0 {
		l.order = append(l.order, k)
	}
	l.queued[k] = append(l.queued[k], w)
	// Without grouping (Citus) a writer per queue, unbounded as one
	// transaction per queue always was: its transactions go to the
	// accounts' shards.
	if (l.running < e.c.Writers || !e.store.GroupsAccounts()) && !l.held[k] {
		l.running++
		go e.writer()
	}
	l.mu.Unlock()
	select {
	case <-w.done:
		return w.a.res, w.a.err
	case <-ctx.Done():
		// The poll may still be written: a repeated poll writes nothing twice.
		return Result{}, ctx.Err()
	}
}

// writer writes batches until no queued poll is left that another writer
// does not hold.
func (e *Engine) writer() {
	l := &e.lanes
	for {
		grouping := e.store.GroupsAccounts()
		l.mu.Lock()
		batch, keys := l.take(grouping)
		if len(batch) == 0 {
			l.running--
			l.mu.Unlock()
			return
		}
		// A queue left for another writer (another of the account's
		// queues, or past maxBatch) gets one now, not at its next poll.
		if (l.running < e.c.Writers || !grouping) && l.takeable() {
			l.running++
			go e.writer()
		}
		l.mu.Unlock()
		began := time.Now()
		n := 0
		for _, g := range batch {
			for _, w := range g.ws {
				stepQueue.Observe(began.Sub(w.queued).Seconds())
			}
			n += len(g.ws)
		}
		BatchPolls.Observe(float64(n))
		e.write(batch)
		stepWrite.Observe(time.Since(began).Seconds())
		e.wrote(batch)
		l.mu.Lock()
		for _, k := range keys {
			delete(l.held, k)
		}
		l.mu.Unlock()
		for _, g := range batch {
			for _, w := range g.ws {
				close(w.done)
			}
		}
	}
}

// take removes the next batch from the queues and holds them: the queued
// polls of the queues no writer holds, longest waiting first, up to
// maxBatch (of one queue unless grouping), one queue an account, by
// account id (so that two transactions take the accounts' rows in one
// order). One queue an account: an account's other queue is left to
// another writer, so that one account's polls are written by
// writersPerAccount transactions side by side; taken together, the
// account's queues were one transaction, one batch after another, each
// as long as its polls' CPU, in one backend. Called with l.mu.
func (l *lanes) take(grouping bool) ([]group, []lane) {
	var batch []group
	var keys []lane
	n := 0
	keep := l.order[:0]
	for _, k := range l.order {
		q := l.queued[k]
		if n == maxBatch || l.held[k] || (!grouping && len(keys) > 0) ||
			slices.ContainsFunc(batch, func(g group) bool { return g.account == k.account }) {
			keep = append(keep, k)
			continue
		}
		c := min(len(q), maxBatch-n)
		batch = append(batch, group{account: k.account, ws: q[:c:c]})
		keys = append(keys, k)
		n += c
		l.held[k] = true
		if c < len(q) {
			l.queued[k] = q[c:]
			keep = append(keep, k)
		} else {
			delete(l.queued, k)
		}
	}
	clear(l.order[len(keep):])
	l.order = keep
	slices.SortFunc(batch, func(x, y group) int { return strings.Compare(x.account, y.account) })
	return batch, keys
}

// takeable reports whether a queue with polls is held by no writer.
// Called with l.mu.
func (l *lanes) takeable() bool {
	return slices.ContainsFunc(l.order, func(k lane) bool { return !l.held[k] })
}

// analyzeAfter is how many polls a process writes before it analyzes the
// tables that have rows and no statistics yet (db.AnalyzeUnanalyzed):
// enough rows that the sample tells one account from many (ANALYZE keeps
// a column's distinct values as a count, not as a fraction of the rows,
// once the rows are more than ten times as many), few enough that the
// plans made without statistics serve only a new database's first
// seconds. Autovacuum would come to the same tables within its naptime (a
// minute by default); until then the write transactions' generic plans
// and PostgreSQL's foreign-key checks, made over nearly empty tables,
// take account-wide indexes (docs/tracking.md).
const analyzeAfter = 50

// wrote counts the batch's written polls and, once the process has
// written analyzeAfter of them, analyzes the tables without statistics:
// once a process, in the background (not in a poll's transaction, and
// not a River job, which would wait behind the queued polls).
func (e *Engine) wrote(batch []group) {
	if e.analyzing.Load() {
		return
	}
	n := 0
	for _, g := range batch {
		for _, w := range g.ws {
			if w.a.err == nil && !w.a.res.RequestGone {
				n++
			}
		}
	}
	if e.written.Add(int64(n)) < analyzeAfter || !e.analyzing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer close(e.analyzed)
		ctx, cancel := context.WithTimeout(context.Background(), analyzeTimeout)
		defer cancel()
		tables, err := e.store.AnalyzeUnanalyzed(ctx)
		if err != nil {
			e.log.Warn("tracking: analyzing the tables without statistics", "err", err)
			return
		}
		if len(tables) > 0 {
			e.log.Info("tracking: analyzed the tables that had rows and no statistics", "tables", tables)
		}
	}()
}

// analyzeTimeout bounds the one-off analyze (a sample a table).
const analyzeTimeout = 5 * time.Minute

// Analyzed is closed once this process' one-off analyze of the tables
// without statistics has ended (after its first analyzeAfter polls
// written): tests wait on it.
func (e *Engine) Analyzed() <-chan struct{} { return e.analyzed }

// write applies a batch; when it fails, each account's polls alone, and
// when those fail, each poll alone, so that one poll's failure (a row the
// database refuses) fails that poll only.
func (e *Engine) write(batch []group) {
	ctx, cancel := context.WithTimeout(context.Background(), e.c.PollTimeout)
	defer cancel()
	var all []*applied
	for _, g := range batch {
		all = append(all, g.polls()...)
	}
	if err := e.vessels.write(ctx, e.store, all); err != nil {
		for _, p := range all {
			p.err = err
		}
		return
	}
	if len(batch) > 1 && applyGroups(ctx, e.store, batch) == nil {
		return
	}
	for _, g := range batch {
		polls := g.polls()
		err := applyBatch(ctx, e.store, g.account, polls)
		if err == nil {
			continue
		}
		if len(polls) == 1 {
			polls[0].err = err
			continue
		}
		for _, p := range polls {
			if err := applyBatch(ctx, e.store, g.account, []*applied{p}); err != nil {
				p.err = err
			}
		}
	}
}

// vessels remembers the vessels this process has written (by IMO, as
// stored), so that a batch writes only the vessels that are new or that
// the carrier now describes differently: most polls name vessels already
// known and send no vessel statement at all.
//
// One vessel statement at a time in this process (writing): vessels are
// shared by every account, a reference table on Citus, where the batches
// of several queues are written at once (one transaction per queue). Two
// vessel statements at once there deadlocked (40P01): each takes the
// reference table's shard lock for its insert and then again, in a
// stronger mode, for its update, each waiting for the other's first lock.
// The polls of both batches failed and were retried, each asking its
// carrier again: the failed and snoozed polls of TestCarrierRateWaitedInPlace,
// TestCarrierTurnsKeptOverSnooze and TestPollStatementBudget on Citus. A
// batch that waited for another's vessels looks again before it writes:
// those are usually the same vessels (the first polls of a process name
// the same ships), so it sends nothing.
type vessels struct {
	mu      sync.Mutex
	seen    map[string]db.PolledVessel
	writing sync.Mutex
}

// maxVessels bounds the memory: past it the cache starts afresh (the
// world fleet is about 60,000 ships with an IMO number).
const maxVessels = 100_000

// write stores the batch's vessels that are new or changed to this
// process, on their own (db.UpsertVessels), before the batch's
// transaction, whose events name them.
func (v *vessels) write(ctx context.Context, store *db.DB, polls []*applied) error {
	if len(v.unwritten(polls)) == 0 {
		return nil
	}
	v.writing.Lock()
	defer v.writing.Unlock()
	out := v.unwritten(polls) // another batch may have written them meanwhile
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

// unwritten is the polls' vessels that are new or changed to this process.
func (v *vessels) unwritten(polls []*applied) []db.PolledVessel {
	v.mu.Lock()
	defer v.mu.Unlock()
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
	return out
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
