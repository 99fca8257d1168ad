from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ExecutionStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EXECUTION_STATUS_UNSPECIFIED: _ClassVar[ExecutionStatus]
    EXECUTION_STATUS_PENDING: _ClassVar[ExecutionStatus]
    EXECUTION_STATUS_RUNNING: _ClassVar[ExecutionStatus]
    EXECUTION_STATUS_COMPLETED: _ClassVar[ExecutionStatus]
    EXECUTION_STATUS_FAILED: _ClassVar[ExecutionStatus]
    EXECUTION_STATUS_CANCELLED: _ClassVar[ExecutionStatus]
    EXECUTION_STATUS_WAITING: _ClassVar[ExecutionStatus]

class SaveMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SAVE_MODE_UPSERT: _ClassVar[SaveMode]
    SAVE_MODE_CREATE: _ClassVar[SaveMode]
    SAVE_MODE_UPDATE: _ClassVar[SaveMode]
EXECUTION_STATUS_UNSPECIFIED: ExecutionStatus
EXECUTION_STATUS_PENDING: ExecutionStatus
EXECUTION_STATUS_RUNNING: ExecutionStatus
EXECUTION_STATUS_COMPLETED: ExecutionStatus
EXECUTION_STATUS_FAILED: ExecutionStatus
EXECUTION_STATUS_CANCELLED: ExecutionStatus
EXECUTION_STATUS_WAITING: ExecutionStatus
SAVE_MODE_UPSERT: SaveMode
SAVE_MODE_CREATE: SaveMode
SAVE_MODE_UPDATE: SaveMode

class Pause(_message.Message):
    __slots__ = ("node_id", "token", "reason", "fields_json", "expires_at_ms", "kind", "waiting_since_ms", "key")
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    FIELDS_JSON_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_MS_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    WAITING_SINCE_MS_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    token: str
    reason: str
    fields_json: str
    expires_at_ms: int
    kind: str
    waiting_since_ms: int
    key: str
    def __init__(self, node_id: _Optional[str] = ..., token: _Optional[str] = ..., reason: _Optional[str] = ..., fields_json: _Optional[str] = ..., expires_at_ms: _Optional[int] = ..., kind: _Optional[str] = ..., waiting_since_ms: _Optional[int] = ..., key: _Optional[str] = ...) -> None: ...

class ExecutionReply(_message.Message):
    __slots__ = ("execution_id", "status", "output_json", "webhook_response_json", "pause", "error", "error_node_id", "workflow_version", "workflow_id")
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_JSON_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_RESPONSE_JSON_FIELD_NUMBER: _ClassVar[int]
    PAUSE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    ERROR_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_VERSION_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    status: ExecutionStatus
    output_json: str
    webhook_response_json: str
    pause: Pause
    error: str
    error_node_id: str
    workflow_version: int
    workflow_id: str
    def __init__(self, execution_id: _Optional[str] = ..., status: _Optional[_Union[ExecutionStatus, str]] = ..., output_json: _Optional[str] = ..., webhook_response_json: _Optional[str] = ..., pause: _Optional[_Union[Pause, _Mapping]] = ..., error: _Optional[str] = ..., error_node_id: _Optional[str] = ..., workflow_version: _Optional[int] = ..., workflow_id: _Optional[str] = ...) -> None: ...

class Execution(_message.Message):
    __slots__ = ("execution_id", "workflow_id", "workflow_name", "workflow_version", "status", "pause", "error", "started_at_ms", "finished_at_ms", "detail_json")
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_NAME_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_VERSION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAUSE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    DETAIL_JSON_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    workflow_id: str
    workflow_name: str
    workflow_version: int
    status: ExecutionStatus
    pause: Pause
    error: str
    started_at_ms: int
    finished_at_ms: int
    detail_json: str
    def __init__(self, execution_id: _Optional[str] = ..., workflow_id: _Optional[str] = ..., workflow_name: _Optional[str] = ..., workflow_version: _Optional[int] = ..., status: _Optional[_Union[ExecutionStatus, str]] = ..., pause: _Optional[_Union[Pause, _Mapping]] = ..., error: _Optional[str] = ..., started_at_ms: _Optional[int] = ..., finished_at_ms: _Optional[int] = ..., detail_json: _Optional[str] = ...) -> None: ...

class ExecuteWorkflowRequest(_message.Message):
    __slots__ = ("workflow_id", "workflow_json", "input_json", "wait_for_completion", "timeout_ms", "trigger_node_id")
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_JSON_FIELD_NUMBER: _ClassVar[int]
    INPUT_JSON_FIELD_NUMBER: _ClassVar[int]
    WAIT_FOR_COMPLETION_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    workflow_json: str
    input_json: str
    wait_for_completion: bool
    timeout_ms: int
    trigger_node_id: str
    def __init__(self, workflow_id: _Optional[str] = ..., workflow_json: _Optional[str] = ..., input_json: _Optional[str] = ..., wait_for_completion: _Optional[bool] = ..., timeout_ms: _Optional[int] = ..., trigger_node_id: _Optional[str] = ...) -> None: ...

