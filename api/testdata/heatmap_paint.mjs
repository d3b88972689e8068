// Prints the paint of the web application's heatmap of a layer of colour
// argv[2] (#rrggbb) at opacity argv[3] (web/src/lib/style.js heatmapSpecs),
// for api/mapstyles_test.go to compare with the server's MapLibre style.
import { heatmapSpecs } from '../../web/src/lib/style.js';

const [spec] = heatmapSpecs('x', process.argv[2], Number(process.argv[3]));
console.log(JSON.stringify({ paint: spec.paint, maxzoom: spec.maxzoom }));
