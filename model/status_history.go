package model

import "time"

// ContainerStatusAfter is a container's status after its latest actual
// transport event of each raw name (the event's name without
// "container.transport."): what the tracking engine sets current_status to,
// and what the status history reads the past from. Terminal availability
// (available, not_available) comes from terminal checks, not events, so
// the history shows a discharged container as grounded.
var ContainerStatusAfter = map[string]ContainerStatus{
	"empty_out": "new", "full_in": "new",
	"vessel_loaded": "on_ship", "vessel_departed": "on_ship", "vessel_arrived": "on_ship",
	"transshipment_arrived": "on_ship", "transshipment_discharged": "on_ship", "transshipment_loaded": "on_ship",
	"transshipment_departed": "on_ship", "feeder_arrived": "on_ship", "feeder_discharged": "on_ship",
	"feeder_loaded": "on_ship", "feeder_departed": "on_ship",
	"vessel_discharged": "grounded",
	"rail_loaded":       "on_rail", "rail_departed": "on_rail", "rail_arrived": "on_rail", "rail_unloaded": "grounded",
	"full_out": "picked_up", "delivered": "delivered", "empty_in": "empty_returned",
}

// MaxStatusHistoryDays bounds the days of one status history.
const MaxStatusHistoryDays = 62

// ContainerStatusDay is one day of an account's container status history:
// how many containers were in each status when the day ended (At: the
// day's end, or the moment asked for a day not yet over).
type ContainerStatusDay struct {
	Day    time.Time               `json:"day"`
	At     time.Time               `json:"at"`
	Counts []*ContainerStatusCount `json:"counts"`
}

// ContainerStatusCount is how many containers were in one status.
type ContainerStatusCount struct {
	Status ContainerStatus `json:"status"`
	Count  int             `json:"count"`
}
