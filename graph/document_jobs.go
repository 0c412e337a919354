package graph

import (
	"context"

	"shipgraph/model"
)

// documentJob runs one of the document job mutations with the
// request's principal and answers the document as it is now: the job's
// outcome shows on it later (and as the document.* webhook events).
func (r *mutationResolver) documentJob(ctx context.Context, id string, run func(context.Context, *model.Principal, string) error) (*model.Document, error) {
	p := who(ctx)
	if err := run(ctx, p, id); err != nil {
		return nil, err
	}
	v, err := r.Res.Document(ctx, p, model.NormalizeID(id), nil)
	return withPlan(ctx, v, err)
}
