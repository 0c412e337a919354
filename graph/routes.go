package graph

import (
	"context"
	"encoding/json"

	"shipgraph/model"
)

// containerMap is the GeoJSON document of /v2/containers/{id}/map_geojson
// (resolve.RouteMap) as a JSON value; null for a container the account
// does not have.
func (r *queryResolver) containerMap(ctx context.Context, id string) (model.JSON, error) {
	fc, err := orNull(r.Res.ContainerMap(ctx, who(ctx), id))
	if fc == nil || err != nil {
		return nil, err
	}
	return json.Marshal(fc)
}
