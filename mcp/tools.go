package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"shipgraph/model"
)

// tool is one MCP tool: a trusted operation (operations/<file>.graphql),
// its public name and description, and how its arguments become the
// operation's variables and its answer the tool's result.
type tool struct {
	name, title, description string
	file                     string
	write                    bool // not read-only: refused to viewer keys
	openWorld                bool
	// describe gives variables' (and extra arguments') descriptions.
	describe map[string]string
	// flags is an argument naming what to include: each name sets the
	// boolean variable of that name (hidden from the input schema).
	flags *flagArg
	// extra are arguments that are not variables of the operation,
	// handled by prepare or result.
	extra map[string]*jsonschema.Schema
	// optional are variables the tool fills in when omitted (prepare).
	optional []string
	// list turns {root: {total_count, nodes}} into {items, meta} (the
	// public service's list shape).
	list bool
	// prepare adjusts the validated arguments before they become
	// variables (nil: none).
	prepare func(ctx context.Context, s *service, args map[string]any) error
	// result reshapes the structured content (nil: as shaped); it may
	// replace the output schema with its own (output).
	result func(args, out map[string]any) (map[string]any, error)
	output *jsonschema.Schema
	// summary is the short text beside the structured content.
	summary func(out map[string]any) string
}

// flagArg is an `include`-style argument.
type flagArg struct {
	name    string
	names   []string // the boolean variables it sets
	def     []string // included when the argument is omitted
	csv     bool     // a comma-separated string rather than an array
	explain string
}

var (
	pageDesc     = "Page number, from 1."
	pageSizeDesc = "Records a page, 1 to 100 (default 25)."
	statuses     = []any{"pending", "awaiting_manifest", "created", "failed", "tracking_stopped"}
)

