#!/usr/bin/env python3
"""Validates one Kubernetes object (JSON, from a file) against a schema of a vendored OpenAPI v3
document, strictly: an unknown field is an error, as with the API server's strict field
validation. The tests call it on what the plugin writes (DRA ResourceSlices).

  k8s_schema_check.py OPENAPI_JSON SCHEMA_NAME OBJECT_JSON
  exit 0 valid; 1 invalid (each problem on its own line: JSON path and reason); 2 unusable input
"""
import json
import sys

import jsonschema


def strict(node):
    """Every object schema with properties gets additionalProperties: false."""
    if isinstance(node, dict):
        if "properties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
        for value in node.values():
            strict(value)
    elif isinstance(node, list):
        for value in node:
            strict(value)


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1]) as f:
            openapi = json.load(f)
        with open(sys.argv[3]) as f:
            obj = json.load(f)
    except (OSError, ValueError) as e:
        print(f"k8s_schema_check: {e}", file=sys.stderr)
        return 2
    components = openapi["components"]
    if sys.argv[2] not in components["schemas"]:
        print(f"k8s_schema_check: no schema {sys.argv[2]}", file=sys.stderr)
        return 2
    strict(components)
    root = {"components": components, "$ref": "#/components/schemas/" + sys.argv[2]}
    validator = jsonschema.Draft7Validator(root)
    errors = sorted(validator.iter_errors(obj), key=lambda e: list(e.absolute_path))
    for e in errors:
        print("/".join(str(p) for p in e.absolute_path) + ": " + e.message)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
