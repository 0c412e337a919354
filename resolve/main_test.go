package resolve_test

import (
	"context"
	"errors"
	"testing"

	"shipgraph/catalog"
	"shipgraph/db"
	"shipgraph/load"
	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/testkit/pg"
)

// The tests call the resolver layer directly, as both adapters do, on a
// seeded database of their own (db/dbtest: a private PostgreSQL; db/seed:
// the demo data set, fixed seed and "now", so ids and counts are the same
// on every run). A request's context is built the way the HTTP chain
// builds it: the principal its API key authenticates as (httpapi's auth,
// db.Authenticate), then loaders of that account (resolve.Session); each call passes the
// principal explicitly.

func TestMain(m *testing.M) { pg.Main(m) }

// TestReads runs the tests that only read on one seeded database (each
// account gets a webhook first, in recordsOf): seeding is most of the cost.
func TestReads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	acme, globex := e.recordsOf("acme"), e.recordsOf("globex")
	t.Run("TenantIsolation", func(t *testing.T) { testTenantIsolation(t, e, acme, globex) })
	t.Run("PageBounds", func(t *testing.T) { testPageBounds(t, e) })
	t.Run("ListFilters", func(t *testing.T) { testListFilters(t, e) })
	t.Run("CountMatchesList", func(t *testing.T) { testCountMatchesList(t, e, acme, globex) })
}

// TestWrites runs the tests of writes on another: each checks what it
// needs unchanged against what it read first.
func TestWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	acme, globex := e.recordsOf("acme"), e.recordsOf("globex")
	t.Run("WriteErrorOrder", func(t *testing.T) { testWriteErrorOrder(t, e, acme, globex) })
	t.Run("CreateErrors", func(t *testing.T) { testCreateErrors(t, e, acme) })
	t.Run("Roles", func(t *testing.T) { testRoles(t, e, acme) })
}

// seedShipments keeps the data set small: acme gets two thirds of it.
const seedShipments = 24

type env struct {
	t     *testing.T
	store *db.DB
	r     *resolve.Resolver
	// who are the principals of the demo keys by "account/role", e.g.
	// "acme/admin".
	who map[string]*model.Principal
}

// newEnv seeds a database of the test's own and returns the resolver
// layer over it, with webhook URLs allowed on loopback (no DNS here).
func newEnv(t *testing.T) *env {
	t.Helper()
	d := pg.New(t, seedShipments)
	e := &env{t: t, store: d.Store, r: resolve.New(d.Store, resolve.Deps{}), who: d.Principals(t)}
	e.r.WebhookConfig = resolve.WebhookConfig{Limit: resolve.DefaultWebhookLimit, AllowPrivate: true}
	for _, k := range []string{"acme/admin", "acme/member", "acme/viewer", "globex/admin", "globex/member", "globex/viewer"} {
		if e.who[k] == nil || e.who[k].Role != k[len(k)-len(e.who[k].Role):] {
			t.Fatalf("seed: no %s key (%v)", k, e.who)
		}
	}
	if e.who["acme/admin"].AccountID == e.who["globex/admin"].AccountID {
		t.Fatal("seed: acme and globex share an account")
	}
	return e
}

// as is a request context of who ("acme/viewer"): its principal and a
// fresh set of loaders of its account, as each request gets.
func (e *env) as(who string) context.Context {
	p := e.who[who]
	if p == nil {
		panic("no principal " + who)
	}
	return e.r.Session(context.Background(), p)
}

// who is the principal of a context as returns, which the tests pass to
// the resolver layer as a transport does.
func who(ctx context.Context) *model.Principal { return model.PrincipalFrom(ctx) }

// wantErr fails t unless err is a *model.Error of code naming field (an
// input member; "" for none) and parameter (a page argument; "" for none).
func wantErr(t *testing.T, what string, err error, code, field, parameter string) {
	t.Helper()
	var e *model.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: error %v, want %s (field %q, parameter %q)", what, err, code, field, parameter)
		return
	}
	if e.Code != code || e.Field != field || e.Parameter != parameter || e.Message == "" {
		t.Errorf("%s: %s (field %q, parameter %q) %q, want %s (field %q, parameter %q)",
			what, e.Code, e.Field, e.Parameter, e.Message, code, field, parameter)
	}
}

// must fails t on err and returns v.
func must[T any](t *testing.T, what string) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

