-- 032_destination_states_keep: a destination's record is forgotten once
-- the keep of its last write runs out (ports.DestinationStates.Swap).
--
-- A fleet calls every shop, endpoint and host its tenants name, and each
-- has a record (020): hundreds of thousands over the service's life, most
-- called for a while and never again. A record whose keep ran out holds
-- nothing a worker needs (the Gate gives keep 0, for ever, only to a
-- destination paused until resumed): forgetting it starts the destination
-- over at its configured quota, as on its first call.
--
--   expires_at  when the record may be deleted (NULL: never); the adapter
--               deletes a bounded batch of expired records now and then
--               (destination_states_sql.go, sweepDestinationStates), by
--               this partial index.
ALTER TABLE destination_states ADD COLUMN expires_at timestamptz;

CREATE INDEX destination_states_expires_at ON destination_states (expires_at)
    WHERE expires_at IS NOT NULL;
