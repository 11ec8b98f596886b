#!/usr/bin/env python3
"""Validates a CDI spec file against the CDI JSON Schema (schema.json with its defs.json, draft-07)
of the container-device-interface project, as vendored in reference/dra/. The tests call it on
the CDI specs the DRA plugin writes.

  cdi_schema_check.py SCHEMA_JSON DEFS_JSON SPEC_JSON
  exit 0 valid; 1 invalid (each problem on its own line); 2 unusable input
"""
import json
import sys

import jsonschema


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1]) as f:
            schema = json.load(f)
        with open(sys.argv[2]) as f:
            defs = json.load(f)
        with open(sys.argv[3]) as f:
            spec = json.load(f)
    except (OSError, ValueError) as e:
        print(f"cdi_schema_check: {e}", file=sys.stderr)
        return 2
    resolver = jsonschema.RefResolver(base_uri="schema.json", referrer=schema,
                                      store={"defs.json": defs, "schema.json": schema})
    validator = jsonschema.Draft7Validator(schema, resolver=resolver)
    errors = sorted(validator.iter_errors(spec), key=lambda e: list(e.absolute_path))
    for e in errors:
        print("/".join(str(p) for p in e.absolute_path) + ": " + e.message)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
