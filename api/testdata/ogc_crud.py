"""A client of OGC API - Features Part 4 on a running mapcommons: adds,
reads, patches, replaces and deletes an item with Python's urllib, with
If-Match; reads the items back with OWSLib's Features when it is installed
(its Debian version has no writes). Prints one JSON line: what it saw.

usage: ogc_crud.py LANDING_URL COLLECTION_ID USER PASSWORD
"""

import base64
import json
import sys
import urllib.error
import urllib.request

landing, coll, user, password = sys.argv[1:5]
auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
items = f"{landing}/collections/{coll}/items"
seen = {"steps": []}


def call(method, url, body=None, ctype="application/geo+json", headers=None, creds=True):
    """One request: (status, headers, parsed JSON body or None)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Accept", "application/geo+json, application/json")
    if data is not None:
        req.add_header("Content-Type", ctype)
    if creds:
        req.add_header("Authorization", auth)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req) as r:
            raw, status, hdrs = r.read(), r.status, r.headers
    except urllib.error.HTTPError as e:
        raw, status, hdrs = e.read(), e.code, e.headers
    doc = json.loads(raw) if raw else None
    seen["steps"].append(f"{method} {url.removeprefix(landing)} {status}")
    return status, hdrs, doc


def fail(msg):
    seen["error"] = msg
    print(json.dumps(seen))
    sys.exit(0)


_, _, conf = call("GET", f"{landing}/conformance")
seen["conformance"] = [c for c in conf["conformsTo"] if "ogcapi-features-4" in c]

# Create: 201 and the Location of the new item.
status, hdrs, created = call("POST", items, {"type": "Feature", "geometry": {"type": "Point", "coordinates": [-78.6, 35.8]},
                                             "properties": {"name": "Raleigh", "n": 7}})
if status != 201:
    fail(f"POST: {status} {created}")
location = hdrs["Location"]
seen["location"] = location
fid = str(created["id"])
status, hdrs, item = call("GET", location)
etag = hdrs["ETag"]
seen["created"] = item["properties"]

# Update (merge patch) with the item's ETag: 200 and a new ETag.
status, hdrs, patched = call("PATCH", location, {"properties": {"name": "Raleigh, NC", "n": None}},
                             ctype="application/merge-patch+json", headers={"If-Match": etag})
if status != 200:
    fail(f"PATCH: {status} {patched}")
seen["patched"] = patched["properties"]
seen["patched_geometry"] = patched["geometry"]
new_etag = hdrs["ETag"]
seen["etag_moved"] = new_etag != etag

# The old ETag is stale: 412, and the item is unchanged.
status, _, stale = call("PUT", location, {"type": "Feature", "geometry": None, "properties": {"name": "lost"}},
                        headers={"If-Match": etag})
seen["stale_status"] = status

# Replace with the new ETag.
status, hdrs, replaced = call("PUT", location, {"type": "Feature", "id": int(fid), "geometry": {"type": "Point", "coordinates": [-80.8, 35.2]},
                                                "properties": {"name": "Charlotte"}}, headers={"If-Match": new_etag})
if status != 200:
    fail(f"PUT: {status} {replaced}")
seen["replaced"] = replaced["properties"]

# Read it back: with OWSLib when it is there, else urllib.
try:
    from owslib.ogcapi.features import Features
    from owslib.util import Authentication

    api = Features(landing, auth=Authentication(user, password))
    got = api.collection_item(coll, fid)
    listed = api.collection_items(coll, limit=1000)
    seen["owslib"] = True
except ImportError:
    _, _, got = call("GET", location)
    _, _, listed = call("GET", items + "?limit=1000")
    seen["owslib"] = False
seen["read"] = got["properties"]
seen["read_geometry"] = got["geometry"]
seen["listed"] = sum(1 for f in listed["features"] if str(f["id"]) == fid)

# Delete, with If-Match: 204, then 404.
_, hdrs, _ = call("GET", location)
status, _, _ = call("DELETE", location, headers={"If-Match": hdrs["ETag"]})
seen["delete_status"] = status
status, _, _ = call("GET", location)
seen["after_delete_status"] = status

# Without credentials: 401.
status, _, _ = call("POST", items, {"type": "Feature", "geometry": None, "properties": {}}, creds=False)
seen["anonymous_status"] = status
print(json.dumps(seen))
