package resolve

import (
	"context"
	"slices"
	"strings"

	"shipgraph/db"
	"shipgraph/model"
)

// Data sync destinations (package datasync): an account's exports of its
// tracking data to its own database. Admin keys only, reads included (the
// URL names the customer's database); a member or viewer key is
// FORBIDDEN before anything else is looked at. The URL's password is
// never shown: it is stored sealed, and answers show the URL without it.

// DataSync is what the resolver layer uses of the data sync.
type DataSync interface {
	// Check checks a destination's kind and URL and returns the URL as
	// shown (no password).
	Check(ctx context.Context, kind, url string) (string, error)
	// Seal encrypts the URL for storage.
	Seal(url string) ([]byte, error)
	// Enqueue makes sure the destination's job exists.
	Enqueue(ctx context.Context, accountID, id string) error
}

func (r *Resolver) syncAdmin(p *model.Principal) (*model.Principal, error) {
	p, err := authenticated(p)
	if err != nil {
		return nil, err
	}
	if p.Role != model.RoleAdmin {
		return nil, model.Errorf(model.EFORBIDDEN, "sync destinations are managed by admin keys only; this API key has the %s role", p.Role)
	}
	if r.DataSync == nil {
		return nil, model.Errorf(model.EUNAVAILABLE, "the data sync is not configured on this server")
	}
	return p, nil
}

// SyncTableNames are the tables a destination may ask for.
func SyncTableNames() []string {
	var out []string
	for _, t := range db.SyncTables() {
		out = append(out, t.Name)
	}
	return out
}

// CreateSyncDestination adds a destination and starts its sync.
func (r *Resolver) CreateSyncDestination(ctx context.Context, p *model.Principal, in model.SyncDestinationInput) (*model.SyncDestination, error) {
	p, err := r.syncAdmin(p)
	if err != nil {
		return nil, err
	}
	if len(in.Name) > 200 {
		return nil, model.Errorf(model.EINVALID, "name is at most 200 characters").AtField("name")
	}
	names := SyncTableNames()
	if len(in.Tables) == 0 {
		in.Tables = names
	}
	var tables []string
	for _, t := range in.Tables {
		if !slices.Contains(names, t) {
			return nil, model.Errorf(model.EINVALID, "tables: unknown table %q; known: %s", t, strings.Join(names, ", ")).AtField("tables")
		}
		if !slices.Contains(tables, t) {
			tables = append(tables, t)
		}
	}
	shown, err := r.DataSync.Check(ctx, in.Kind, in.URL)
	if err != nil {
		return nil, err
	}
	sealed, err := r.DataSync.Seal(strings.TrimSpace(in.URL))
	if err != nil {
		return nil, model.Errorf(model.EUNAVAILABLE, "destinations cannot be stored: %v", err)
	}
	d, err := r.DB.CreateSyncDestination(ctx, model.SyncDestination{AccountID: p.AccountID, Name: in.Name, Kind: in.Kind, URL: shown, Tables: tables}, sealed)
	if err != nil {
		return nil, err
	}
	if err := r.DataSync.Enqueue(ctx, p.AccountID, d.ID); err != nil {
		return nil, err
	}
	return r.withStatus(ctx, d)
}

func (r *Resolver) withStatus(ctx context.Context, d *model.SyncDestination) (*model.SyncDestination, error) {
	st, err := r.DB.SyncStatuses(ctx, d.AccountID, d.ID, nil)
	if err != nil {
		return nil, err
	}
	head, err := r.DB.SyncLogHead(ctx, d.AccountID)
	if err != nil {
		return nil, err
	}
	d.Status = make([]model.SyncTableStatus, 0, len(d.Tables))
	for _, t := range d.Tables {
		s := model.SyncTableStatus{Table: t, Phase: "backfill", BackfillHead: -1, Lag: head}
		for _, x := range st {
			if x.Table == t {
				s = x
				s.Lag = max(0, head-x.Pos)
			}
		}
		d.Status = append(d.Status, s)
	}
	return d, nil
}

// SyncDestinations lists the account's destinations with their status.
func (r *Resolver) SyncDestinations(ctx context.Context, p *model.Principal) ([]*model.SyncDestination, error) {
	p, err := r.syncAdmin(p)
	if err != nil {
		return nil, err
	}
	ds, err := r.DB.SyncDestinations(ctx, p.AccountID)
	if err != nil {
		return nil, err
	}
	out := make([]*model.SyncDestination, 0, len(ds))
	for i := range ds {
		d, err := r.withStatus(ctx, &ds[i])
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// SyncDestination reads one destination with its status.
func (r *Resolver) SyncDestination(ctx context.Context, p *model.Principal, id string) (*model.SyncDestination, error) {
	p, err := r.syncAdmin(p)
	if err != nil {
		return nil, err
	}
	d, err := r.DB.GetSyncDestination(ctx, p.AccountID, id)
	if err != nil {
		return nil, err
	}
	return r.withStatus(ctx, d)
}

// SyncDestinationAction is what PauseSyncDestination and its siblings do.
type SyncDestinationAction string

// The actions on a destination.
const (
	SyncPause  SyncDestinationAction = "pause"
	SyncResume SyncDestinationAction = "resume"
	SyncResync SyncDestinationAction = "resync"
)

// ActOnSyncDestination pauses, resumes or re-syncs from scratch a
// destination.
func (r *Resolver) ActOnSyncDestination(ctx context.Context, p *model.Principal, id string, a SyncDestinationAction) (*model.SyncDestination, error) {
	p, err := r.syncAdmin(p)
	if err != nil {
		return nil, err
	}
	var d *model.SyncDestination
	switch a {
	case SyncPause:
		d, err = r.DB.PauseSyncDestination(ctx, p.AccountID, id, true)
	case SyncResume:
		d, err = r.DB.PauseSyncDestination(ctx, p.AccountID, id, false)
	case SyncResync:
		d, err = r.DB.ResyncSyncDestination(ctx, p.AccountID, id)
	default:
		return nil, model.Errorf(model.EINVALID, "unknown action %q", a)
	}
	if err != nil {
		return nil, err
	}
	if !d.Paused {
		if err := r.DataSync.Enqueue(ctx, p.AccountID, d.ID); err != nil {
			return nil, err
		}
	}
	return r.withStatus(ctx, d)
}

// DeleteSyncDestination removes a destination (its job ends; the
// destination's tables stay as they are).
func (r *Resolver) DeleteSyncDestination(ctx context.Context, p *model.Principal, id string) error {
	p, err := r.syncAdmin(p)
	if err != nil {
		return err
	}
	return r.DB.DeleteSyncDestination(ctx, p.AccountID, id)
}
