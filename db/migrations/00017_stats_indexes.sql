-- Grouped counts (containerStats, shipmentStats; db/stats.go): one index
-- per list that holds, beside the account, every column a grouping reads,
-- so a count of one account is an index-only scan of narrow entries
-- instead of a read of its wide rows (holds and fees jsonb, forty-odd
-- columns). The terminal leads after the account: a count filtered by
-- terminals (podTerminalIds) reads their ranges alone.
--
-- containers: status, terminal, last free day, and the shipment id for the
-- join to the shipment's line, port of discharge and ETA.
-- shipments: terminal, line, port of discharge, ETA, and the id the
-- containers' join looks up.

-- +goose Up
CREATE INDEX containers_account_stats_idx ON containers (account_id, pod_terminal_id)
    INCLUDE (current_status, pickup_lfd, shipment_id);
CREATE INDEX shipments_account_stats_idx ON shipments (account_id, pod_terminal_id)
    INCLUDE (id, shipping_line_scac, port_of_discharge_id, pod_eta_at);

-- +goose Down
DROP INDEX shipments_account_stats_idx;
DROP INDEX containers_account_stats_idx;
