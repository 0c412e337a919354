package rest

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"shipgraph/catalog"
	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// The journey of a container (its transport events, raw events, route and
// map) and vessels. Every container path reads the container first through
// the resolver layer: another account's container is 404.

var (
	transportEventList = endpoint{Serializer: "V2::TransportEventSerializer", Includes: includes(catalog.TransportEvent), Paged: true}
	rawEventList       = endpoint{Serializer: "V2::RawEventSerializer", Includes: includes(catalog.RawEvent)}
	// The route's document always includes its calls, ports and vessels;
	// the include names the SDK sends are accepted.
	routeItem  = endpoint{Serializer: "V2::RouteSerializer", Includes: map[string]string{"port": "port", "vessel": "vessel", "route_location": "route_location", "route_locations": "route_location"}}
	mapItem    = endpoint{Serializer: "V2::MapSerializer"}
	vesselItem = endpoint{Serializer: "V2::VesselSerializer", Filters: []string{"show_positions[from_timestamp]", "show_positions[to_timestamp]"}}
	futureItem = endpoint{Serializer: "V2::VesselSerializer", Filters: []string{"port_id", "previous_port_id"}}
	futureAt   = endpoint{Serializer: "V2::VesselSerializer", Filters: []string{"port_id", "previous_port_id", "latitude", "longitude"}}
)

func (s *server) containerTransportEvents(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, transportEventList, func(ctx context.Context, p *params) (listPage[*model.TransportEvent], error) {
		all, err := s.res.ContainerTransportEvents(ctx, who(r), r.PathValue("id"), p.plan)
		if err != nil {
			return listPage[*model.TransportEvent]{}, err
		}
		pg := memoryPage(all, p.Page)
		pg.hasPrev = p.Page.Number > 1 && len(all) > 0 // a container's events are few: read whole, paged here
		return pg, nil
	}, withIncludes)
}

func (s *server) containerRawEvents(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, err := parseParams(r, rawEventList)
	var es []*model.RawEvent
	if err == nil {
		es, err = s.res.ContainerRawEvents(ctx, who(r), r.PathValue("id"), planOf(rawEventShape, p))
	}
	var data []*Resource
	b := s.newBuilder(s.baseURL(r), p)
	if err == nil {
		data, err = renderAll(b, ctx, es, p, rawEventShape)
	}
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	jsonapi.WriteDocument(w, r, http.StatusOK, b.document(data, &jsonapi.Links{Self: b.base + r.URL.Path}, nil))
}

// transportEventAttributes are a transport event record's attributes, in
// the order of a frozen reference object's (sorted names).
type transportEventAttributes struct {
	CreatedAt      timestamp  `json:"created_at"`
	DataSource     string     `json:"data_source"`
	Event          string     `json:"event"`
	LocationLocode *string    `json:"location_locode"`
	Timestamp      *timestamp `json:"timestamp"`
	Timezone       *string    `json:"timezone"`
	VoyageNumber   *string    `json:"voyage_number"`
}

func transportEventResource(b *builder, e *model.TransportEvent) *Resource {
	var attrs any
	if e.Record {
		attrs = transportEventAttributes{CreatedAt: ts(e.CreatedAt), DataSource: e.DataSource, Event: e.Event,
			LocationLocode: e.LocationLocode, Timestamp: tsp(e.EventAt), Timezone: e.Timezone, VoyageNumber: e.VoyageNumber}
	} else {
		attrs = eventAttributes(&e.WebhookEvent, model.TransportEventType)
	}
	return &Resource{ID: e.ID, Type: model.TransportEventType, Attributes: attrs,
		Relationships: b.linkage(e, transportEventShape.members)}
}

// rawEventAttributes are a raw event's attributes. original_event and
// location_name are plain strings in the OpenAPI document: omitted when
// unknown. actual_at/estimated_at (deprecated) repeat timestamp by
// whether it is an estimate; the *_on dates are null (times are known).
type rawEventAttributes struct {
	Event          *string    `json:"event"`
	OriginalEvent  *string    `json:"original_event,omitempty"`
	Timestamp      *timestamp `json:"timestamp"`
	Estimated      bool       `json:"estimated"`
	ActualOn       *string    `json:"actual_on"`
	EstimatedOn    *string    `json:"estimated_on"`
	ActualAt       *timestamp `json:"actual_at"`
	EstimatedAt    *timestamp `json:"estimated_at"`
	Timezone       *string    `json:"timezone"`
	CreatedAt      timestamp  `json:"created_at"`
	LocationName   *string    `json:"location_name,omitempty"`
	LocationLocode *string    `json:"location_locode"`
	VesselName     *string    `json:"vessel_name"`
	VesselImo      *string    `json:"vessel_imo"`
	Index          int        `json:"index"`
	VoyageNumber   *string    `json:"voyage_number"`
}

