"""Draws a collection's vector tiles with QGIS's vector tile layer, headless.

Run by api/ogc_clients_test.go: python3 tiles_qgis.py TEMPLATE, the tile
URL template ({z}/{y}/{x}) of North Carolina's counties. Renders the state's
box (EPSG:3857) to an image with every feature filled red, and prints one
JSON object: whether the layer is valid, its zooms, how many pixels of the
image are red (painted) of all (total), and how many red pixels lie in a
strip over the Atlantic east of the state, where there are no counties
(outside).
"""
import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import (QgsApplication, QgsCoordinateReferenceSystem,  # noqa: E402
                       QgsFillSymbol,
                       QgsMapRendererSequentialJob, QgsMapSettings,
                       QgsRectangle, QgsVectorTileBasicRenderer,
                       QgsVectorTileBasicRendererStyle, QgsVectorTileLayer,
                       QgsWkbTypes)
from qgis.PyQt.QtCore import QSize, QUrl  # noqa: E402
from qgis.PyQt.QtGui import QColor  # noqa: E402

template = sys.argv[1]
app = QgsApplication([], False)
app.initQgis()
uri = "type=xyz&zmin=0&zmax=14&url=" + QUrl.toPercentEncoding(template).data().decode()
layer = QgsVectorTileLayer(uri, "tiles")
out = {"valid": layer.isValid()}
if layer.isValid():
    out.update(min_zoom=layer.sourceMinZoom(), max_zoom=layer.sourceMaxZoom())
    style = QgsVectorTileBasicRendererStyle("fill", "", QgsWkbTypes.PolygonGeometry)
    style.setSymbol(QgsFillSymbol.createSimple({"color": "255,0,0", "outline_color": "255,0,0"}))
    renderer = QgsVectorTileBasicRenderer()
    renderer.setStyles([style])
    layer.setRenderer(renderer)
    settings = QgsMapSettings()
    settings.setLayers([layer])
    settings.setDestinationCrs(QgsCoordinateReferenceSystem("EPSG:3857"))
    # North Carolina, -84.4 to -75.4 west to east, 33.8 to 36.6 north, and
    # a strip of sea beyond Cape Hatteras (x past -75.3).
    settings.setExtent(QgsRectangle(-9400000, 4000000, -8200000, 4400000))
    settings.setOutputSize(QSize(600, 200))
    settings.setBackgroundColor(QColor(255, 255, 255))
    job = QgsMapRendererSequentialJob(settings)
    job.start()
    job.waitForFinished()
    img = job.renderedImage()
    painted = outside = 0
    for y in range(img.height()):
        for x in range(img.width()):
            c = QColor(img.pixel(x, y))
            if c.red() > 200 and c.green() < 80 and c.blue() < 80:
                painted += 1
                # x of -8,350,000 m is about -75.0°: east of every county.
                if x >= int(600 * (9400000 - 8350000) / 1200000):
                    outside += 1
    out.update(painted=painted, total=img.width() * img.height(), outside=outside)
print(json.dumps(out))
sys.stdout.flush()
# QGIS 3.22 may crash tearing itself down: the answer is out, leave now.
os._exit(0)
