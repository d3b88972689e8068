"""Loads an SLD onto an OGC API Features layer with QGIS, headless.

Run by api/mapstyles_test.go: python3 sld_qgis.py URL TYPENAME SLDFILE.
Prints one JSON object: whether the layer and the style loaded, the
renderer's type, and for each rule of a rule-based renderer its label,
its symbol's colour (#rrggbb) and how many of the layer's features its
filter selects.
"""
import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from qgis.core import (QgsApplication, QgsExpression, QgsExpressionContext,  # noqa: E402
                       QgsExpressionContextUtils, QgsVectorLayer)

url, typename, sld = sys.argv[1], sys.argv[2], sys.argv[3]
app = QgsApplication([], False)
app.initQgis()
layer = QgsVectorLayer("url='%s' typename='%s'" % (url, typename), "x", "OAPIF")
out = {"valid": layer.isValid()}
if layer.isValid():
    msg, ok = layer.loadSldStyle(sld)
    out.update(loaded=ok, message=msg)
    r = layer.renderer()
    out["renderer"] = r.type()
    rules = []
    if r.type() == "RuleRenderer":
        feats = list(layer.getFeatures())
        for rule in r.rootRule().children():
            ctx = QgsExpressionContext()
            ctx.appendScope(QgsExpressionContextUtils.layerScope(layer))
            n = 0
            expr = QgsExpression(rule.filterExpression()) if rule.filterExpression() else None
            for f in feats:
                ctx.setFeature(f)
                if expr is None or expr.evaluate(ctx):
                    n += 1
            sym = rule.symbol()
            rules.append({"label": rule.label(), "filter": rule.filterExpression(),
                          "color": sym.color().name() if sym else "", "count": n})
    out["rules"] = rules
print(json.dumps(out))
sys.stdout.flush()
# QGIS 3.22 may crash tearing itself down: the answer is out, leave now.
os._exit(0)
