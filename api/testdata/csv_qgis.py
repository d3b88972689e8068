"""Opens CSV files as QGIS opens a file added or dropped on it (its OGR
provider, with GDAL's defaults), headless.

Run by api/formats_test.go: python3 csv_qgis.py FILE...
Prints one JSON list: for each file, valid, count, and whether QGIS found
a geometry (its geometry type is not NoGeometry) and its extent.
"""
import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import QgsApplication, QgsVectorLayer, QgsWkbTypes  # noqa: E402

app = QgsApplication([], False)
app.initQgis()
out = []
for path in sys.argv[1:]:
    layer = QgsVectorLayer(path, "x", "ogr")
    r = {"valid": layer.isValid()}
    if layer.isValid():
        e = layer.extent()
        r.update(count=layer.featureCount(),
                 geometry=layer.geometryType() != QgsWkbTypes.NullGeometry,
                 extent=[e.xMinimum(), e.yMinimum(), e.xMaximum(), e.yMaximum()])
    out.append(r)
print(json.dumps(out))
sys.stdout.flush()
