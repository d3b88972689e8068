// Builds the browser application into web/dist: our modules (web/src) and
// MapLibre bundled by esbuild, every file named by a hash of its content
// (served with a long cache), MapLibre's worker copied beside them, the
// layers of the Protomaps basemap style (@protomaps/basemaps), and
// manifest.json saying which files each page loads. The Go package web
// embeds the result. Run with `npm run build`.
import * as esbuild from 'esbuild';
import { layers as protomapsLayers, namedFlavor } from '@protomaps/basemaps';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');
// Every module directly in src/ is a page's entry (src/lib/ holds the
// shared modules): its name is the page's.
const pages = readdirSync(join(here, 'src')).filter((f) => f.endsWith('.js')).map((f) => f.slice(0, -3));

// The previous build's files go, the README that keeps the directory stays.
for (const f of readdirSync(dist)) {
  if (f !== 'README') rmSync(join(dist, f), { recursive: true, force: true });
}

const result = await esbuild.build({
  entryPoints: Object.fromEntries(pages.map((p) => [p, join(here, 'src', p + '.js')])),
  bundle: true,
  splitting: true,
  format: 'esm',
  minify: true,
  sourcemap: false,
  target: ['es2022'],
  outdir: dist,
  entryNames: '[name]-[hash]',
  chunkNames: 'chunk-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'linked',
  logLevel: 'warning',
});

// The worker: MapLibre loads it from the URL the page gives (setWorkerUrl).
const workerSrc = join(here, '..', 'node_modules', 'maplibre-gl', 'dist', 'maplibre-gl-worker.mjs');
const worker = readFileSync(workerSrc);
const workerName = 'maplibre-gl-worker-' + createHash('sha256').update(worker).digest('hex').slice(0, 10) + '.mjs';
writeFileSync(join(dist, workerName), worker);

// The Protomaps basemap's layers (@protomaps/basemaps, the light flavor,
// English labels) for the server's style of a PMTiles basemap
// (--basemap-pmtiles; package basemap composes the style around them).
const pmLayers = Buffer.from(JSON.stringify(protomapsLayers('protomaps', namedFlavor('light'), { lang: 'en' })));
const pmName = 'protomaps-light-' + createHash('sha256').update(pmLayers).digest('hex').slice(0, 10) + '.json';
writeFileSync(join(dist, pmName), pmLayers);

// manifest.json: per page its script and style sheets.
const manifest = { pages: {}, worker: workerName, protomaps: pmName };
for (const [out, meta] of Object.entries(result.metafile.outputs)) {
  if (!meta.entryPoint) continue;
  const page = pages.find((p) => meta.entryPoint.endsWith('src/' + p + '.js'));
  if (!page) continue;
  manifest.pages[page] = { js: basename(out), css: meta.cssBundle ? [basename(meta.cssBundle)] : [] };
}
writeFileSync(join(dist, 'manifest.json'), JSON.stringify(manifest, null, 1) + '\n');
console.log('web/dist:', Object.keys(result.metafile.outputs).length + 1, 'files');
