package graph

import (
	"context"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"shipgraph/live"
	"shipgraph/load"
	"shipgraph/model"
	"shipgraph/resolve"
)

// A subscription resolver registers with the hub and returns a channel fed
// by a goroutine of its own: first the changes the subscriber missed, when
// it resumes after a log id (the after argument, or an SSE stream's
// Last-Event-ID), then the live ones; for each change of the account that
// concerns it, the goroutine builds fresh loaders (a long-lived loader cache would
// serve stale records), reads the record through them — from a replica
// that replayed the change when there is one (db.WithReadAt), scoped to the
// account, narrowed to the columns the operation selects — runs the load
// plan of the event's record field on it, and sends the event. gqlgen
// writes each event to the connection; the hub never waits for that.

// eventSource is what one subscription needs to turn changes into events.
type eventSource[E any] struct {
	// match reports cheaply, from the change alone, whether it may concern
	// the subscription.
	match func(*model.Change) bool
	// resolve reads the record in ctx (fresh loaders) and builds the event;
	// nil skips the change.
	resolve func(ctx context.Context, c *model.Change) (*E, error)
	// resync is the RESYNC event.
	resync func() *E
	// fields are the columns to read, beyond what the operation selects
	// (what match and resolve look at).
	fields map[string][]string
}

// subscribe starts a subscription of the principal's account, after the
// log id after (or the transport's resume point) when given.
func subscribe[E any](r *Resolver, ctx context.Context, src eventSource[E], after *string) (<-chan *E, error) {
	p, err := model.Authenticated(who(ctx))
	if err != nil {
		return nil, err
	}
	arg := "after"
	if after == nil {
		if id, ok := live.ResumeFrom(ctx); ok {
			after, arg = &id, "Last-Event-ID"
		}
	}
	var resume *int64
	if after != nil {
		id, err := strconv.ParseInt(*after, 10, 64)
		if err != nil || id <= 0 {
			e := model.Errorf(model.EINVALID, "%s: %q is not a log id (the logId of an event)", arg, *after)
			e.Field = arg
			return nil, e
		}
		resume = &id
	}
	if r.Live == nil {
		return nil, model.Errorf(model.EUNAVAILABLE, "live updates are not enabled on this server")
	}
	fields := load.Fields{}
	if graphql.HasOperationContext(ctx) {
		fields = FieldsOf(graphql.GetOperationContext(ctx))
	}
	for typ, fs := range src.fields {
		for _, f := range fs {
			AddField(fields, typ, f)
		}
	}
	s, err := r.Live.Subscribe(ctx, p, resume)
	if err != nil {
		return nil, err
	}
	out := make(chan *E)
	// send hands e to gqlgen; false: the subscription ended.
	send := func(ev live.Event, e *E) bool {
		var id int64
		if ev.Change != nil {
			id = ev.Change.Log
		}
		live.Sending(ctx, id)
		select {
		case out <- e:
			return true
		case <-ctx.Done():
			return false
		case <-s.Done():
			live.End(ctx, s.Reason())
			return false
		}
	}
	go func() {
		defer close(out)
		defer r.Live.Unsubscribe(s)
		for evs := r.Live.CatchUp(ctx, s); len(evs) > 0; evs = r.Live.CatchUp(ctx, s) {
			for _, ev := range evs {
				if e := event(r, ctx, p, fields, src, ev); e != nil && !send(ev, e) {
					return
				}
			}
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.Done():
				live.End(ctx, s.Reason())
				return
			case <-s.Ready():
			}
			for _, ev := range s.Take() {
				if e := event(r, ctx, p, fields, src, ev); e != nil && !send(ev, e) {
					return
				}
			}
		}
	}()
	return out, nil
}

// event turns one queued change into the subscription's event, or nil.
func event[E any](r *Resolver, ctx context.Context, p *model.Principal, fields load.Fields, src eventSource[E], ev live.Event) *E {
	if ev.Change == nil {
		return src.resync()
	}
	if !src.match(ev.Change) {
		return nil
	}
	ctx, sp := traceEvent(ctx, ev.Change)
	// Fresh loaders narrowed to fields; the re-read may use a replica
	// that replayed the change.
	e, err := src.resolve(r.Res.EventSession(ctx, p, ev.Change, fields), ev.Change)
	endEventTrace(sp, err)
	if err != nil {
		// The record could not be read (the database is failing): the
		// subscriber must re-read.
		r.Live.Logger().Warn("live updates: reading a changed record", "type", ev.Change.Type, "id", ev.Change.ID, "err", err)
		return src.resync()
	}
	return e
}

