"""The OpenAPI document describes exactly the routes the app serves."""

from __future__ import annotations

from typing import Any

from runner.settings import Settings
from tests.webserver.conftest import AppClient
from webserver.app import make_app
from webserver.openapi import build_openapi
from webserver.routes import ROUTES
from webserver.routespec import ANY_METHOD_EXPANDS_TO, openapi_path

HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def _registered() -> set[tuple[str, str]]:
    app = make_app(Settings())
    pairs: set[tuple[str, str]] = set()
    for route in app.router.routes():
        path = openapi_path(route.resource.canonical) if route.resource is not None else ""
        methods = ANY_METHOD_EXPANDS_TO if route.method == "*" else (route.method.lower(),)
        pairs |= {(method, path) for method in methods}
    return pairs


def _documented(doc: dict[str, Any]) -> set[tuple[str, str]]:
    return {(method, path) for path, item in doc["paths"].items() for method in item if method in HTTP_METHODS}


def test_document_and_registered_routes_match_both_ways() -> None:
    doc = build_openapi(ROUTES)
    registered, documented = _registered(), _documented(doc)
    assert registered - documented == set(), "served but not documented"
    assert documented - registered == set(), "documented but not served"
    assert ("post", "/api/v1/executions/{id}/resume") in registered
    assert ("patch", "/webhook/{path}") in registered


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [ref for value in node.values() for ref in _refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _refs(value)]
    return []


def test_every_reference_resolves() -> None:
    doc = build_openapi(ROUTES)
    schemas = doc["components"]["schemas"]
    for ref in _refs(doc):
        assert ref.startswith("#/components/schemas/") and ref.rsplit("/", 1)[1] in schemas, ref


def test_every_operation_documents_params_success_and_errors() -> None:
    doc = build_openapi(ROUTES)
    operation_ids: list[str] = []
    for path, item in doc["paths"].items():
        for method, op in item.items():
            operation_ids.append(op["operationId"])
            declared = {p["name"] for p in op["parameters"] if p["in"] == "path"}
            assert declared == set(path.replace("}", "{").split("{")[1::2]), (method, path)
            statuses = set(op["responses"])
            assert "500" in statuses, (method, path)
            assert any(s.startswith("2") for s in statuses), (method, path)
            if op["security"] == [{"bearerAuth": []}]:
                assert "401" in statuses, (method, path)
            if "requestBody" in op:
                assert {"400", "413"} <= statuses, (method, path)
    assert len(operation_ids) == len(set(operation_ids))


def test_auth_is_documented_per_route() -> None:
    paths = build_openapi(ROUTES)["paths"]
    assert paths["/api/v1/workflows"]["get"]["security"] == [{"bearerAuth": []}]
    assert {} in paths["/api/v1/executions/{id}/resume"]["post"]["security"]
    assert paths["/healthz"]["get"]["security"] == []
    assert paths["/webhook/{path}"]["post"]["security"] == []


def test_resume_documents_its_statuses() -> None:
    responses = build_openapi(ROUTES)["paths"]["/api/v1/executions/{id}/resume"]["post"]["responses"]
    assert {"200", "202", "400", "403", "404", "409", "410", "503"} <= set(responses)


async def test_served_document_is_the_generated_one(app_client: AppClient) -> None:
    async with app_client() as client:
        resp = await client.get("/openapi.json")
        assert resp.status == 200
        doc = await resp.json()
    assert doc == build_openapi(ROUTES)
    assert doc["openapi"] == "3.1.0"
