"""The route table: every route the webserver serves, registered and documented from here."""

from __future__ import annotations

from webserver import api_executions as ex
from webserver import api_workflows as wf
from webserver.health import healthz
from webserver.openapi import openapi_document
from webserver.routespec import ANY_METHOD, Auth, Body, Param, Route
from webserver.webhooks import handle_webhook

API = "/api/v1"

_PAGE = (
    Param("pageSize", "integer", "Items per page (the runner's default when absent)."),
    Param("pageToken", "string", "The nextPageToken of the previous page."),
)
_WAIT_TIMEOUT = Param(
    "timeout",
    "number",
    "Seconds to wait for the execution (default SMARTBOTIC_WEBHOOK_TIMEOUT_SECONDS); the run goes on.",
)
_STATUSES = ("pending", "running", "completed", "failed", "cancelled", "waiting")

# One line-group per route reads as a table; keep the formatter out of it.
# fmt: off
ROUTES: tuple[Route, ...] = (
    Route("GET", "/healthz", healthz, "health", "Runner and database reachability", 200, "Health",
          auth=Auth.NONE, statuses=(503,)),
    Route("GET", "/openapi.json", openapi_document, "openapi", "This document", 200, "OpenApiDocument",
          auth=Auth.NONE, calls_runner=False),
    Route(ANY_METHOD, "/webhook/{path:.*}", handle_webhook, "webhook",
          "Trigger the active workflow whose webhook trigger serves this method and path", 200, "WebhookResponse",
          auth=Auth.NONE, body=Body("AnyValue", "Any body: parsed when JSON, else passed as text", required=False),
          statuses=(202, 404, 405, 409), accepted_schema="Accepted"),
    # workflows
    Route("POST", f"{API}/workflows", wf.create_workflow, "createWorkflow", "Create a workflow (version 1)", 201,
          "Workflow", body=Body("WorkflowInput", "The definition; optional changeNote"), statuses=(409,)),
    Route("GET", f"{API}/workflows", wf.list_workflows, "listWorkflows", "List workflows", 200, "WorkflowList",
          query=(Param("includeArchived", "boolean", "Include archived workflows."), *_PAGE)),
    Route("GET", f"{API}/workflows/{{id}}", wf.get_workflow, "getWorkflow", "Read a workflow", 200, "Workflow",
          statuses=(404,)),
    Route("PUT", f"{API}/workflows/{{id}}", wf.update_workflow, "updateWorkflow",
          "Save a new version (read-only fields ignored)", 200, "Workflow",
          body=Body("WorkflowInput", "The definition as GET returned it, edited; optional changeNote"),
          statuses=(404, 409)),
    Route("DELETE", f"{API}/workflows/{{id}}", wf.archive_workflow, "archiveWorkflow", "Archive a workflow", 200,
          "Workflow", statuses=(404,)),
    Route("POST", f"{API}/workflows/{{id}}/activate", wf.activate_workflow, "activateWorkflow",
          "Activate (not a new version)", 200, "Workflow", statuses=(404, 409)),
    Route("POST", f"{API}/workflows/{{id}}/deactivate", wf.deactivate_workflow, "deactivateWorkflow",
          "Deactivate (not a new version)", 200, "Workflow", statuses=(404,)),
    Route("GET", f"{API}/workflows/{{id}}/versions", wf.list_versions, "listWorkflowVersions",
          "Version history with change notes", 200, "VersionList", query=_PAGE, statuses=(404,)),
    Route("GET", f"{API}/workflows/{{id}}/versions/{{version}}", wf.get_version, "getWorkflowVersion",
          "One version's snapshot and its RFC 6902 diff from the previous one", 200, "VersionDetail", statuses=(404,)),
    Route("POST", f"{API}/workflows/{{id}}/versions/{{version}}/revert", wf.revert_workflow, "revertWorkflow",
          "Republish version v as a new version", 200, "Workflow",
          body=Body("ChangeNoteInput", "Optional changeNote", required=False), statuses=(404, 409)),
    Route("POST", f"{API}/workflows/{{id}}/reset-builtin", wf.reset_builtin, "resetBuiltinWorkflow",
          "Restore a built-in workflow's shipped definition as a new version", 200, "Workflow", statuses=(404, 409)),
    Route("POST", f"{API}/workflows/{{id}}/run", ex.run_workflow, "runWorkflow",
          "Manual run; body = input. 202 while queued or still running", 200, "ExecutionReply",
          query=(Param("wait", "boolean", "false: queue the run and answer at once (202)."), _WAIT_TIMEOUT,
                 Param("triggerNodeId", "string", "The trigger to start from (default: the first).")),
          body=Body("AnyValue", "The run's input", required=False), statuses=(202, 404, 409)),
    # executions
    Route("GET", f"{API}/executions", ex.list_executions, "listExecutions", "List executions", 200, "ExecutionList",
          query=(Param("status", "string", "Only this status.", enum=_STATUSES),
                 Param("workflowId", "string", "Only this workflow's."), *_PAGE)),
    Route("GET", f"{API}/executions/pending", ex.list_pending, "listPendingExecutions",
          "Waiting executions, newest first (never tokens)", 200, "PendingList",
          query=(Param("workflowId", "string", "Only this workflow's."), *_PAGE)),
    Route("GET", f"{API}/executions/{{id}}", ex.get_execution, "getExecution", "Read an execution", 200, "Execution",
          statuses=(404,)),
    Route("POST", f"{API}/executions/{{id}}/cancel", ex.cancel_execution, "cancelExecution", "Cancel an execution",
          200, "Execution", body=Body("CancelInput", "Optional reason", required=False), statuses=(404, 409)),
    Route("POST", f"{API}/executions/{{id}}/migrate", ex.migrate_execution, "migrateExecution",
          "Move a waiting execution onto the workflow's current version", 200, "Execution", statuses=(404, 409)),
    Route("POST", f"{API}/executions/{{id}}/resume", ex.resume_execution, "resumeExecution",
          "Answer a pause; authorised by its token", 200, "ExecutionReply", auth=Auth.OPTIONAL,
          query=(_WAIT_TIMEOUT,), body=Body("ResumeInput", "{token, approved, data, by?}"),
          statuses=(202, 403, 404, 409, 410)),
    Route("POST", f"{API}/events", ex.send_event, "sendEvent", "Deliver an event to waiting executions", 200,
          "EventResult", body=Body("EventInput", "{type, key, data}")),
    Route("GET", f"{API}/nodes", ex.list_node_types, "listNodeTypes", "The node catalog", 200, "NodeTypeList"),
)
# fmt: on