// eventPlan is the load plan of the record field (container, shipment …)
// of the event type the subscription field being resolved returns.
func eventPlan(ctx context.Context, field string) *load.Plan {
	op, fields := subfields(ctx)
	if op == nil {
		return nil
	}
	p := &load.Plan{}
	for _, f := range fields {
		if f.Name == field && f.Definition != nil {
			p.Merge(buildPlan(op, f.Definition.Type.Name(), f.Selections))
		}
	}
	return p
}

// logID is the change's public log id.
func logID(c *model.Change) *string {
	if c.Log == 0 {
		return nil
	}
	return ptr(strconv.FormatInt(c.Log, 10))
}

func operation(c *model.Change) model.ChangeOperation {
	switch c.Op {
	case "INSERT":
		return model.ChangeOperationInsert
	case "DELETE":
		return model.ChangeOperationDelete
	}
	return model.ChangeOperationUpdate
}

// changedFields names the changed columns by GraphQL field:
// current_status → currentStatus, pod_terminal_id → podTerminal.
func changedFields(c *model.Change) []string {
	out := make([]string, 0, len(c.Columns))
	for _, col := range c.Columns {
		out = append(out, camel(strings.TrimSuffix(col, "_id")))
	}
	return out
}

// camel converts a column to a GraphQL field name: pod_eta_at → podEtaAt.
func camel(s string) string {
	var b strings.Builder
	up := false
	for _, r := range s {
		switch {
		case r == '_':
			up = true
		case up && 'a' <= r && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
			up = false
		default:
			b.WriteRune(r)
			up = false
		}
	}
	return b.String()
}

func ptr[T any](v T) *T { return &v }

// containerEvents turns container changes into events for filter.
func (r *subscriptionResolver) containerEvents(ctx context.Context, filter *model.ContainerSubscriptionFilter) eventSource[model.ContainerEvent] {
	if filter == nil {
		filter = &model.ContainerSubscriptionFilter{}
	}
	plan := eventPlan(ctx, "container")
	// Before and after the change, from the change's previous values and
	// the record read.
	matches := func(shipment string, terminal *string, status string) bool {
		if filter.ShipmentID != nil && *filter.ShipmentID != shipment {
			return false
		}
		if filter.PodTerminalID != nil && (terminal == nil || *terminal != *filter.PodTerminalID) {
			return false
		}
		if len(filter.Statuses) > 0 {
			found := false
			for _, s := range filter.Statuses {
				found = found || string(s) == status
			}
			return found
		}
		return true
	}
	return eventSource[model.ContainerEvent]{
		fields: map[string][]string{"Container": {"shipment", "podTerminal", "currentStatus"}},
		match: func(c *model.Change) bool {
			if c.Type != "container" {
				return false
			}
			if filter.ShipmentID == nil {
				return true
			}
			was := c.Was["shipment_id"]
			return c.Parent == *filter.ShipmentID || (was != nil && *was == *filter.ShipmentID)
		},
		resolve: func(ctx context.Context, c *model.Change) (*model.ContainerEvent, error) {
			e := &model.ContainerEvent{Operation: operation(c), LogID: logID(c), ID: ptr(c.ID), ChangedFields: changedFields(c)}
			if c.Op == "DELETE" {
				return e, nil // matched on its shipment alone
			}
			v, err := orNull(r.Res.Container(ctx, who(ctx), c.ID, nil))
			if err != nil || v == nil {
				return nil, err // gone since: its DELETE follows
			}
			after := matches(v.ShipmentID, v.PodTerminalID, string(v.CurrentStatus))
			before := after
			if c.Op == "UPDATE" && len(c.Was) > 0 {
				shipment, terminal, status := v.ShipmentID, v.PodTerminalID, string(v.CurrentStatus)
				if w, ok := c.Was["shipment_id"]; ok && w != nil {
					shipment = *w
				}
				if w, ok := c.Was["pod_terminal_id"]; ok {
					terminal = w
				}
				if w, ok := c.Was["current_status"]; ok && w != nil {
					status = *w
				}
				before = matches(shipment, terminal, status)
			}
			if !after && !before {
				return nil, nil
			}
			if err := resolve.Load(ctx, []*model.Container{v}, plan); err != nil {
				return nil, err
			}
			e.Container = v
			return e, nil
		},
		resync: func() *model.ContainerEvent {
			return &model.ContainerEvent{Operation: model.ChangeOperationResync, ChangedFields: []string{}}
		},
	}
}

func (r *subscriptionResolver) shipmentEvents(ctx context.Context, id string) eventSource[model.ShipmentEvent] {
	plan := eventPlan(ctx, "shipment")
	return eventSource[model.ShipmentEvent]{
		match: func(c *model.Change) bool { return c.Type == "shipment" && c.ID == id },
		resolve: func(ctx context.Context, c *model.Change) (*model.ShipmentEvent, error) {
			e := &model.ShipmentEvent{Operation: operation(c), LogID: logID(c), ID: ptr(c.ID), ChangedFields: changedFields(c)}
			if c.Op == "DELETE" {
				return e, nil
			}
			v, err := orNull(r.Res.Shipment(ctx, who(ctx), c.ID, plan))
			if err != nil || v == nil {
				return nil, err
			}
			e.Shipment = v
			return e, nil
		},
		resync: func() *model.ShipmentEvent {
			return &model.ShipmentEvent{Operation: model.ChangeOperationResync, ChangedFields: []string{}}
		},
	}
}

