package db

import (
	"context"
	"strings"

	"github.com/lib/pq"

	"shipgraph/model"
)

// Batch reads of reference data by natural key, for Apollo Federation's
// _entities (a port by UN/LOCODE, a shipping line by SCAC): one statement
// for any number of keys. Every column is read, whatever the request
// selects, so the caller can match the rows to the keys it was given.

// PortsByCodes returns the ports with the given UN/LOCODEs (matched
// case-insensitively; strings that cannot be one are skipped).
func (db *DB) PortsByCodes(ctx context.Context, codes []string) ([]*model.Port, error) {
	valid := make([]string, 0, len(codes))
	for _, c := range codes {
		if c = strings.ToUpper(strings.TrimSpace(c)); locode.MatchString(c) {
			valid = append(valid, c)
		}
	}
	if len(valid) == 0 {
		return nil, nil
	}
	return selectAll[model.Port](ctx, db.read(""), `SELECT `+portCols+` FROM ports p WHERE p.code = ANY($1)`, pq.Array(valid))
}

// ShippingLinesBySCACs returns the shipping lines whose SCAC, or one of
// whose alternative SCACs, is among scacs (case-insensitive).
func (db *DB) ShippingLinesBySCACs(ctx context.Context, scacs []string) ([]*model.ShippingLine, error) {
	valid := make([]string, 0, len(scacs))
	for _, s := range scacs {
		if s = strings.ToUpper(strings.TrimSpace(s)); len(s) == 4 {
			valid = append(valid, s)
		}
	}
	if len(valid) == 0 {
		return nil, nil
	}
	return selectAll[model.ShippingLine](ctx, db.read(""),
		`SELECT `+shippingLineCols+` FROM shipping_lines l WHERE l.scac = ANY($1) OR l.alternative_scacs && $1::text[] ORDER BY l.scac`, pq.Array(valid))
}
