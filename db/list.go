package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"shipgraph/model"
)

// Shared machinery of the store: id validation, filter building and the
// keyset/numbered pagination used by every list.

// Linked is one row of a to-many relationship read through a join table:
// the item and the parent key it was read for, so a loader can group rows.
type Linked[T any] struct {
	ParentID string
	Item     T
}

// ---------------------------------------------------------------- ids

// validUUID reports whether s is a UUID in canonical 8-4-4-4-12 form. Ids
// that are not UUIDs cannot exist, and sending them would make PostgreSQL
// fail the whole statement (22P02), so they are answered without SQL.
func validUUID(s string) bool {
	ok, _ := uuidForm(s)
	return ok
}

// uuidForm reports whether s is a UUID in canonical form, and whether it
// has upper-case digits: one pass over a table instead of a switch per
// byte (a dashboard checks some 300 ids).
func uuidForm(s string) (valid, upper bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return false, false
	}
	var kinds, dashes uint8
	for i := 0; i < len(s); i++ {
		k := uuidChars[s[i]]
		if k == 0 {
			return false, false
		}
		kinds |= k
		dashes += k >> 2
	}
	return dashes == 4, dashes == 4 && kinds&2 != 0
}

// uuidChars classes the bytes of a UUID: 1 a lower-case hex digit or a
// decimal one, 2 an upper-case hex digit, 4 the dash (four of them, at
// the places uuidForm checks), 0 anything else.
var uuidChars = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = 1
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = 1
		t[c-'a'+'A'] = 2
	}
	t['-'] = 4
	return t
}()

// validUUIDs returns the ids that are UUIDs, lower-cased like PostgreSQL
// prints them (so callers can match returned rows to requested keys).
func validUUIDs(ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if ok, upper := uuidForm(id); ok {
			if upper {
				id = strings.ToLower(id)
			}
			out = append(out, id)
		}
	}
	return out
}

// uuidArray is valid, lower-case UUIDs (validUUIDs) as an array
// parameter, written into one buffer: they need no quoting, where
// pq.Array's StringArray copies and quotes each one (a batch read's
// largest cost before its statement).
type uuidArray []string

func (a uuidArray) Value() (driver.Value, error) {
	b := make([]byte, 0, 2+37*len(a))
	b = append(b, '{')
	for i, s := range a {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, s...)
	}
	return string(append(b, '}')), nil
}

// ---------------------------------------------------------------- statements

// selectAll runs a read through q (the counting pool or a transaction).
func selectAll[T any](ctx context.Context, q sqlx.QueryerContext, query string, args ...any) ([]*T, error) {
	var out []*T
	var err error
	if isStruct[T]() {
		err = selectOwned(ctx, q, func(v *T) { out = append(out, v) }, query, args...)
	} else {
		err = sqlx.SelectContext(ctx, q, &out, query, args...)
	}
	if err != nil {
		return nil, mapErr(err)
	}
	return out, nil
}

// getOne reads one row; no row is a not-found error naming kind.
func getOne[T any](ctx context.Context, q sqlx.QueryerContext, kind string, query string, args ...any) (*T, error) {
	var v T
	if err := sqlx.GetContext(ctx, q, &v, query, args...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, model.NotFound(kind)
		}
		return nil, mapErr(err)
	}
	return &v, nil
}

// byIDs is the shape of every batch read: $1 is the id list, $2 the
// account when scope is given. Ids that are not UUIDs are skipped, and no
// statement is sent when none is left (nor for a malformed account id).
func byIDs[T any](ctx context.Context, q sqlx.QueryerContext, query string, ids []string, scope ...string) ([]*T, error) {
	valid := validUUIDs(ids)
	if len(valid) == 0 {
		return nil, nil
	}
	args := []any{uuidArray(valid)}
	for _, s := range scope {
		if !validUUID(s) {
			return nil, nil
		}
		args = append(args, s)
	}
	return selectAll[T](ctx, q, query, args...)
}

// byParentIDs reads a to-many relationship through a join table ($1: the
// parent ids, $2: the account) into scan rows R and returns parent-keyed
// items made by linked.
func byParentIDs[R any, T any](ctx context.Context, q sqlx.QueryerContext, query, accountID string, parentIDs []string, linked func(R) Linked[T]) ([]Linked[T], error) {
	valid := validUUIDs(parentIDs)
	if len(valid) == 0 || !validUUID(accountID) {
		return nil, nil
	}
	out := []Linked[T]{}
	if err := selectRows(ctx, q, func(r *R) { out = append(out, linked(*r)) }, query, uuidArray(valid), accountID); err != nil {
		return nil, mapErr(err)
	}
	return out, nil
}

// ---------------------------------------------------------------- filters

// conds collects the WHERE clauses of a list and their bind parameters:
// user input only ever reaches SQL as a parameter.
type conds struct {
	where []string
	args  []any
}