// tools is every tool, in the order tools/list answers.
var tools = []*tool{
	{
		name: "search_container", title: "Search Containers", file: "search_container",
		description: "Search the account's containers, shipments and tracking requests by container number, booking number, bill of lading or reference number (e.g. MSKU1234565, MAEU123456789). Returns the matching records with their ids for get_container or get_shipment_details.",
		describe:    map[string]string{"query": "A container number, booking number, bill of lading number or reference number (prefixes match)."},
		result:      searchResult,
		summary: func(out map[string]any) string {
			return fmt.Sprintf("%v results: %d containers, %d shipments, %d tracking requests.", out["total_results"], lenOf(out["containers"]), lenOf(out["shipments"]), lenOf(out["tracking_requests"]))
		},
	},
	{
		name: "track_container", title: "Track Container", file: "track_container", write: true, openWorld: true,
		description: "Start tracking a container, bill of lading or booking number at its shipping line: creates a tracking request (the shipping line is then polled, outside Shipgraph). The number type and the SCAC are inferred when omitted. Not allowed to viewer keys.",
		describe: map[string]string{
			"number":     "Container, bill of lading or booking number to track.",
			"numberType": "container, bill_of_lading or booking_number; inferred from the number when omitted.",
			"scac":       "SCAC of the shipping line (e.g. MAEU); inferred from the number when omitted.",
			"refNumbers": "Your reference numbers for the shipment.",
		},
		optional: []string{"number", "numberType", "scac"},
		extra: map[string]*jsonschema.Schema{
			"containerNumber": {Type: "string", Description: "Deprecated alias of number (a container number)."},
			"bookingNumber":   {Type: "string", Description: "Deprecated alias of number (a booking or bill of lading number)."},
		},
		prepare: prepareTrack,
		summary: func(out map[string]any) string {
			tr, _ := out["tracking_request"].(map[string]any)
			return fmt.Sprintf("Tracking request %v for %v %v at %v: %v.", tr["id"], tr["request_type"], tr["request_number"], tr["scac"], tr["status"])
		},
	},
	{
		name: "get_container", title: "Get Container Details", file: "get_container",
		description: "One container of the account by id: status, equipment, availability for pickup, last free day, holds and fees at the terminal, rail legs; with `include`, its shipment (default), its terminal at the port of discharge and its transport events.",
		describe:    map[string]string{"id": "The container's id (UUID), e.g. from search_container."},
		flags: &flagArg{name: "include", names: []string{"shipment", "pod_terminal", "transport_events"}, def: []string{"shipment"},
			explain: "Related data to load: shipment (default), pod_terminal, transport_events."},
		summary: containerSummary,
	},
	{
		name: "get_shipment_details", title: "Get Shipment Details", file: "get_shipment_details",
		description: "One shipment of the account by id: bill of lading, shipping line, routing (port of lading, port of discharge, destination), vessel and voyage, ETAs and ATAs, terminal, and its containers unless include_containers is false.",
		describe: map[string]string{
			"id":                 "The shipment's id (UUID).",
			"include_containers": "Include the shipment's containers (default true).",
		},
		summary: func(out map[string]any) string {
			s, _ := out["shipment"].(map[string]any)
			return fmt.Sprintf("Shipment %v (%v), %v → %v, ETA %v.", s["bill_of_lading_number"], s["shipping_line_scac"], orDash(s["port_of_lading_name"]), orDash(s["port_of_discharge_name"]), orDash(s["pod_eta_at"]))
		},
	},
	{
		name: "get_container_transport_events", title: "Get Container Transport Events", file: "get_container_transport_events",
		description: "A container's journey milestones in time order (vessel loaded, departed, arrived, discharged, rail, full out, empty in…), each with its time, location and vessel. See the resource shipgraph://docs/milestone-glossary for what each event means.",
		describe:    map[string]string{"id": "The container's id (UUID)."},
		summary: func(out map[string]any) string {
			c, _ := out["container"].(map[string]any)
			evs, _ := c["transport_events"].([]any)
			last := "none"
			if len(evs) > 0 {
				e, _ := evs[len(evs)-1].(map[string]any)
				last = fmt.Sprintf("%v at %v", e["event"], orDash(e["timestamp"]))
			}
			return fmt.Sprintf("Container %v: %d transport events; latest %s.", c["number"], len(evs), last)
		},
	},
	{
		name: "get_supported_shipping_lines", title: "Get Supported Shipping Lines", file: "get_supported_shipping_lines",
		description: "The shipping lines Shipgraph can track, with their SCAC codes; `search` filters by name or SCAC.",
		extra:       map[string]*jsonschema.Schema{"search": {Type: "string", Description: "Filter by carrier name or SCAC code (case-insensitive)."}},
		result:      shippingLinesResult,
		output: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
			"total_lines": {Type: "integer"},
			"shipping_lines": {Type: "array", Items: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
				"scac": {Type: "string"}, "name": {Type: "string"}, "short_name": {Type: "string"},
				"alternative_scacs": {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
			}}},
		}, Required: []string{"total_lines", "shipping_lines"}},
		summary: func(out map[string]any) string { return fmt.Sprintf("%v shipping lines.", out["total_lines"]) },
	},
	{
		name: "get_container_route", title: "Get Container Route", file: "get_container_route",
		description: "A container's route: its port calls in order (port of lading, transshipments, port of discharge, inland), each with the arriving and departing leg's mode, vessel and times, derived from its transport events.",
		describe:    map[string]string{"id": "The container's id (UUID)."},
		result:      routeResult,
		output:      routeSchema,
		summary: func(out map[string]any) string {
			var names []string
			for _, l := range asList(out["route_locations"]) {
				p, _ := l["port"].(map[string]any)
				names = append(names, fmt.Sprint(orDash(p["code"])))
			}
			return fmt.Sprintf("Route of %d port calls: %s.", len(names), strings.Join(names, " → "))
		},
	},
	{
		name: "list_shipments", title: "List Shipments", file: "list_shipments", list: true,
		description: "The account's shipments, newest first, a page at a time; filter by number (bill of lading, booking or reference, prefix match) or by whether tracking stopped.",
		describe: map[string]string{
			"number": "Filter by shipment number (bill of lading, booking or reference number).", "tracking_stopped": "Filter by whether tracking at the shipping line has stopped.",
			"include_containers": "Include each shipment's containers (default false).", "page": pageDesc, "page_size": pageSizeDesc,
		},
		summary: listSummary("shipments"),
	},
	{
		name: "list_containers", title: "List Containers", file: "list_containers", list: true,
		description: "The account's containers, a page at a time, with status, availability, last free day, holds and fees.",
		describe:    map[string]string{"page": pageDesc, "page_size": pageSizeDesc},
		flags: &flagArg{name: "include", names: []string{"shipment", "pod_terminal"}, csv: true,
			explain: "Comma-separated related data to load: shipment, pod_terminal."},
		summary: listSummary("containers"),
	},
	{
		name: "list_tracking_requests", title: "List Tracking Requests", file: "list_tracking_requests", list: true,
		description: "The account's tracking requests, a page at a time; filter by status, request type, SCAC or number.",
		describe: map[string]string{
			"statuses": "Filter by statuses.", "request_types": "Filter by request types (container, bill_of_lading, booking_number).",
			"scacs": "Filter by shipping lines' SCACs.", "request_number": "Filter by request number.", "page": pageDesc, "page_size": pageSizeDesc,
		},
		extra: map[string]*jsonschema.Schema{
			"status":       {Type: "string", Enum: statuses, Description: "Filter by one status."},
			"request_type": {Type: "string", Description: "Filter by one request type (container, bill_of_lading, booking_number)."},
			"filters": {Type: "object", AdditionalProperties: &jsonschema.Schema{Type: "string"},
				Description: "Filters as the /v2 API's query parameters: status, request_type, scac, request_number (filter[status] is accepted too). Others are listed in unsupportedFilters."},
		},
		prepare: prepareTrackingFilters,
		summary: listSummary("tracking requests"),
	},
	{
		name: "container_stats", title: "Container Counts", file: "container_stats",
		description: "How many of the account's containers fall in each group: by status, terminal at the port of discharge, shipping line, port of discharge, last-free-day bucket (overdue, today, next_3_days, later, none) or ETA week; with the same filters as list_containers.",
		describe:    map[string]string{"group_by": "What to group by (one or more).", "filter": "Which containers to count."},
		summary:     statsSummary("container_stats"),
	},
	{
		name: "shipment_stats", title: "Shipment Counts", file: "shipment_stats",
		description: "How many of the account's shipments fall in each group: by terminal at the port of discharge, shipping line, port of discharge or ETA week.",
		describe:    map[string]string{"group_by": "What to group by (one or more).", "filter": "Which shipments to count."},
		summary:     statsSummary("shipment_stats"),
	},
	{
		name: "pickup_worklist", title: "Pickup Worklist", file: "pickup_worklist", list: true,
		description: "Containers still to be picked up, soonest last free day first: availability, last free day, appointment, holds and fees at the terminal, where in the terminal. Answers \"what can I pick up today, and what is about to cost demurrage?\".",
		describe: map[string]string{
			"statuses": "Container statuses to include (default: not yet picked up).", "pod_terminal_ids": "Only these terminals (ids).",
			"last_free_day_to": "Only last free days up to this time (RFC 3339).", "page": pageDesc, "page_size": pageSizeDesc,
		},
		summary: func(out map[string]any) string {
			items := asList(out["items"])
			ready := 0
			for _, c := range items {
				if c["available_for_pickup"] == true && lenOf(c["holds_at_pod_terminal"]) == 0 {
					ready++
				}
			}
			return fmt.Sprintf("%d containers on this page (%v in all); %d available with no holds.", len(items), metaTotal(out), ready)
		},
	},
}

