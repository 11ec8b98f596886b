#!/usr/bin/env python3
"""Validates a JSON object the plugin writes against a vendored schema (reference/dra/), so the
tests judge it by the schema's own text:

  schema_check.py openapi OPENAPI_JSON SCHEMA_NAME OBJECT_JSON
      a Kubernetes object against components/schemas/SCHEMA_NAME of an OpenAPI v3 document,
      strictly: an unknown field is an error, as with the API server's strict field validation;
  schema_check.py cdi SCHEMA_JSON DEFS_JSON OBJECT_JSON
      a CDI spec against the CDI JSON Schema (draft-07) and the defs.json it references;
  schema_check.py openapi-kinds OPENAPI_JSON OBJECTS_JSON
      each object of the JSON array OBJECTS_JSON whose apiVersion the OpenAPI document defines,
      against the schema whose x-kubernetes-group-version-kind names its apiVersion and kind
      (strictly, as above); a kind of that apiVersion the document lacks is an error, objects of
      other apiVersions are left out. Problems are printed as "Kind/name: path: reason".

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


def kind_validators(openapi_path):
    """The apiVersions the OpenAPI document serves (from its /apis/GROUP/VERSION/ paths) and
    {(apiVersion, kind): validator} for every kind of those it defines. (Shared kinds such as
    DeleteOptions name every apiVersion; only the served ones count.)"""
    document = load(openapi_path)
    served = {"/".join(path.split("/")[2:4]) for path in document.get("paths", {})
              if path.startswith("/apis/") and len(path.split("/")) > 4}
    components = document["components"]
    strict(components)
    validators = {}
    for name, schema in components["schemas"].items():
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            api_version = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
            if api_version not in served:
                continue
            validators[(api_version, gvk["kind"])] = jsonschema.Draft7Validator(
                {"components": components, "$ref": "#/components/schemas/" + name})
    return served, validators


def check_kinds(openapi_path, objects_path):
    """Exit code and problem lines of the openapi-kinds command."""
    api_versions, validators = kind_validators(openapi_path)
    objects = load(objects_path)
    if not isinstance(objects, list):
        raise ValueError(f"{objects_path} is not a JSON array of objects")
    problems, checked = [], 0
    for obj in objects:
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if api_version not in api_versions:
            continue
        where = f"{kind}/{obj.get('metadata', {}).get('name')}"
        validator = validators.get((api_version, kind))
        if validator is None:
            problems.append(f"{where}: no schema for kind {kind} in {api_version}")
            continue
        checked += 1
        for e in sorted(validator.iter_errors(obj), key=lambda e: list(e.absolute_path)):
            problems.append(f"{where}: " + "/".join(str(p) for p in e.absolute_path) + ": " + e.message)
    return problems, checked


def cdi_validator(schema_path, defs_path):
    schema, defs = load(schema_path), load(defs_path)
    resolver = jsonschema.RefResolver(base_uri="schema.json", referrer=schema,
                                      store={"defs.json": defs, "schema.json": schema})
    return jsonschema.Draft7Validator(schema, resolver=resolver)


def load(path):
    with open(path) as f:
        return json.load(f)


def main_kinds(args):
    try:
        problems, checked = check_kinds(*args)
    except (OSError, ValueError, KeyError) as e:
        print(f"schema_check: {e}", file=sys.stderr)
        return 2
    for line in problems:
        print(line)
    if not problems:
        print(f"schema_check: {checked} object(s) valid against {args[0]}")
    return 1 if problems else 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "openapi-kinds":
        return main_kinds(sys.argv[2:])
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