// arg binds v and returns its placeholder.
func (c *conds) arg(v any) string {
	c.args = append(c.args, v)
	return "$" + strconv.Itoa(len(c.args))
}

// add appends a clause; each %s in format is replaced by the placeholder of
// the matching value (use %[1]s to repeat one).
func (c *conds) add(format string, values ...any) {
	ph := make([]any, len(values))
	for i, v := range values {
		ph[i] = c.arg(v)
	}
	c.where = append(c.where, fmt.Sprintf(format, ph...))
}

func (c *conds) sql() string {
	if len(c.where) == 0 {
		return "true"
	}
	return strings.Join(c.where, " AND ")
}

// escapeLike makes s match literally inside a LIKE pattern (ESCAPE '\').
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// normalizeNumber is how tracked numbers and reference tokens are compared:
// trimmed and upper-cased, matched against upper(column).
func normalizeNumber(s string) string { return strings.ToUpper(strings.TrimSpace(s)) }

// ---------------------------------------------------------------- pages

// sortSpec is one allow-listed ordering of a list.
type sortSpec struct {
	// expr is the SQL sort expression. Nullable timestamps go through
	// coalesce(col, 'infinity') so keyset row comparisons never meet a
	// NULL, unknown dates sort last ascending, and the expression indexes of
	// the migration apply.
	expr string
	// typ is the SQL type of expr: "timestamptz" or "text".
	typ string
}

// listSpec describes one list: its table, columns and orderings.
type listSpec struct {
	plural string // "shipments", for messages
	from   string // table with the alias used by cols, e.g. "shipments s"
	alias  string
	cols   string
	orders map[string]sortSpec
	// counted names the list in list_counts, where triggers keep each
	// account's row count (migration 00003); "" = always count(*).
	counted string
}

// pageMeta is scanned with every list row: the cursor key as text, the raw
// sort value (to order the final union) and which part of the statement the
// row came from.
type pageMeta struct {
	Part    int     `db:"page_part"`
	SortKey *string `db:"sort_key"`
	SortVal any     `db:"sort_val"` // only when the statement has probes
}

// Parts of a page statement: the page itself, then the probes that tell
// whether anything lies before the after-cursor or after the before-cursor.
const (
	partPage = iota
	partBeforeAfter
	partAfterBefore
)

// pageStmt is a page statement ready to send.
type pageStmt struct {
	query   string
	args    []any
	limit   int
	reverse bool // read from the end (last): the extra row is the first
	offset  int
	// inReadingOrder: rows come in reading order (no outer ORDER BY).
	inReadingOrder bool
}

// defaultOrder is used when a caller leaves Order.Field empty.
const defaultOrder = "created_at"

func (s *listSpec) sort(o model.Order) (sortSpec, error) {
	field := o.Field
	if field == "" {
		field = defaultOrder
	}
	spec, ok := s.orders[field]
	if !ok {
		return sortSpec{}, model.Errorf(model.EINVALID, "%s cannot be ordered by %q", s.plural, o.Field)
	}
	return spec, nil
}

// checkPage validates the parts of a page request that do not depend on SQL.
func checkPage(p model.PageRequest) error {
	if p.Limit < 1 || p.Limit > model.MaxPageSize {
		return model.Errorf(model.EINVALID, "page size must be between 1 and %d", model.MaxPageSize)
	}
	if p.Offset < 0 || p.Offset > model.MaxPageOffset {
		return model.Errorf(model.EINVALID, "page offset must be between 0 and %d", model.MaxPageOffset)
	}
	if p.Offset > 0 && (p.After != nil || p.Before != nil || p.FromEnd) {
		return model.Errorf(model.EINVALID, "a numbered page cannot be combined with cursors")
	}
	return nil
}

// cursorArgs checks a cursor against the ordering and binds its key and id.
// A cursor is opaque to clients but still user input: a key that does not
// parse as the sort type is refused here rather than failing in SQL.
func cursorArgs(c *model.Cursor, o model.Order, spec sortSpec) (key, id any, err error) {
	bad := model.Errorf(model.EINVALID, "cursor is not valid")
	if c.Order != o.Name() || c.Key == nil || !validUUID(c.ID) {
		return nil, nil, bad
	}
	if spec.typ == "timestamptz" && *c.Key != "infinity" && *c.Key != "-infinity" {
		if _, err := time.Parse(time.RFC3339Nano, *c.Key); err != nil {
			return nil, nil, bad
		}
	}
	return *c.Key, c.ID, nil
}

