-- Up Migration

-- "Activity" is Temporal's word for a step of a workflow; the log of every REST and MCP call is the call log.
ALTER TABLE activity_log RENAME TO call_log;
ALTER INDEX activity_log_pkey RENAME TO call_log_pkey;
ALTER INDEX activity_log_org RENAME TO call_log_org;
ALTER INDEX activity_log_org_key RENAME TO call_log_org_key;
ALTER TABLE call_log RENAME CONSTRAINT activity_log_org_id_fkey TO call_log_org_id_fkey;
ALTER TABLE call_log RENAME CONSTRAINT activity_log_api_key_id_fkey TO call_log_api_key_id_fkey;
ALTER TABLE call_log RENAME CONSTRAINT activity_log_user_id_fkey TO call_log_user_id_fkey;
ALTER TABLE call_log RENAME CONSTRAINT activity_log_interface_check TO call_log_interface_check;
COMMENT ON TABLE call_log IS 'One row per authenticated call of a catalog operation (REST) or tool (MCP): who called, through which interface, how it ended and how long it took';
COMMENT ON COLUMN call_log.operation IS 'The catalog operation (tasks.create), or the name asked for when it matches none (an unknown MCP tool)';
COMMENT ON COLUMN call_log.status IS 'The HTTP status for REST; for MCP tool calls 200, or the status of the error the tool answered';
-- Api processes of the previous version keep writing under the old name while a deployment rolls over.
CREATE VIEW activity_log AS SELECT * FROM call_log;

-- Down Migration

DROP VIEW activity_log;
ALTER TABLE call_log RENAME CONSTRAINT call_log_interface_check TO activity_log_interface_check;
ALTER TABLE call_log RENAME CONSTRAINT call_log_user_id_fkey TO activity_log_user_id_fkey;
ALTER TABLE call_log RENAME CONSTRAINT call_log_api_key_id_fkey TO activity_log_api_key_id_fkey;
ALTER TABLE call_log RENAME CONSTRAINT call_log_org_id_fkey TO activity_log_org_id_fkey;
ALTER INDEX call_log_org_key RENAME TO activity_log_org_key;
ALTER INDEX call_log_org RENAME TO activity_log_org;
ALTER INDEX call_log_pkey RENAME TO activity_log_pkey;
ALTER TABLE call_log RENAME TO activity_log;
