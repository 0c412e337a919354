package db

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Statement spans (docs/tracing.md). Every statement the store counts
// (counted, inTx, selectRows) is also a span when its context carries a
// recording span — a traced request's, made by the tracer provider of
// that span (package tracing). Without one (tracing off, or a background
// read) this is a context lookup and nothing else. The span has the
// statement's text, whose values are always bind parameters ($1 …) and
// never recorded, and the number of rows it returned or changed where the
// store reads it.

// tracerName is the instrumentation scope of statement spans.
const tracerName = "shipgraph/db"

type statementSpanKey struct{}

// startStatement starts the span of one statement, or returns a nil span
// when ctx is not traced or its statement already has one (selectRows
// starts it before counted sees the statement).
func startStatement(ctx context.Context, query string) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() || ctx.Value(statementSpanKey{}) != nil {
		return ctx, nil
	}
	op := operationOf(query)
	ctx, sp := parent.TracerProvider().Tracer(tracerName).Start(ctx, op,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.DBSystemNamePostgreSQL, semconv.DBOperationName(op), semconv.DBQueryText(query)))
	return context.WithValue(ctx, statementSpanKey{}, true), sp
}

// endStatement ends sp (nil: not traced) with the statement's row count
// (negative: unknown) and error.
func endStatement(sp trace.Span, rows int64, err error) {
	if sp == nil {
		return
	}
	if rows >= 0 {
		sp.SetAttributes(attribute.Int64(string(semconv.DBResponseReturnedRowsKey), rows))
	}
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, "statement failed")
	}
	sp.End()
}

// operationOf is the statement's first keyword, upper-cased (SELECT,
// INSERT, WITH …): the span's name.
func operationOf(query string) string {
	q := strings.TrimSpace(query)
	if i := strings.IndexAny(q, " \t\n("); i > 0 {
		q = q[:i]
	}
	return strings.ToUpper(q)
}