// pageQuery builds the statement of one page, with Relay's semantics: the
// cursors bound the list (After and Before may be combined), and the rows
// are taken from the start of what is left, or from its end when FromEnd
// (`last`). The page rows are read in that direction with LIMIT n+1 (the
// extra row says whether more rows follow); each cursor adds a one-row probe
// (UNION ALL) on its other side, so HasPrevious after `after` and HasNext
// before `before` are exact without a second round trip. The outer ORDER BY
// puts every row back in list order.
//
// cols is the select list of the page rows (s.cols, or a narrower list of
// DB.cols that keeps the id).
func (s *listSpec) pageQuery(filter *conds, p model.PageRequest, cols string) (*pageStmt, error) {
	if err := checkPage(p); err != nil {
		return nil, err
	}
	spec, err := s.sort(p.Order)
	if err != nil {
		return nil, err
	}
	reverse := p.FromEnd
	dir := func(desc bool) string {
		if desc {
			return "DESC"
		}
		return "ASC"
	}
	// greater is the row comparison that means "later in list order".
	greater, less := ">", "<"
	if p.Order.Desc {
		greater, less = "<", ">"
	}

	c := &conds{args: slices.Clone(filter.args), where: slices.Clone(filter.where)}
	var keyset []string
	type probe struct {
		part int
		cond string
		desc bool // order of the probe: nearest to the cursor first
	}
	var probes []probe
	row := fmt.Sprintf("(%s, %s.id)", spec.expr, s.alias)
	if p.After != nil {
		k, id, err := cursorArgs(p.After, p.Order, spec)
		if err != nil {
			return nil, err
		}
		cur := fmt.Sprintf("(%s::%s, %s::uuid)", c.arg(k), spec.typ, c.arg(id))
		keyset = append(keyset, row+" "+greater+" "+cur)
		// Rows at or before the cursor, nearest first.
		probes = append(probes, probe{partBeforeAfter, row + " " + less + "= " + cur, !p.Order.Desc})
	}
	if p.Before != nil {
		k, id, err := cursorArgs(p.Before, p.Order, spec)
		if err != nil {
			return nil, err
		}
		cur := fmt.Sprintf("(%s::%s, %s::uuid)", c.arg(k), spec.typ, c.arg(id))
		keyset = append(keyset, row+" "+less+" "+cur)
		probes = append(probes, probe{partAfterBefore, row + " " + greater + "= " + cur, p.Order.Desc})
	}

	sortKey := spec.expr
	if spec.typ == "timestamptz" {
		// JSON renders timestamps as ISO 8601 whatever the session's
		// DateStyle, so cursors stay valid across connections. jsonb's
		// text of the same value, not json's: to_json writes the JSON
		// string and #>> parses it again, to_jsonb keeps the string and
		// #>> takes it (the same text; a third of the page statement's
		// PostgreSQL instructions with to_json, docs/scale.md stop 42).
		sortKey = fmt.Sprintf("to_jsonb(%s) #>> '{}'", spec.expr)
	}
	// sort_val orders the union of the page and its probes; a page
	// without probes is one SELECT in reading order and needs none (a
	// second copy of a timestamp per row for nothing).
	sortVal := ""
	if len(probes) > 0 {
		sortVal = fmt.Sprintf(", %s AS sort_val", spec.expr)
	}
	branch := func(part int, where string, desc bool, limit string) string {
		return fmt.Sprintf("(SELECT %s, %s AS sort_key%s, %d AS page_part FROM %s WHERE %s ORDER BY %s %s, %s.id %s LIMIT %s)",
			cols, sortKey, sortVal, part, s.from, where, spec.expr, dir(desc), s.alias, dir(desc), limit)
	}

	where := c.sql()
	if len(keyset) > 0 {
		where += " AND " + strings.Join(keyset, " AND ")
	}
	limit := c.arg(p.Limit + 1)
	if p.Offset > 0 {
		limit += " OFFSET " + c.arg(p.Offset)
	}
	parts := []string{branch(partPage, where, p.Order.Desc != reverse, limit)}
	if p.Offset == 0 && accountOnly(filter, s.alias) {
		// The page of a list filtered by its account alone (the dashboard's,
		// an include list's) is read under a constant bound, the largest
		// page, and the page's own size outside it. Prepared, the statement
		// is then planned once per connection: with the size a parameter,
		// PostgreSQL's generic plan assumes a tenth of the account's rows
		// are wanted, costs far more than a plan for the bound value, and
		// the statement was planned anew on every run (its planning cost
		// as much as its execution). Its plan is the same for any account
		// and any cursor (the list's index, in order, stopped after the
		// page), so the plan made once fits every run; a filtered list
		// keeps a plan for its values (a rare status wants another index).
		// The subquery's rows come out in its order.
		parts[0] = fmt.Sprintf("(SELECT p.* FROM %s p LIMIT %s)",
			branch(partPage, where, p.Order.Desc != reverse, strconv.Itoa(model.MaxPageSize+1)), limit)
	}
	if p.Offset > 0 {
		// A numbered page skips its offset in the list's (account, sort,
		// id) index alone — index-only where the sort is a column — and
		// reads the full rows of the page only: skipping whole rows cost
		// a heap fetch each (EXPLAIN: 360 ms for 150,000 skipped documents
		// against 35 ms in the index). model.MaxPageOffset bounds the skip.
		// The rows are found again by their key, (account_id, id), in the
		// account (a list's first clause, as count assumes): every scan of
		// account data names the account (docs/scaling.md), and a generic
		// plan, not knowing the limit, reads one account's index at worst.
		// Reference lists (shipping lines) have no account: by id alone.
		d := dir(p.Order.Desc != reverse)
		outer, key := "", s.alias+".id"
		if len(filter.where) > 0 && strings.HasPrefix(filter.where[0], s.alias+".account_id = ") {
			outer, key = filter.where[0]+" AND ", "("+s.alias+".account_id, "+s.alias+".id)"
		}
		parts[0] = fmt.Sprintf("(SELECT %s, %s AS sort_key%s, %d AS page_part FROM %s WHERE %s%s IN "+
			"(SELECT %s FROM %s WHERE %s ORDER BY %s %s, %s.id %s LIMIT %s) ORDER BY %s %s, %s.id %s)",
			cols, sortKey, sortVal, partPage, s.from, outer, key,
			strings.Trim(key, "()"), s.from, where, spec.expr, d, s.alias, d, limit,
			spec.expr, d, s.alias, d)
	}
	for _, pr := range probes {
		parts = append(parts, branch(pr.part, c.sql()+" AND "+pr.cond, pr.desc, "1"))
	}
	st := &pageStmt{args: c.args, limit: p.Limit, reverse: reverse, offset: p.Offset}
	if len(parts) == 1 {
		// PostgreSQL refuses a second ORDER BY on a lone parenthesized
		// SELECT; its rows come in reading order, put back in list order
		// by readPage.
		st.query = strings.TrimSuffix(strings.TrimPrefix(parts[0], "("), ")")
		st.inReadingOrder = true
	} else {
		st.query = strings.Join(parts, " UNION ALL ") +
			fmt.Sprintf(" ORDER BY sort_val %s, id %s", dir(p.Order.Desc), dir(p.Order.Desc))
	}
	return st, nil
}

