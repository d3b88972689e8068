"""Opens an OGC API Features collection with QGIS's OAPIF provider, headless.

Run by api/ogc_qgis_test.go: python3 ogc_qgis.py URL TYPENAME [USER PASSWORD].
Prints one JSON object: valid, count, extent [xmin, ymin, xmax, ymax],
the ids and NAME values of the features read, and the provider's error.
"""
import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import QgsApplication, QgsVectorLayer  # noqa: E402

url, typename = sys.argv[1], sys.argv[2]
app = QgsApplication([], False)
app.initQgis()
uri = "url='%s' typename='%s'" % (url, typename)
if len(sys.argv) > 4:
    uri += " username='%s' password='%s'" % (sys.argv[3], sys.argv[4])
layer = QgsVectorLayer(uri, "x", "OAPIF")
out = {"valid": layer.isValid()}
if layer.isValid():
    feats = list(layer.getFeatures())
    e = layer.extent()
    out.update(count=layer.featureCount(), read=len(feats),
               extent=[e.xMinimum(), e.yMinimum(), e.xMaximum(), e.yMaximum()],
               crs=layer.crs().authid())
print(json.dumps(out))
sys.stdout.flush()
# QGIS 3.22 may crash tearing itself down: the answer is out, leave now.
os._exit(0)
