package resolve

import (
	"context"
	"strings"
	"unicode/utf8"

	"shipgraph/db"
	"shipgraph/load"
	"shipgraph/model"
)

// Parties: an account's customers, for /v2/parties and
// GraphQL parties/party/createParty. Any key reads them; member and admin
// keys create them (a viewer key is forbidden, as for every write).

// PartyQuery is the party list's query.
type PartyQuery = Query[NoFilter]

var parties = Kind[*model.Party, NoFilter]{
	order: model.Order{Field: "created_at"},
	list: func(s *db.DB, ctx context.Context, account string, _ NoFilter, req model.PageRequest) (*model.Page[*model.Party], error) {
		return s.ListParties(ctx, account, req)
	},
	count: func(s *db.DB, ctx context.Context, account string, _ NoFilter) (int, error) {
		return s.CountParties(ctx, account)
	},
	id:    func(p *model.Party) string { return p.ID },
	prime: func(l *load.Loaders) *load.Loader[*model.Party] { return l.PartyByID },
}

func partyLoader(l *load.Loaders) *load.Loader[*model.Party] { return l.PartyByID }

// Parties lists the account's parties, oldest first.
func (r *Resolver) Parties(ctx context.Context, p *model.Principal, q PartyQuery) (*Page[*model.Party], error) {
	return List(ctx, r, p, &parties, q)
}

// CountParties counts the account's parties.
func (r *Resolver) CountParties(ctx context.Context, p *model.Principal) (int, error) {
	p, err := model.Authenticated(p)
	if err != nil {
		return 0, err
	}
	return r.DB.CountParties(ctx, p.AccountID)
}

// Party reads one of the account's parties.
func (r *Resolver) Party(ctx context.Context, p *model.Principal, id string) (*model.Party, error) {
	return get(ctx, p, partyLoader, "party", id, nil)
}

// CreateParty is a new party; Invalid is an input error the transport
// found while decoding, reported after the key's role.
type CreateParty struct {
	Input   model.PartyInput
	Invalid error
}

// CreateParty checks c and stores the party: the rules in order are the
// role, the company name (not blank, at most 255 characters, UTF-8 without
// NUL), then the database's word on duplicates (one party per company
// name in an account, whatever its case).
func (r *Resolver) CreateParty(ctx context.Context, p *model.Principal, c CreateParty) (*model.Party, error) {
	if err := checkRequest(p, c.Invalid); err != nil {
		return nil, err
	}
	p, err := model.MayWrite(p)
	if err != nil {
		return nil, err
	}
	if c.Invalid != nil {
		return nil, c.Invalid
	}
	name, err := checkCompanyName(c.Input.CompanyName)
	if err != nil {
		return nil, err
	}
	party := &model.Party{CompanyName: name}
	if err := r.DB.CreateParty(ctx, p.AccountID, party); err != nil {
		if model.ErrorCode(err) == model.ECONFLICT {
			return nil, model.Errorf(model.ECONFLICT, "'%s' already exists in Account", name).AtField("company_name")
		}
		return nil, err
	}
	if l, err := load.For(ctx); err == nil {
		l.PartyByID.Prime(party.ID, party)
	}
	return party, nil
}

// checkCustomer reads the customer a tracking request names: a party of
// the account, else an invalid customer (422 at the relationship).
func checkCustomer(ctx context.Context, l *load.Loaders, id *string) error {
	if id == nil {
		return nil
	}
	v, err := loadByID(ctx, l.PartyByID, model.NormalizeID(*id))
	if err != nil {
		return err
	}
	if v == nil {
		return model.Errorf(model.EINVALID, "customer %s is not a party of this account", *id).AtPointer("/data/relationships/customer")
	}
	*id = v.ID
	return nil
}

// checkCompanyName is the rule of a party's company name: not blank, at
// most 255 characters, printable text (textFault); it returns the name
// trimmed.
func checkCompanyName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", invalidField("company_name", "Company name can't be blank")
	case !utf8.ValidString(name) || strings.ContainsRune(name, 0):
		return "", invalidField("company_name", "Company name must be UTF-8 text without NUL characters")
	case textFault(name) != "":
		return "", invalidField("company_name", "Company name is not valid: %s", textFault(name))
	case utf8.RuneCountInString(name) > model.PartyCompanyNameMaxLength:
		return "", invalidField("company_name", "Company name is longer than %d characters", model.PartyCompanyNameMaxLength)
	}
	return name, nil
}

// UpdateParty renames a party; Invalid as CreateParty, reported once the
// party is found.
type UpdateParty struct {
	ID      string
	Patch   model.PartyPatch
	Invalid error
}

// UpdateParty checks c and renames the party: the role, the party (404
// for another account's), the company name by CreateParty's rules and the
// database's word on duplicates.
func (r *Resolver) UpdateParty(ctx context.Context, p *model.Principal, c UpdateParty) (*model.Party, error) {
	p, l, party, err := writeTarget(ctx, p, partyLoader, c.ID, "party", c.Invalid)
	if err != nil {
		return nil, err
	}
	name, err := checkCompanyName(c.Patch.CompanyName)
	if err != nil {
		return nil, err
	}
	w, err := r.DB.RenameParty(ctx, p.AccountID, party.ID, name)
	if model.ErrorCode(err) == model.ECONFLICT {
		return nil, model.Errorf(model.ECONFLICT, "'%s' already exists in Account", name).AtField("company_name")
	}
	if err != nil {
		return nil, err
	}
	l.PartyByID.Clear(w.ID)
	l.PartyByID.Prime(w.ID, w)
	return w, nil
}
