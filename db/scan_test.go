package db_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"shipgraph/db"
	"shipgraph/db/seed"
	"shipgraph/model"
)

// The row plans of scan.go read every model type exactly as sqlx reads it:
// over the seeded data (NULLs, empty and filled arrays, jsonb, enums,
// numbers), with the whole column list and with every column alone.
func TestRowPlansMatchSqlx(t *testing.T) {
	d := openDB(t)
	ctx := context.Background()
	if _, _, err := seed.Run(ctx, d, seed.Options{Shipments: 60, Seed: 1, Now: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	from := map[string]string{
		"Account":                "accounts a",
		"User":                   "users u",
		"APIToken":               "api_tokens t",
		"Port":                   "ports p",
		"MetroArea":              "metro_areas m",
		"Terminal":               "terminals t",
		"RailTerminal":           "rail_terminals r",
		"ShippingLine":           "shipping_lines l",
		"Shipment":               "shipments s",
		"Container":              "containers c",
		"Document":               "documents d",
		"EmailSubmission":        "email_submissions e",
		"DocumentRepresentation": "document_representations r",
		"CustomFieldDefinition":  "custom_field_definitions d",
		"CustomFieldOption":      "custom_field_options o",
		"CustomField":            "custom_fields cf" + db.CustomFieldFrom,
	}
	// Custom fields are read per account, as the store reads them (on
	// Citus their option labels' subquery runs on one shard only).
	var acct string
	if err := d.SQL().QueryRowContext(ctx, `SELECT account_id FROM custom_fields ORDER BY account_id LIMIT 1`).Scan(&acct); err != nil {
		t.Fatal(err)
	}
	from["CustomField"] += " WHERE cf.account_id = " + pq.QuoteLiteral(acct)
	checks := map[string]func(t *testing.T, query string) int{
		"Account":                compareScans[model.Account](d),
		"User":                   compareScans[model.User](d),
		"APIToken":               compareScans[model.APIToken](d),
		"Port":                   compareScans[model.Port](d),
		"MetroArea":              compareScans[model.MetroArea](d),
		"Terminal":               compareScans[model.Terminal](d),
		"RailTerminal":           compareScans[model.RailTerminal](d),
		"ShippingLine":           compareScans[model.ShippingLine](d),
		"Shipment":               compareScans[model.Shipment](d),
		"Container":              compareScans[model.Container](d),
		"Document":               compareScans[model.Document](d),
		"EmailSubmission":        compareScans[model.EmailSubmission](d),
		"DocumentRepresentation": compareScans[model.DocumentRepresentation](d),
		"CustomFieldDefinition":  compareScans[model.CustomFieldDefinition](d),
		"CustomFieldOption":      compareScans[model.CustomFieldOption](d),
		"CustomField":            compareScans[model.CustomField](d),
	}
	for typ, cols := range db.Columns {
		check, ok := checks[typ]
		if !ok {
			t.Fatalf("no check for %s", typ)
		}
		t.Run(typ, func(t *testing.T) {
			// Both reads in one order: on Citus each shard answers in
			// its own order, and rows are compared by index.
			order := " ORDER BY " + strings.Fields(from[typ])[1] + ".id"
			if n := check(t, "SELECT "+cols+" FROM "+from[typ]+order); n == 0 {
				t.Fatalf("no %s rows", typ)
			}
			items := db.SelectItems(cols)
			for _, it := range items {
				check(t, "SELECT "+it+" FROM "+from[typ]+order+" LIMIT 50")
			}
		})
	}
}

func compareScans[R any](d *db.DB) func(t *testing.T, query string) int {
	return func(t *testing.T, query string) int {
		t.Helper()
		plans, viaSqlx, err := db.ScanBoth[R](context.Background(), d, query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		if len(plans) != len(viaSqlx) {
			t.Fatalf("%s: %d rows, sqlx %d", query, len(plans), len(viaSqlx))
		}
		for i := range plans {
			if !reflect.DeepEqual(plans[i], viaSqlx[i]) {
				t.Fatalf("%s: row %d:\n plans %+v\n  sqlx %+v", query, i, plans[i], viaSqlx[i])
			}
		}
		return len(plans)
	}
}

// A column no field takes is an error, as with sqlx.
func TestRowPlansRefuseUnknownColumns(t *testing.T) {
	d := openDB(t)
	_, _, err := db.ScanBoth[model.Port](context.Background(), d, "SELECT 1 AS nothing")
	if err == nil || !strings.Contains(err.Error(), "missing destination name nothing") {
		t.Fatalf("err = %v", err)
	}
}
