// Validates a MapLibre style document with MapLibre's own style
// specification (@maplibre/maplibre-gl-style-spec, package.json).
// Run by api/mapstyles_test.go: node maplibre_validate.mjs STYLE.json.
// Prints the errors as a JSON array (empty: valid).
import { readFileSync } from 'node:fs';
import { validateStyleMin } from '@maplibre/maplibre-gl-style-spec';

const style = JSON.parse(readFileSync(process.argv[2], 'utf8'));
console.log(JSON.stringify(validateStyleMin(style).map((e) => e.message)));
