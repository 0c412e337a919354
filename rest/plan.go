package rest

import (
	"sync"

	"shipgraph/catalog"
	"shipgraph/resolve"
)

// The load plan of a /v2 response, built as GraphQL builds its own from a
// selection and handed to the resolver layer the same way (a list's
// Query.Plan, a get's plan argument; resolve.Load after a write): the
// relationships every rendered resource shows (the included ones, and the
// linkage of each to-many relationship, through its linkage-only variant
// when not included) and the columns of the fieldsets (storeFields), in
// the catalogue's terms. resolve selects the columns before it reads and
// runs the relationships on what it read; the renderers only read what is
// attached.

// planOf is the plan of a response whose primary data has shape s (nil: a
// type without relationships) with the includes and fieldsets of p.
func planOf(s *shape, p *params) *resolve.Plan {
	plan := &resolve.Plan{Fields: p.storeFields()}
	if s != nil {
		planRels(plan, s, includesOf(p))
	}
	return plan
}

// planRels adds to plan the relationships of rendering records of s with
// the includes inc.
func planRels(plan *resolve.Plan, s *shape, inc includeTree) {
	for _, name := range shapeRels[s.res] {
		plan.Child(s.res.Rel(name))
	}
	for _, rel := range s.members {
		if len(rel.Targets) == 0 {
			continue
		}
		sub, included := inc[rel.JSONAPI]
		switch {
		case included:
			c := plan.Child(rel)
			for _, t := range rel.Targets {
				planRels(c, includedShape(rel, t.Resource), sub)
			}
		case rel.Many && rel.Linkage != nil:
			plan.Child(rel.Linkage)
		case rel.Many:
			plan.Child(rel)
		}
	}
}

// shapeRels are the relationships (by plan name) a resource's attributes
// read without showing them: a reference field's display_value is its
// user's name.
var shapeRels = map[*catalog.Resource][]string{
	catalog.CustomField: {"referencedUser"},
}

// primaryShape is the shape of records of type T (*model.Shipment …) as
// primary data, nil for a type rendered without relationships.
func primaryShape[T any]() *shape {
	var zero T
	return primaryShapes()[catalog.Of(any(zero))]
}

// primaryShapes are the shapes of primary data, by resource (read after
// every file's init has set the shapes).
var primaryShapes = sync.OnceValue(func() map[*catalog.Resource]*shape {
	out := map[*catalog.Resource]*shape{}
	for _, s := range []*shape{shipmentShape, containerShape, documentShape, terminalShape, emailSubmissionPrimaryShape,
		trackingRequestShape, notificationShape, transportEventShape, rawEventShape, customFieldShape, partyShape} {
		out[s.res] = s
	}
	return out
})