class ResumeExecutionRequest(_message.Message):
    __slots__ = ("execution_id", "token", "payload_json", "resumed_by", "wait_for_completion", "timeout_ms")
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_JSON_FIELD_NUMBER: _ClassVar[int]
    RESUMED_BY_FIELD_NUMBER: _ClassVar[int]
    WAIT_FOR_COMPLETION_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    token: str
    payload_json: str
    resumed_by: str
    wait_for_completion: bool
    timeout_ms: int
    def __init__(self, execution_id: _Optional[str] = ..., token: _Optional[str] = ..., payload_json: _Optional[str] = ..., resumed_by: _Optional[str] = ..., wait_for_completion: _Optional[bool] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class GetExecutionRequest(_message.Message):
    __slots__ = ("execution_id",)
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    def __init__(self, execution_id: _Optional[str] = ...) -> None: ...

class ListExecutionsRequest(_message.Message):
    __slots__ = ("status", "workflow_id", "page_size", "page_token")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    status: ExecutionStatus
    workflow_id: str
    page_size: int
    page_token: str
    def __init__(self, status: _Optional[_Union[ExecutionStatus, str]] = ..., workflow_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListExecutionsResponse(_message.Message):
    __slots__ = ("executions", "next_page_token")
    EXECUTIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    executions: _containers.RepeatedCompositeFieldContainer[Execution]
    next_page_token: str
    def __init__(self, executions: _Optional[_Iterable[_Union[Execution, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class CancelExecutionRequest(_message.Message):
    __slots__ = ("execution_id", "reason", "cancelled_by")
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_BY_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    reason: str
    cancelled_by: str
    def __init__(self, execution_id: _Optional[str] = ..., reason: _Optional[str] = ..., cancelled_by: _Optional[str] = ...) -> None: ...

class MigrateExecutionRequest(_message.Message):
    __slots__ = ("execution_id",)
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    def __init__(self, execution_id: _Optional[str] = ...) -> None: ...

class Workflow(_message.Message):
    __slots__ = ("workflow_id", "version", "workflow_json")
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_JSON_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    version: int
    workflow_json: str
    def __init__(self, workflow_id: _Optional[str] = ..., version: _Optional[int] = ..., workflow_json: _Optional[str] = ...) -> None: ...

class SaveWorkflowRequest(_message.Message):
    __slots__ = ("workflow_json", "change_note", "saved_by", "mode", "workflow_id")
    WORKFLOW_JSON_FIELD_NUMBER: _ClassVar[int]
    CHANGE_NOTE_FIELD_NUMBER: _ClassVar[int]
    SAVED_BY_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    workflow_json: str
    change_note: str
    saved_by: str
    mode: SaveMode
    workflow_id: str
    def __init__(self, workflow_json: _Optional[str] = ..., change_note: _Optional[str] = ..., saved_by: _Optional[str] = ..., mode: _Optional[_Union[SaveMode, str]] = ..., workflow_id: _Optional[str] = ...) -> None: ...

class GetWorkflowRequest(_message.Message):
    __slots__ = ("workflow_id",)
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    def __init__(self, workflow_id: _Optional[str] = ...) -> None: ...

class ListWorkflowsRequest(_message.Message):
    __slots__ = ("include_archived", "page_size", "page_token")
    INCLUDE_ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    include_archived: bool
    page_size: int
    page_token: str
    def __init__(self, include_archived: _Optional[bool] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListWorkflowsResponse(_message.Message):
    __slots__ = ("workflows", "next_page_token")
    WORKFLOWS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    workflows: _containers.RepeatedCompositeFieldContainer[Workflow]
    next_page_token: str
    def __init__(self, workflows: _Optional[_Iterable[_Union[Workflow, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class SetWorkflowActiveRequest(_message.Message):
    __slots__ = ("workflow_id", "active")
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    active: bool
    def __init__(self, workflow_id: _Optional[str] = ..., active: _Optional[bool] = ...) -> None: ...

class ArchiveWorkflowRequest(_message.Message):
    __slots__ = ("workflow_id", "archived_by")
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    ARCHIVED_BY_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    archived_by: str
    def __init__(self, workflow_id: _Optional[str] = ..., archived_by: _Optional[str] = ...) -> None: ...

class ResetBuiltinRequest(_message.Message):
    __slots__ = ("workflow_id", "reset_by")
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    RESET_BY_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    reset_by: str
    def __init__(self, workflow_id: _Optional[str] = ..., reset_by: _Optional[str] = ...) -> None: ...

class WorkflowVersion(_message.Message):
    __slots__ = ("version", "change_note", "saved_by", "saved_at_ms", "workflow_json", "diff_json")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CHANGE_NOTE_FIELD_NUMBER: _ClassVar[int]
    SAVED_BY_FIELD_NUMBER: _ClassVar[int]
    SAVED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_JSON_FIELD_NUMBER: _ClassVar[int]
    DIFF_JSON_FIELD_NUMBER: _ClassVar[int]
    version: int
    change_note: str
    saved_by: str
    saved_at_ms: int
    workflow_json: str
    diff_json: str
    def __init__(self, version: _Optional[int] = ..., change_note: _Optional[str] = ..., saved_by: _Optional[str] = ..., saved_at_ms: _Optional[int] = ..., workflow_json: _Optional[str] = ..., diff_json: _Optional[str] = ...) -> None: ...

class ListWorkflowVersionsRequest(_message.Message):
    __slots__ = ("workflow_id", "page_size", "page_token")
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    page_size: int
    page_token: str
    def __init__(self, workflow_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListWorkflowVersionsResponse(_message.Message):
    __slots__ = ("versions", "next_page_token")
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    versions: _containers.RepeatedCompositeFieldContainer[WorkflowVersion]
    next_page_token: str
    def __init__(self, versions: _Optional[_Iterable[_Union[WorkflowVersion, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetWorkflowVersionRequest(_message.Message):
    __slots__ = ("workflow_id", "version")
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    version: int
    def __init__(self, workflow_id: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class RevertWorkflowRequest(_message.Message):
    __slots__ = ("workflow_id", "version", "saved_by", "change_note")
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SAVED_BY_FIELD_NUMBER: _ClassVar[int]
    CHANGE_NOTE_FIELD_NUMBER: _ClassVar[int]
    workflow_id: str
    version: int
    saved_by: str
    change_note: str
    def __init__(self, workflow_id: _Optional[str] = ..., version: _Optional[int] = ..., saved_by: _Optional[str] = ..., change_note: _Optional[str] = ...) -> None: ...

class ListNodeTypesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class NodeType(_message.Message):
    __slots__ = ("type", "description", "config_schema_json", "outputs", "error")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    CONFIG_SCHEMA_JSON_FIELD_NUMBER: _ClassVar[int]
    OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    type: str
    description: str
    config_schema_json: str
    outputs: _containers.RepeatedScalarFieldContainer[str]
    error: str
    def __init__(self, type: _Optional[str] = ..., description: _Optional[str] = ..., config_schema_json: _Optional[str] = ..., outputs: _Optional[_Iterable[str]] = ..., error: _Optional[str] = ...) -> None: ...

class ListNodeTypesResponse(_message.Message):
    __slots__ = ("node_types",)
    NODE_TYPES_FIELD_NUMBER: _ClassVar[int]
    node_types: _containers.RepeatedCompositeFieldContainer[NodeType]
    def __init__(self, node_types: _Optional[_Iterable[_Union[NodeType, _Mapping]]] = ...) -> None: ...

class SendEventRequest(_message.Message):
    __slots__ = ("type", "key", "data_json")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    DATA_JSON_FIELD_NUMBER: _ClassVar[int]
    type: str
    key: str
    data_json: str
    def __init__(self, type: _Optional[str] = ..., key: _Optional[str] = ..., data_json: _Optional[str] = ...) -> None: ...

class SendEventResponse(_message.Message):
    __slots__ = ("resumed_execution_ids",)
    RESUMED_EXECUTION_IDS_FIELD_NUMBER: _ClassVar[int]
    resumed_execution_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, resumed_execution_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class TriggerWebhookRequest(_message.Message):
    __slots__ = ("method", "path", "headers_json", "query_json", "body_json", "timeout_ms")
    METHOD_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    HEADERS_JSON_FIELD_NUMBER: _ClassVar[int]
    QUERY_JSON_FIELD_NUMBER: _ClassVar[int]
    BODY_JSON_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    method: str
    path: str
    headers_json: str
    query_json: str
    body_json: str
    timeout_ms: int
    def __init__(self, method: _Optional[str] = ..., path: _Optional[str] = ..., headers_json: _Optional[str] = ..., query_json: _Optional[str] = ..., body_json: _Optional[str] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class HealthRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class HealthResponse(_message.Message):
    __slots__ = ("database_ok", "runner_id", "message")
    DATABASE_OK_FIELD_NUMBER: _ClassVar[int]
    RUNNER_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    database_ok: bool
    runner_id: str
    message: str
    def __init__(self, database_ok: _Optional[bool] = ..., runner_id: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...
