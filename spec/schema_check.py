"""Validate a JSON document against one of docs/schema/*.schema.json with
Debian's python3-jsonschema (Draft 2020-12), the schemas' references
resolved among themselves. Usage: schema_check.py SCHEMA_DIR NAME FILE.
Prints one line per problem (the JSON path and what is wrong); exits 1 if
there is any, 2 if a schema itself is not valid."""
import json
import pathlib
import sys

from jsonschema import Draft202012Validator, RefResolver

schema_dir = pathlib.Path(sys.argv[1]).resolve()
store = {}
for path in schema_dir.glob("*.schema.json"):
    schema = json.loads(path.read_text())
    try:
        Draft202012Validator.check_schema(schema)
    except Exception as e:  # a broken schema is the spec's failure, said plainly
        print(f"{path.name}: not a valid schema: {e}")
        sys.exit(2)
    store[path.resolve().as_uri()] = schema
schema = store[(schema_dir / sys.argv[2]).as_uri()]
resolver = RefResolver(base_uri=(schema_dir / sys.argv[2]).as_uri(), referrer=schema, store=store)
data = json.loads(pathlib.Path(sys.argv[3]).read_text())
errors = list(Draft202012Validator(schema, resolver=resolver).iter_errors(data))
for e in errors[:10]:
    print("/" + "/".join(str(p) for p in e.absolute_path) + ": " + e.message[:300])
sys.exit(1 if errors else 0)