func rawEventResource(b *builder, e *model.RawEvent) *Resource {
	a := rawEventAttributes{OriginalEvent: e.OriginalEvent, Timestamp: tsp(e.EventAt), Estimated: e.Estimated,
		Timezone: e.Timezone, CreatedAt: ts(e.CreatedAt), LocationName: e.LocationName, LocationLocode: e.LocationLocode,
		VesselName: e.VesselName, VesselImo: e.VesselIMO, Index: e.Position, VoyageNumber: e.VoyageNumber}
	if e.Event != "" {
		a.Event = &e.Event
	}
	if e.Estimated {
		a.EstimatedAt = a.Timestamp
	} else {
		a.ActualAt = a.Timestamp
	}
	return &Resource{ID: e.ID, Type: model.RawEventType, Attributes: a, Relationships: b.linkage(e, rawEventShape.members)}
}

// ---------------------------------------------------------------- vessels

// vesselPositionsAttributes are a vessel's with its positions.
type vesselPositionsAttributes struct {
	vesselAttributes
	Positions model.JSON `json:"positions"`
}

// getVessel answers /v2/vessels/{id} for a vessel's id or IMO number. The
// positions history (show_positions) is not kept: the parameters are
// accepted and change nothing.
func (s *server) getVessel(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, vesselItem, (s.res.Vessel), plain(vesselResource))
}

func (s *server) vesselFuturePositions(w http.ResponseWriter, r *http.Request) {
	s.serveFuturePositions(w, r, futureItem, false)
}

func (s *server) vesselFuturePositionsWithCoordinates(w http.ResponseWriter, r *http.Request) {
	s.serveFuturePositions(w, r, futureAt, true)
}

// serveFuturePositions answers a vessel with its future positions
// (resolve.VesselFuturePositions): the account's planned calls, from the
// given coordinates when withCoords.
func (s *server) serveFuturePositions(w http.ResponseWriter, r *http.Request, e endpoint, withCoords bool) {
	ctx := r.Context()
	p, err := parseParams(r, e)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	q := resolve.FuturePositionsQuery{VesselID: r.PathValue("id"), PortID: model.NormalizeID(p.Filters["port_id"])}
	if withCoords {
		lat, err1 := coordinate(p, "latitude", 90)
		lon, err2 := coordinate(p, "longitude", 180)
		if err = firstErr(err1, err2); err != nil {
			jsonapi.WriteError(w, r, err)
			return
		}
		q.Latitude, q.Longitude = &lat, &lon
	}
	v, positions, err := s.res.VesselFuturePositions(ctx, who(r), q)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	b := s.newBuilder(s.baseURL(r), p)
	res := &Resource{ID: v.ID, Type: model.VesselType,
		Attributes: vesselPositionsAttributes{vesselAttributes: vesselAttributesOf(v), Positions: positionsJSON(positions)}}
	jsonapi.WriteDocument(w, r, http.StatusOK, &Document{Data: res, Links: &jsonapi.Links{Self: b.base + r.URL.Path}})
}

// coordinate is the required parameter name, a number within ±limit.
func coordinate(p *params, name string, limit float64) (float64, error) {
	v, ok := p.Filters[name]
	if !ok || v == "" {
		return 0, jsonapi.BadParam(name, "%s is required", name)
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < -limit || f > limit || f != f {
		return 0, jsonapi.BadParam(name, "%s must be a number between -%g and %g", name, limit, limit)
	}
	return f, nil
}

// positionsJSON writes positions as the OpenAPI document's array.
func positionsJSON(ps []model.VesselPosition) model.JSON {
	var b strings.Builder
	b.WriteByte('[')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"latitude":`)
		b.WriteString(num(p.Latitude))
		b.WriteString(`,"longitude":`)
		b.WriteString(num(p.Longitude))
		b.WriteString(`,"heading":`)
		if p.Heading != nil {
			b.WriteString(num(*p.Heading))
		} else {
			b.WriteString("null")
		}
		b.WriteString(`,"timestamp":"`)
		b.WriteString(p.Timestamp.UTC().Format(time.RFC3339))
		b.WriteString(`","estimated":`)
		b.WriteString(strconv.FormatBool(p.Estimated))
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return model.JSON(b.String())
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