// inputSchema is the tool's input schema: the operation's variables
// (variableSchema), with the include-style argument in place of the
// booleans it sets, the extra arguments, and `intent` (a free text the
// public service's clients send; ignored).
func (t *tool) inputSchema(vars *jsonschema.Schema) *jsonschema.Schema {
	s := vars
	for name, d := range t.describe {
		if p := s.Properties[name]; p != nil {
			p.Description = d
		}
	}
	if f := t.flags; f != nil {
		for _, n := range f.names {
			delete(s.Properties, n)
			s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r == n })
		}
		if f.csv {
			alt := strings.Join(f.names, "|")
			s.Properties[f.name] = &jsonschema.Schema{Type: "string", Description: f.explain, Pattern: `^\s*((` + alt + `)\s*(,\s*(` + alt + `)\s*)*)?$`}
		} else {
			enum := make([]any, len(f.names))
			for i, n := range f.names {
				enum[i] = n
			}
			s.Properties[f.name] = &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string", Enum: enum}, Description: f.explain}
		}
	}
	for name, p := range t.extra {
		s.Properties[name] = p
	}
	// Pages are enforced here too, so that a bad page is refused before
	// the operation is planned (and its complexity counted).
	if p := s.Properties["page"]; p != nil {
		p.Minimum = new(1.0)
	}
	if p := s.Properties["page_size"]; p != nil {
		p.Minimum, p.Maximum = new(1.0), new(100.0)
	}
	s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return slices.Contains(t.optional, r) })
	s.Properties["intent"] = &jsonschema.Schema{Type: "string", Description: "Optional: what the user asked, in a few words (ignored by Shipgraph)."}
	return s
}

// applyFlags sets the boolean variables of the include-style argument.
func (t *tool) applyFlags(args map[string]any) {
	f := t.flags
	if f == nil {
		return
	}
	chosen := f.def
	switch v := args[f.name].(type) {
	case string:
		chosen = nil
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				chosen = append(chosen, p)
			}
		}
	case []any:
		chosen = nil
		for _, p := range v {
			chosen = append(chosen, fmt.Sprint(p))
		}
	}
	for _, n := range f.names {
		args[n] = slices.Contains(chosen, n)
	}
}

