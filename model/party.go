package model

import "time"

// PartyType is the JSON:API type of parties.
const PartyType = "party"

// PartyCompanyNameMaxLength is the longest company name (migration 00019).
const PartyCompanyNameMaxLength = 255

// Party is one of an account's customers (migration 00019): the customer of
// shipments and tracking requests.
type Party struct {
	ID          string    `db:"id"`
	AccountID   string    `db:"account_id"`
	CompanyName string    `db:"company_name" jsonapi:"company_name"`
	CreatedAt   time.Time `db:"created_at"`
	UpdatedAt   time.Time `db:"updated_at"`
}

// PartyInput is a new party.
type PartyInput struct {
	CompanyName string `json:"companyName"`
}

// PartyConnection is a page of parties (GraphQL).
type PartyConnection struct {
	Nodes    []*Party     `json:"nodes"`
	Edges    []*PartyEdge `json:"edges"`
	PageInfo *PageInfo    `json:"pageInfo"`
}

// PartyEdge is one party of a page and its cursor.
type PartyEdge struct {
	Cursor string `json:"cursor"`
	Node   *Party `json:"node"`
}

// Customer is the shipment's customer, when it has one and the plan
// loaded it.
func (s *Shipment) Customer() *Party { return s.Rel.Customer }

// Customer is the tracking request's customer, when it has one and the
// plan loaded it.
func (t *TrackingRequest) Customer() *Party { return t.Rel.Customer }

// PartyPatch renames a party (GraphQL updateParty, PATCH /v2/parties/{id}).
type PartyPatch struct {
	CompanyName string `json:"companyName"`
}
