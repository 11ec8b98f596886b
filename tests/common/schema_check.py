#!/usr/bin/env python3
"""Validates a JSON object the plugin writes against a vendored schema (reference/dra/), so the
tests judge it by the schema's own text:

  schema_check.py openapi OPENAPI_JSON SCHEMA_NAME OBJECT_JSON
      a Kubernetes object against components/schemas/SCHEMA_NAME of an OpenAPI v3 document,
      strictly: an unknown field is an error, as with the API server's strict field validation;
  schema_check.py cdi SCHEMA_JSON DEFS_JSON OBJECT_JSON
      a CDI spec against the CDI JSON Schema (draft-07) and the defs.json it references.

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


def openapi_validator(openapi_path, name):
    components = load(openapi_path)["components"]
    if name not in components["schemas"]:
        raise ValueError(f"no schema {name} in {openapi_path}")
    strict(components)
    return jsonschema.Draft7Validator({"components": components,
                                       "$ref": "#/components/schemas/" + name})


def cdi_validator(schema_path, defs_path):
    schema, defs = load(schema_path), load(defs_path)
    resolver = jsonschema.RefResolver(base_uri="schema.json", referrer=schema,
                                      store={"defs.json": defs, "schema.json": schema})
    return jsonschema.Draft7Validator(schema, resolver=resolver)


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    kinds = {"openapi": openapi_validator, "cdi": cdi_validator}
    if len(sys.argv) != 5 or sys.argv[1] not in kinds:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        validator = kinds[sys.argv[1]](sys.argv[2], sys.argv[3])
        obj = load(sys.argv[4])
    except (OSError, ValueError, KeyError) as e:
        print(f"schema_check: {e}", file=sys.stderr)
        return 2
    errors = sorted(validator.iter_errors(obj), key=lambda e: list(e.absolute_path))
    for e in errors:
        print("/".join(str(p) for p in e.absolute_path) + ": " + e.message)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