// prepareTrack fills track_container's number type and SCAC, when
// omitted, from inferTrackingNumber (the same inference as /v2).
func prepareTrack(ctx context.Context, s *service, args map[string]any) error {
	if _, ok := args["number"]; !ok {
		for _, alias := range []string{"containerNumber", "bookingNumber"} {
			if v, ok := args[alias].(string); ok && v != "" {
				args["number"] = v
				break
			}
		}
	}
	number, _ := args["number"].(string)
	if strings.TrimSpace(number) == "" {
		return failure("BAD_USER_INPUT", "number is required: the container, bill of lading or booking number to track")
	}
	if _, ok := args["numberType"]; !ok {
		if _, ok := args["bookingNumber"]; ok {
			args["numberType"] = "booking_number"
		}
	}
	_, typed := args["numberType"]
	_, lined := args["scac"]
	if typed && lined {
		return nil
	}
	data, err := s.execute(ctx, s.infer, map[string]any{"number": number})
	if err != nil {
		return err
	}
	in, _ := data["inferTrackingNumber"].(map[string]any)
	if !typed {
		t, _ := in["numberType"].(string)
		if t == "" || t == "unknown" {
			return failure("BAD_USER_INPUT", "cannot tell what kind of number %q is: give numberType (container, bill_of_lading or booking_number)", number)
		}
		args["numberType"] = t
	}
	if !lined {
		sel, _ := in["selected"].(map[string]any)
		scac, _ := sel["scac"].(string)
		if scac == "" {
			return failure("BAD_USER_INPUT", "cannot tell the shipping line of %q (%v): give scac (see get_supported_shipping_lines)", number, in["decision"])
		}
		args["scac"] = scac
	}
	return nil
}

// prepareTrackingFilters maps list_tracking_requests' public filters onto
// the operation's variables and notes the ones it cannot apply.
func prepareTrackingFilters(_ context.Context, _ *service, args map[string]any) error {
	add := func(list, v string) {
		cur, _ := args[list].([]any)
		args[list] = append(cur, v)
	}
	var unsupported []any
	if v, ok := args["status"].(string); ok {
		add("statuses", v)
	}
	if v, ok := args["request_type"].(string); ok {
		add("request_types", v)
	}
	filters, _ := args["filters"].(map[string]any)
	keys := make([]string, 0, len(filters))
	for k := range filters {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, _ := filters[k].(string)
		name := strings.TrimSuffix(strings.TrimPrefix(k, "filter["), "]")
		switch name {
		case "status":
			if !slices.Contains(statuses, any(v)) {
				return failure("BAD_USER_INPUT", "filters.%s: unknown status %q", k, v)
			}
			add("statuses", v)
		case "request_type":
			add("request_types", v)
		case "scac":
			add("scacs", v)
		case "request_number":
			args["request_number"] = v
		default:
			unsupported = append(unsupported, k)
		}
	}
	args["unsupportedFilters"] = unsupported
	return nil
}

func searchResult(_, out map[string]any) (map[string]any, error) {
	containers, shipments, requests := []any{}, []any{}, []any{}
	for _, r := range asList(out["search"]) {
		switch r["entity_type"] {
		case "cargo":
			containers = append(containers, map[string]any{"id": r["id"], "container_number": r["number"], "shipment_id": r["shipment_id"], "shipping_line": r["scac"], "port_of_lading": r["port_of_lading_name"], "port_of_discharge": r["port_of_discharge_name"]})
		case "shipment":
			shipments = append(shipments, map[string]any{"id": r["id"], "ref_number": r["number"], "shipping_line": r["scac"], "container_count": r["containers_count"], "port_of_lading": r["port_of_lading_name"], "port_of_discharge": r["port_of_discharge_name"]})
		default:
			requests = append(requests, map[string]any{"id": r["id"], "request_number": r["number"], "shipment_id": r["shipment_id"], "scac": r["scac"]})
		}
	}
	return map[string]any{"containers": containers, "shipments": shipments, "tracking_requests": requests,
		"total_results": len(containers) + len(shipments) + len(requests)}, nil
}

func shippingLinesResult(args, out map[string]any) (map[string]any, error) {
	lines, _ := out["shipping_lines"].(map[string]any)
	q, _ := args["search"].(string)
	q = strings.ToLower(strings.TrimSpace(q))
	var kept []any
	for _, l := range asList(lines["nodes"]) {
		text := strings.ToLower(fmt.Sprint(l["scac"], " ", l["name"], " ", l["short_name"], " ", l["alternative_scacs"]))
		if q == "" || strings.Contains(text, q) {
			kept = append(kept, l)
		}
	}
	if kept == nil {
		kept = []any{}
	}
	return map[string]any{"total_lines": len(kept), "shipping_lines": kept}, nil
}