// accountOnly reports whether a list's filter is its account alone (its
// first clause, as count assumes) or nothing (a reference list).
func accountOnly(filter *conds, alias string) bool {
	switch len(filter.where) {
	case 0:
		return true
	case 1:
		return strings.HasPrefix(filter.where[0], alias+".account_id = ")
	}
	return false
}

// readPage runs a page statement and splits page rows from probe rows.
// meta returns the item and the list metadata of a scanned row.
func readPage[R any, T any](ctx context.Context, q sqlx.QueryerContext, st *pageStmt, meta func(*R) (T, *pageMeta)) (*model.Page[T], error) {
	var rows []*R
	if err := selectOwned(ctx, q, func(r *R) { rows = append(rows, r) }, st.query, st.args...); err != nil {
		return nil, mapErr(err)
	}
	page := &model.Page[T]{Items: []T{}, Keys: []*string{}, HasPrevious: st.offset > 0}
	if st.inReadingOrder && st.reverse {
		slices.Reverse(rows)
	}
	var items []T
	var keys []*string
	for _, r := range rows {
		item, m := meta(r)
		switch m.Part {
		case partPage:
			items = append(items, item)
			keys = append(keys, m.SortKey)
		case partBeforeAfter:
			page.HasPrevious = true
		case partAfterBefore:
			page.HasNext = true
		}
	}
	if len(items) > st.limit {
		// The extra row is the last one in reading direction.
		if st.reverse {
			items, keys = items[1:], keys[1:]
			page.HasPrevious = true
		} else {
			items, keys = items[:st.limit], keys[:st.limit]
			page.HasNext = true
		}
	}
	if items != nil {
		page.Items, page.Keys = items, keys
	}
	return page, nil
}

// count returns the number of rows of a list that match filter. The
// unfiltered total of a counted list (the filter is the account alone, its
// first clause) is read from list_counts: one index lookup instead of a
// scan of every row of the account. Anything else runs SELECT count(*).
func count(ctx context.Context, q sqlx.QueryerContext, s *listSpec, filter *conds) (int, error) {
	var n int
	var err error
	if s.counted != "" && len(filter.where) == 1 {
		err = sqlx.GetContext(ctx, q, &n,
			"SELECT coalesce((SELECT sum(n) FROM list_counts WHERE account_id = $1 AND list = $2), 0)::bigint", filter.args[0], s.counted)
	} else {
		err = sqlx.GetContext(ctx, q, &n, "SELECT count(*) FROM "+s.from+" WHERE "+filter.sql(), filter.args...)
	}
	return n, mapErr(err)
}
