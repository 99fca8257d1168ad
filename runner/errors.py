"""Errors the service reports to callers: a gRPC code, a message a person can act on,
and an optional machine-readable reason (sent as trailing metadata ``smartbotic-error``)."""

from __future__ import annotations

import grpc


class ServiceError(Exception):
    def __init__(self, code: grpc.StatusCode, message: str, *, reason: str = "", allow: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason
        self.allow = allow


def not_found(what: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.NOT_FOUND, what, reason="not_found")


def invalid(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, message, reason="invalid")


def conflict(message: str, *, reason: str = "conflict") -> ServiceError:
    return ServiceError(grpc.StatusCode.FAILED_PRECONDITION, message, reason=reason)
