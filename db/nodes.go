package db

import (
	"context"

	"shipgraph/model"
)

// nodeTypeQuery finds which table holds an id ($1), in one statement: ids
// are UUIDs, unique across tables, so at most one branch matches. Account
// data is scoped to the caller's account ($2); reference data is shared.
const nodeTypeQuery = `
SELECT 'account' FROM accounts WHERE id = $1 AND id = $2
UNION ALL SELECT 'user' FROM users WHERE id = $1 AND account_id = $2
UNION ALL SELECT 'shipment' FROM shipments WHERE id = $1 AND account_id = $2
UNION ALL SELECT 'container' FROM containers WHERE id = $1 AND account_id = $2
UNION ALL SELECT 'document' FROM documents WHERE id = $1 AND account_id = $2
UNION ALL SELECT 'email_submission' FROM email_submissions WHERE id = $1 AND account_id = $2
UNION ALL SELECT 'document_representation' FROM document_representations WHERE id = $1 AND account_id = $2
UNION ALL SELECT 'custom_field_definition' FROM custom_field_definitions WHERE id = $1 AND account_id = $2
UNION ALL SELECT 'custom_field_option' FROM custom_field_options WHERE id = $1 AND account_id = $2
UNION ALL SELECT 'custom_field' FROM custom_fields WHERE id = $1 AND account_id = $2
UNION ALL SELECT 'tracking_request' FROM tracking_requests WHERE id = $1 AND account_id = $2
UNION ALL SELECT 'port' FROM ports WHERE id = $1
UNION ALL SELECT 'metro_area' FROM metro_areas WHERE id = $1
UNION ALL SELECT 'terminal' FROM terminals WHERE id = $1
UNION ALL SELECT 'rail_terminal' FROM rail_terminals WHERE id = $1
UNION ALL SELECT 'shipping_line' FROM shipping_lines WHERE id = $1
LIMIT 1`

// NodeType returns the type of the record with this id (account, user,
// shipment, container, port, metro_area, terminal, rail_terminal,
// shipping_line, document, email_submission, document_representation,
// custom_field_definition, custom_field_option, custom_field,
// tracking_request), for
// Query.node. Another account's record is not found.
func (db *DB) NodeType(ctx context.Context, accountID, id string) (string, error) {
	if !validUUID(id) || !validUUID(accountID) {
		return "", model.NotFound("node")
	}
	var typ string
	if err := sqlxGet(ctx, db.read(accountID), &typ, "node", nodeTypeQuery, id, accountID); err != nil {
		return "", err
	}
	return typ, nil
}