// unknownID is a well-formed id that names no record.
const unknownID = "00000000-0000-4000-8000-000000000000"

// records are ids of one account's records, read through the resolver
// layer as that account's admin.
type records struct {
	account                                string
	shipment, container, document          string
	definition                             string // a shipment definition of a data type without options
	enumDefinition, option                 string // an enum definition and one of its options
	value, valueSlug, valueEntity          string // a value set on a shipment, its definition's slug, the shipment
	emailSubmission                        string // "" when the account has none
	webhook                                string
	shipmentIDs, containerIDs, documentIDs []string
	definitionIDs, valueIDs, submissionIDs []string
}

// recordsOf reads the ids of who's account ("acme") and gives it a
// webhook.
func (e *env) recordsOf(account string) *records {
	t := e.t
	t.Helper()
	ctx := e.as(account + "/admin")
	all := resolve.PageArgs{First: ptr(model.MaxPageSize)}
	rec := &records{account: e.who[account+"/admin"].AccountID}
	ships := must[*resolve.Page[*model.Shipment]](t, "shipments")(e.r.Shipments(ctx, who(ctx), resolve.ShipmentQuery{Page: all}))
	for _, s := range ships.Items {
		rec.shipmentIDs = append(rec.shipmentIDs, s.ID)
	}
	conts := must[*resolve.Page[*model.Container]](t, "containers")(e.r.Containers(ctx, who(ctx), resolve.ContainerQuery{Page: all}))
	for _, c := range conts.Items {
		rec.containerIDs = append(rec.containerIDs, c.ID)
	}
	docs := must[*resolve.Page[*model.Document]](t, "documents")(e.r.Documents(ctx, who(ctx), resolve.DocumentQuery{Page: all}))
	for _, d := range docs.Items {
		rec.documentIDs = append(rec.documentIDs, d.ID)
	}
	defs := must[*resolve.Page[*model.CustomFieldDefinition]](t, "definitions")(e.r.Definitions(ctx, who(ctx), resolve.DefinitionQuery{Page: all, Plan: load.NewPlan(catalog.CustomFieldDefinition, "options")}))
	for _, d := range defs.Items {
		rec.definitionIDs = append(rec.definitionIDs, d.ID)
		switch {
		case d.DataType.HasOptions() && len(d.Options()) > 0 && rec.enumDefinition == "":
			rec.enumDefinition, rec.option = d.ID, d.Options()[0].ID
		case !d.DataType.HasOptions() && d.EntityType == "Shipment" && rec.definition == "":
			rec.definition = d.ID
		}
	}
	vals := must[*resolve.Page[*model.CustomField]](t, "custom fields")(e.r.CustomFields(ctx, who(ctx), resolve.CustomFieldQuery{Page: all}))
	for _, v := range vals.Items {
		rec.valueIDs = append(rec.valueIDs, v.ID)
		if v.ShipmentID != nil && rec.value == "" {
			rec.value, rec.valueSlug, rec.valueEntity = v.ID, v.APISlug, v.EntityID
		}
	}
	subs := must[*resolve.Page[*model.EmailSubmission]](t, "email submissions")(e.r.EmailSubmissions(ctx, who(ctx), resolve.EmailSubmissionQuery{Page: all}))
	for _, s := range subs.Items {
		rec.submissionIDs = append(rec.submissionIDs, s.ID)
	}
	if len(rec.submissionIDs) > 0 {
		rec.emailSubmission = rec.submissionIDs[0]
	}
	if len(rec.shipmentIDs) == 0 || len(rec.containerIDs) == 0 || len(rec.documentIDs) == 0 ||
		rec.definition == "" || rec.enumDefinition == "" || rec.value == "" {
		t.Fatalf("seed: %s lacks a record the tests need: %+v", account, rec)
	}
	rec.shipment, rec.container, rec.document = rec.shipmentIDs[0], rec.containerIDs[0], rec.documentIDs[0]
	w := must[*model.Webhook](t, "create webhook")(e.r.CreateWebhook(ctx, who(ctx), resolve.CreateWebhook{Input: model.WebhookInput{
		URL: "http://127.0.0.1:9/" + account, Events: []string{"container.updated"}}}))
	rec.webhook = w.ID
	return rec
}

func ptr[T any](v T) *T { return &v }
