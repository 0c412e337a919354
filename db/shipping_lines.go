package db

import (
	"context"
	"strings"

	"shipgraph/model"
)

// Shipping lines as a list: reference data, created together, so
// listed by SCAC rather than by age.

var shippingLineList = &listSpec{
	plural: "shipping lines",
	from:   "shipping_lines l",
	alias:  "l",
	cols:   shippingLineCols,
	orders: map[string]sortSpec{
		"scac": {expr: "l.scac", typ: "text"},
	},
}

type shippingLineRow struct {
	model.ShippingLine
	pageMeta
}

// ListShippingLines reads one page of the shipping lines.
func (db *DB) ListShippingLines(ctx context.Context, p model.PageRequest) (*model.Page[*model.ShippingLine], error) {
	st, err := shippingLineList.pageQuery(&conds{}, p, shippingLineList.cols)
	if err != nil {
		return nil, err
	}
	return readPage(ctx, db.read(""), st, func(r *shippingLineRow) (*model.ShippingLine, *pageMeta) {
		return &r.ShippingLine, &r.pageMeta
	})
}

// CountShippingLines counts the shipping lines.
func (db *DB) CountShippingLines(ctx context.Context) (int, error) {
	return count(ctx, db.read(""), shippingLineList, &conds{})
}

// FindShippingLineBySCAC returns the line with a SCAC (case-insensitive),
// its own or one of its alternatives.
func (db *DB) FindShippingLineBySCAC(ctx context.Context, scac string) (*model.ShippingLine, error) {
	scac = strings.ToUpper(strings.TrimSpace(scac))
	if len(scac) != 4 {
		return nil, model.NotFound("shipping line")
	}
	return getOne[model.ShippingLine](ctx, db.read(""), "shipping line",
		`SELECT `+shippingLineCols+` FROM shipping_lines l WHERE l.scac = $1 OR $1 = ANY(l.alternative_scacs)
		 ORDER BY l.scac = $1 DESC LIMIT 1`, scac)
}

// ShippingLinesForNumber reads the lines a tracking number may belong to
// (infer_number): those whose SCAC, an alternative SCAC or bill of lading
// prefix starts the number, and those whose SCAC shares the number's first
// three letters (a container owner code's). number is normalised (upper
// case, no spaces).
func (db *DB) ShippingLinesForNumber(ctx context.Context, number string) ([]*model.ShippingLine, error) {
	if number == "" {
		return nil, nil
	}
	return selectAll[model.ShippingLine](ctx, db.read(""),
		`SELECT `+shippingLineCols+` FROM shipping_lines l
		 WHERE left($1, 4) = l.scac OR left($1, 4) = ANY(l.alternative_scacs)
		    OR (l.bill_of_lading_prefix <> '' AND left($1, length(l.bill_of_lading_prefix)) = l.bill_of_lading_prefix)
		    OR left(l.scac, 3) = left($1, 3)
		 ORDER BY l.scac`, number)
}
