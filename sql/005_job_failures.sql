-- Jobs that end and tell: a client sees, on the operation, how its job fared.
--
-- An operation shows how its job's delivery goes (attempts, next attempt,
-- the sanitized last error): GET /v1/operations/{id} finds the job's event
-- by the operation id every job payload carries. Without this index that
-- lookup would read every event of the workspace.
CREATE INDEX outbox_events_operation_idx ON outbox_events (workspace_id, (event_payload->>'operation_id'));