func (r *subscriptionResolver) customFieldEvents(ctx context.Context, entityID string) eventSource[model.CustomFieldEvent] {
	plan := eventPlan(ctx, "customField")
	return eventSource[model.CustomFieldEvent]{
		match: func(c *model.Change) bool { return c.Type == "custom_field" && c.Parent == entityID },
		resolve: func(ctx context.Context, c *model.Change) (*model.CustomFieldEvent, error) {
			e := &model.CustomFieldEvent{Operation: operation(c), LogID: logID(c), ID: ptr(c.ID), EntityID: ptr(c.Parent), ChangedFields: changedFields(c)}
			if c.Op == "DELETE" {
				return e, nil
			}
			all, err := r.Res.EntityCustomFields(ctx, who(ctx), c.Parent)
			if err != nil {
				return nil, err
			}
			for _, v := range all {
				if v.ID == c.ID {
					if err := resolve.Load(ctx, []*model.CustomField{v}, plan); err != nil {
						return nil, err
					}
					e.CustomField = v
					return e, nil
				}
			}
			return nil, nil
		},
		resync: func() *model.CustomFieldEvent {
			return &model.CustomFieldEvent{Operation: model.ChangeOperationResync, ChangedFields: []string{}}
		},
	}
}

var recordTypes = map[string]model.ChangeRecordType{
	"shipment":                model.ChangeRecordTypeShipment,
	"container":               model.ChangeRecordTypeContainer,
	"custom_field":            model.ChangeRecordTypeCustomField,
	"custom_field_definition": model.ChangeRecordTypeCustomFieldDefinition,
	"custom_field_option":     model.ChangeRecordTypeCustomFieldOption,
	"document":                model.ChangeRecordTypeDocument,
	// A container's transport events (parent: the container).
	"transport_event": model.ChangeRecordTypeTransportEvent,
	// Tracking requests (parent: the shipment once there is one): a
	// request's status moving (pending → created, failed …) is heard live.
	"tracking_request": model.ChangeRecordTypeTrackingRequest,
}

func (r *subscriptionResolver) changeEvents() eventSource[model.ChangeEvent] {
	return eventSource[model.ChangeEvent]{
		match: func(c *model.Change) bool { _, ok := recordTypes[c.Type]; return ok },
		resolve: func(_ context.Context, c *model.Change) (*model.ChangeEvent, error) {
			e := &model.ChangeEvent{Operation: operation(c), LogID: logID(c), Type: ptr(recordTypes[c.Type]), ID: ptr(c.ID), ChangedFields: changedFields(c)}
			if c.Parent != "" {
				e.ParentID = ptr(c.Parent)
			}
			return e, nil
		},
		resync: func() *model.ChangeEvent {
			return &model.ChangeEvent{Operation: model.ChangeOperationResync, ChangedFields: []string{}}
		},
	}
}

// traceEvent starts the span of one subscription event when the
// subscription's request is traced (docs/tracing.md): a trace of its own
// (a subscription lives for hours; one trace per event keeps each small),
// linked to the request's span, with the re-read's statements as
// children. Untraced (no span in ctx): ctx and nil, at the cost of one
// context lookup.
func traceEvent(ctx context.Context, c *model.Change) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return ctx, nil
	}
	attrs := []attribute.KeyValue{
		attribute.String("shipgraph.change.type", c.Type),
		attribute.String("shipgraph.change.operation", c.Op),
		attribute.String("shipgraph.change.record_id", c.ID),
		attribute.Int64("shipgraph.change.log_id", c.Log),
	}
	if graphql.HasOperationContext(ctx) {
		if oc := graphql.GetOperationContext(ctx); oc.Operation != nil && oc.Operation.Name != "" {
			attrs = append(attrs, attribute.String("graphql.operation.name", oc.Operation.Name))
		}
	}
	return parent.TracerProvider().Tracer("shipgraph/graph").Start(ctx, "subscription event "+c.Type,
		trace.WithNewRoot(), trace.WithLinks(trace.Link{SpanContext: parent.SpanContext()}), trace.WithAttributes(attrs...))
}

// endEventTrace ends an event's span; an error (the record could not be
// read: the subscriber gets RESYNC) is its status.
func endEventTrace(sp trace.Span, err error) {
	if sp == nil {
		return
	}
	if err != nil {
		sp.SetStatus(codes.Error, "reading the changed record")
	}
	sp.End()
}
