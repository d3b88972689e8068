#!/usr/bin/env bash
# The README's first session, as a script (a test runs it against a real
# server, so the README cannot drift from what the server does). Run it
# against a server with a new data directory:
#
#   go run ./cmd/mapcommons serve --data /tmp/tour &
#   bash examples/tour.sh                      # or: bash examples/tour.sh http://host:port
#
# The files it sends are in examples/: places.csv (Natural Earth capitals)
# and nc.* (North Carolina counties); see testdata/README.md.
set -euo pipefail
cd "$(dirname "$0")"
export BASE="${1:-http://127.0.0.1:8080}"
curl() { command curl -sS --fail-with-body "$@"; echo; }

# --- tour ---
curl -X POST -d 'user[login]=ann&user[password]=secret1&user[password_confirmation]=secret1&user[email]=ann@example.com' \
     "$BASE/users.json"
curl -i -u ann:secret1 -H 'Content-Type: text/csv' --data-binary @places.csv \
     "$BASE/datasets.json?title=Places"          # 201, Location: …/datasets/1.json
curl "$BASE/datasets/1/features.json?geojson=1&limit=5"
curl "$BASE/datasets/1/features.json?lat=48.86&lon=2.35&radius=500&units=km"   # within 500 km of Paris
curl -u ann:secret1 -F 'dataset[shp]=@nc.shp' -F 'dataset[shx]=@nc.shx' -F 'dataset[dbf]=@nc.dbf' -F 'dataset[prj]=@nc.prj' \
     "$BASE/datasets.json"
curl -g "$BASE/datasets/2/features.json?filter[BIR74][][min]=20000&limit=3"
curl -o counties.gpkg "$BASE/datasets/2.gpkg"    # opens in QGIS, ogrinfo …
curl "$BASE/search.json?query=places"
# --- end ---
rm -f counties.gpkg
