"""Real object ids for the second schemathesis pass: reads the demo organisation's objects over
the API (with its key) and prints a schemathesis config whose dictionary of ids is bound to
every `{id}`/`{signalId}` path parameter, so the object operations meet objects that exist.

    python .ci/fuzz_ids.py http://127.0.0.1:PORT/v1 KEY > fuzz-ids.toml
"""

import json
import sys
import urllib.request

# (list path, id field, the object paths whose `{id}`/`{signalId}` take those ids)
LISTS = [
    ("/webhooks?limit=100", "webhook_id", "^/v1/webhooks/"),
    ("/bias/amplification?limit=100", "id", "^/v1/bias/amplification/\\{id\\}"),
    ("/model-fairness-signals?limit=100", "id", "^/v1/(model-fairness-signals|bias/amplification/analyze)/"),
    ("/audit-trail?limit=20", "entry_id", "^/v1/audit-trail/\\{id\\}"),
    ("/bias/feed?limit=20", "alert_id", "^/v1/bias/feed/"),
    ("/exports?limit=20", "export_id", "^/v1/export/\\{id\\}"),
]


def get(base: str, key: str, path: str) -> dict:
    if not base.startswith("http://127.0.0.1:"):
        raise SystemExit("the fuzz server is on loopback: http://127.0.0.1:PORT/v1")
    request = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {key}"})  # noqa: S310
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
        return json.load(response)


def main() -> None:
    base, key = sys.argv[1], sys.argv[2]
    dictionaries, operations = [], []
    for n, (path, field, pattern) in enumerate(LISTS):
        ids = sorted({str(row[field]) for row in get(base, key, path).get("data", []) if row.get(field)})
        if not ids:
            raise SystemExit(f"no objects at {path}: did seed_demo run?")
        dictionaries.append(f"ids{n} = {{ values = {json.dumps(ids)} }}")
        operations.append((pattern, f"ids{n}"))
    print("[dictionaries]")
    print("\n".join(dictionaries))
    for pattern, name in operations:
        print()
        print("[[operations]]")
        print(f"include-path-regex = {json.dumps(pattern)}")
        print(
            f'parameters = {{ "path.id" = {{ dictionary = "{name}", probability = 0.9 }}, '
            f'"path.signalId" = {{ dictionary = "{name}", probability = 0.9 }} }}'
        )


if __name__ == "__main__":
    main()
