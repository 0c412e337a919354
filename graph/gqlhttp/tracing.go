package gqlhttp

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"shipgraph/graph/executor"
)

// The span of a GraphQL operation (docs/tracing.md), registered by
// NewHandler only with HandlerConfig.Tracing: a child of the request's span
// (httpapi's), made by that span's tracer provider, named as the semantic
// conventions say ("query Dashboard"), with the operation's name, type and
// complexity, and whether the fast path wrote it (executor.FastPathAttr,
// set by the fast path). The statements of the operation are its children.
// Subscriptions get none: their events are not traced yet. No field
// middleware: tracing leaves the fast path on.

const tracerName = "shipgraph/graphql"

// complexityAttr is the operation's complexity as the limit counted it.
const complexityAttr = attribute.Key("shipgraph.graphql.complexity")

func traceOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	parent := trace.SpanFromContext(ctx)
	oc := graphql.GetOperationContext(ctx)
	if !parent.IsRecording() || oc.Operation == nil || oc.Operation.Operation == ast.Subscription {
		return next(ctx)
	}
	typ := string(oc.Operation.Operation)
	name := typ
	if oc.OperationName != "" {
		name += " " + oc.OperationName
	} else if oc.Operation.Name != "" {
		name += " " + oc.Operation.Name
	}
	attrs := []attribute.KeyValue{semconv.GraphQLOperationTypeKey.String(typ), executor.FastPathAttr.Bool(false)}
	if oc.Operation.Name != "" {
		attrs = append(attrs, semconv.GraphQLOperationName(oc.Operation.Name))
	}
	if s := extension.GetComplexityStats(ctx); s != nil {
		attrs = append(attrs, complexityAttr.Int(s.Complexity))
	}
	ctx, sp := parent.TracerProvider().Tracer(tracerName).Start(ctx, name, trace.WithAttributes(attrs...))
	h := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		res := h(ctx)
		if res != nil && len(res.Errors) > 0 {
			sp.SetStatus(codes.Error, res.Errors[0].Message)
		}
		sp.End()
		return res
	}
}
