package resolve

import (
	"context"

	"shipgraph/load"
	"shipgraph/model"
)

// UpdateContainer changes a container's reference numbers (PATCH
// /v2/containers/{id}, GraphQL updateContainer): absent keeps them, null
// (or an empty list) clears them. Invalid is an input error the transport
// found while decoding, reported once the container is found.
type UpdateContainer struct {
	ID         string
	RefNumbers model.Optional[[]string]
	Invalid    error
}

// UpdateContainer runs c and returns the container written: the role, the
// container (404 for another account's), the reference numbers by the
// rules of a shipment's (checkStrings).
func (r *Resolver) UpdateContainer(ctx context.Context, p *model.Principal, c UpdateContainer) (*model.Container, error) {
	p, l, box, err := writeTarget(ctx, p, func(l *load.Loaders) *load.Loader[*model.Container] { return l.ContainerByID }, c.ID, "container", c.Invalid)
	if err != nil {
		return nil, err
	}
	v, set := c.RefNumbers.ValueOK()
	if !set {
		return box, nil
	}
	refs, err := checkStrings("ref_numbers", v)
	if err != nil {
		return nil, err
	}
	w, err := r.DB.UpdateContainerRefNumbers(ctx, p.AccountID, box.ID, refs)
	if err != nil {
		return nil, err
	}
	l.ContainerByID.Clear(w.ID)
	l.ContainerByID.Prime(w.ID, w)
	return w, nil
}
