-- The tracking request API (issue 27).
--
-- GET /v2/tracking_requests sorts and filters by updated_at as well as
-- created_at (filter[updated_at][start|end], sort=updated_at): an index
-- serves both at any size.
--
-- A shipment's tracking requests follow its tracking: when
-- line_tracking_stopped_at goes from null to a time (stop_tracking through
-- either API, or the shipping line's stop written by any system), its live
-- requests (pending, awaiting_manifest, created) become tracking_stopped
-- and are no longer polled; when it is cleared (resume_tracking), its
-- stopped requests are created again. The requests' own change trigger
-- then logs the change, from which the tracking_request.* webhook events
-- are raised: one rule, whoever wrote the shipment, in its transaction.

-- +goose Up
CREATE INDEX tracking_requests_account_updated_idx ON tracking_requests (account_id, updated_at, id);

-- +goose StatementBegin
CREATE FUNCTION shipments_track_requests() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.line_tracking_stopped_at IS NULL AND NEW.line_tracking_stopped_at IS NOT NULL THEN
        UPDATE tracking_requests
        SET status = 'tracking_stopped', is_retrying = false, next_poll_at = NULL, updated_at = now()
        WHERE account_id = NEW.account_id AND shipment_id = NEW.id
          AND status IN ('pending', 'awaiting_manifest', 'created');
    ELSIF OLD.line_tracking_stopped_at IS NOT NULL AND NEW.line_tracking_stopped_at IS NULL THEN
        UPDATE tracking_requests
        SET status = 'created', updated_at = now()
        WHERE account_id = NEW.account_id AND shipment_id = NEW.id AND status = 'tracking_stopped';
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER shipments_track_requests AFTER UPDATE OF line_tracking_stopped_at ON shipments
    FOR EACH ROW EXECUTE FUNCTION shipments_track_requests();

-- +goose Down
DROP TRIGGER shipments_track_requests ON shipments;
DROP FUNCTION shipments_track_requests();
DROP INDEX tracking_requests_account_updated_idx;