// asList is v's elements that are objects.
func asList(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func lenOf(v any) int {
	l, _ := v.([]any)
	return len(l)
}

func orDash(v any) any {
	if v == nil || v == "" {
		return "—"
	}
	return v
}

func metaTotal(out map[string]any) any {
	m, _ := out["meta"].(map[string]any)
	return m["total"]
}

func listSummary(what string) func(map[string]any) string {
	return func(out map[string]any) string {
		m, _ := out["meta"].(map[string]any)
		return fmt.Sprintf("%d %s on page %v (%v in all).", lenOf(out["items"]), what, m["page"], m["total"])
	}
}

func statsSummary(root string) func(map[string]any) string {
	return func(out map[string]any) string {
		total := 0.0
		for _, g := range asList(out[root]) {
			if n, ok := g["count"].(float64); ok {
				total += n
			}
		}
		return fmt.Sprintf("%d groups, %v records.", lenOf(out[root]), total)
	}
}

func containerSummary(out map[string]any) string {
	c, _ := out["container"].(map[string]any)
	var b strings.Builder
	fmt.Fprintf(&b, "Container %v is %v.", c["number"], c["current_status"])
	switch {
	case c["available_for_pickup"] == true:
		b.WriteString(" Available for pickup.")
	case c["availability_known"] == true:
		b.WriteString(" Not available for pickup.")
	}
	if lfd := c["pickup_lfd"]; lfd != nil {
		fmt.Fprintf(&b, " Last free day %v.", lfd)
	}
	if n := lenOf(c["holds_at_pod_terminal"]); n > 0 {
		fmt.Fprintf(&b, " %d holds.", n)
	}
	return b.String()
}

// routeResult derives get_container_route's answer from the container's
// transport events as /v2/containers/{id}/route does (model.LegOf
// classifies the legs): one call per run of events at the same port.
func routeResult(_, out map[string]any) (map[string]any, error) {
	c, _ := out["container"].(map[string]any)
	var calls []map[string]any
	var at map[string]any
	for _, e := range asList(c["transport_events"]) {
		port, _ := e["location"].(map[string]any)
		if port == nil || port["code"] == nil {
			continue
		}
		if at == nil || at["port"].(map[string]any)["code"] != port["code"] {
			at = map[string]any{"port": port, "inbound": map[string]any{}, "outbound": map[string]any{}}
			calls = append(calls, at)
		}
		name, _ := e["event"].(string)
		inbound, mode, estimated, ok := model.LegOf(name)
		if !ok {
			continue
		}
		leg, actual, planned := at["outbound"].(map[string]any), "atd", "etd"
		if inbound {
			leg, actual, planned = at["inbound"].(map[string]any), "ata", "eta"
		}
		leg["mode"] = mode
		if v, ok := e["vessel"].(map[string]any); ok && v != nil {
			leg["vessel"] = v
		}
		if voy := e["voyage_number"]; voy != nil {
			leg["voyage_number"] = voy
		}
		switch {
		case e["timestamp"] == nil:
		case estimated:
			leg[planned] = e["timestamp"]
		case strings.HasSuffix(name, "_arrived") || strings.HasSuffix(name, "_departed") || strings.HasSuffix(name, "arrived_at_inland_destination"):
			leg[actual] = e["timestamp"]
		}
	}
	locs := make([]any, len(calls))
	for i, l := range calls {
		locs[i] = l
	}
	return map[string]any{"container_id": c["id"], "container_number": c["number"], "total_legs": len(locs), "route_locations": locs}, nil
}

var routeLeg = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
	"mode": {Type: "string"}, "eta": {Type: "string"}, "ata": {Type: "string"}, "etd": {Type: "string"}, "atd": {Type: "string"},
	"voyage_number": {Type: "string"}, "vessel": {Type: "object"},
}}

var routeSchema = &jsonschema.Schema{Type: "object", Required: []string{"container_id", "route_locations"}, Properties: map[string]*jsonschema.Schema{
	"container_id": {Type: "string"}, "container_number": {Type: "string"}, "total_legs": {Type: "integer"},
	"route_locations": {Type: "array", Items: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"port":    {Type: "object", Properties: map[string]*jsonschema.Schema{"id": {Type: "string"}, "code": {Type: "string"}, "name": {Type: "string"}, "city": {Types: []string{"string", "null"}}, "country_code": {Type: "string"}}},
		"inbound": routeLeg, "outbound": routeLeg,
	}}},
}}
