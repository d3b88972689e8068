"""Opens a WMS layer with QGIS's WMS provider, headless, and reads a block.

Run by api/wms_test.go: python3 wms_qgis.py URL LAYER.
Prints one JSON object: valid, the layer's extent [xmin, ymin, xmax,
ymax] and CRS, the size of the block read and how many of its pixels are
painted (not transparent), and the provider's error.
"""
import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import QgsApplication, QgsRasterLayer, QgsRectangle  # noqa: E402

url, name = sys.argv[1], sys.argv[2]
app = QgsApplication([], False)
app.initQgis()
uri = "crs=EPSG:4326&format=image/png&layers=%s&styles=&url=%s" % (name, url)
layer = QgsRasterLayer(uri, "x", "wms")
out = {"valid": layer.isValid()}
if layer.isValid():
    e = layer.extent()
    out.update(extent=[e.xMinimum(), e.yMinimum(), e.xMaximum(), e.yMaximum()], crs=layer.crs().authid())
    box = QgsRectangle(-84.4, 33.8, -75.4, 36.6)
    block = layer.dataProvider().block(1, box, 256, 80)
    painted = 0
    if block is not None and block.isValid():
        img = block.image()
        for y in range(img.height()):
            for x in range(img.width()):
                # (ARGB: alpha in the top byte)
                if (img.pixel(x, y) >> 24) & 0xFF:
                    painted += 1
        out.update(width=block.width(), height=block.height(), painted=painted)
else:
    out["error"] = layer.error().summary()
print(json.dumps(out))
sys.stdout.flush()
os._exit(0)
