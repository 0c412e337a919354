-- Servers cache API key → principal in memory. Whatever can change what a
-- key stands for — revoking it, deleting it (also through an account or
-- user deleted with CASCADE), changing its role, owner or hash — is
-- announced on the channel shipgraph_tokens with the token id, so every
-- running server forgets it at once, even when the change is plain SQL.
-- TRUNCATE (the seeder's --force) announces '*': forget every key.
-- Updates of last_used_at alone announce nothing.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION api_tokens_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('shipgraph_tokens', '*');
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('shipgraph_tokens', OLD.id::text);
    ELSIF (OLD.revoked_at, OLD.role, OLD.account_id, OLD.user_id, OLD.token_sha256, OLD.id)
        IS DISTINCT FROM (NEW.revoked_at, NEW.role, NEW.account_id, NEW.user_id, NEW.token_sha256, NEW.id) THEN
        PERFORM pg_notify('shipgraph_tokens', OLD.id::text);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER api_tokens_notify_change
    AFTER UPDATE OF revoked_at, role, account_id, user_id, token_sha256, id OR DELETE ON api_tokens
    FOR EACH ROW EXECUTE FUNCTION api_tokens_notify();
CREATE TRIGGER api_tokens_notify_truncate
    AFTER TRUNCATE ON api_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION api_tokens_notify();

-- +goose Down
DROP TRIGGER api_tokens_notify_truncate ON api_tokens;
DROP TRIGGER api_tokens_notify_change ON api_tokens;
DROP FUNCTION api_tokens_notify();
