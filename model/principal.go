package model

import "context"

// Roles of a user and of an API key.
const (
	RoleAdmin  = "admin"
	RoleMember = "member"
	RoleViewer = "viewer"
)

// ValidRole reports whether r is one of the three roles.
func ValidRole(r string) bool {
	return r == RoleAdmin || r == RoleMember || r == RoleViewer
}

// Principal is who a request acts for: resolved from the API key by the
// auth middleware, read by every resolver to scope data and check writes.
type Principal struct {
	TokenID   string
	AccountID string
	UserID    *string
	Role      string
}

// CanWrite reports whether the principal has the update permission:
// admins and members may change data, viewers may only read.
func (p *Principal) CanWrite() bool {
	return p != nil && (p.Role == RoleAdmin || p.Role == RoleMember)
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal of ctx, or nil.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// Authenticated is p, or the unauthenticated error when there is none (an
// anonymous request).
func Authenticated(p *Principal) (*Principal, error) {
	if p == nil {
		return nil, Errorf(EUNAUTHENTICATED, "a valid API key is required")
	}
	return p, nil
}

// MayWrite is p if it may change data: the unauthenticated error without
// one, the forbidden one for a viewer's key.
func MayWrite(p *Principal) (*Principal, error) {
	if _, err := Authenticated(p); err != nil {
		return nil, err
	}
	if !p.CanWrite() {
		return nil, Errorf(EFORBIDDEN, "this API key has the %s role and may not change data", p.Role)
	}
	return p, nil
}
