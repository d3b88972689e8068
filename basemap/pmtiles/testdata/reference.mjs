// The reference reader, the npm package pmtiles (package.json), reading a
// local archive through a Source of our own: `node reference.mjs FILE
// z/x/y...` prints as JSON its header, and per tile its Hilbert id and
// the sha256 and length of its bytes (decompressed, as getZxy gives
// them), or null when the archive has none. TestReferenceReader compares
// them with package pmtiles'.
import { PMTiles, zxyToTileId } from 'pmtiles';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

const [file, ...tiles] = process.argv.slice(2);
const bytes = readFileSync(file);

// FileSource reads the local file's bytes: the slice asked, or what of it
// the file has (the reader asks 16 KiB for the header and root).
class LocalSource {
  getKey() { return file; }
  async getBytes(offset, length) {
    const b = bytes.subarray(offset, offset + length);
    return { data: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) };
  }
}

const p = new PMTiles(new LocalSource());
const h = await p.getHeader();
const out = { header: h, tiles: {} };
delete out.header.etag;
for (const t of tiles) {
  const [z, x, y] = t.split('/').map(Number);
  const r = await p.getZxy(z, x, y);
  out.tiles[t] = {
    id: zxyToTileId(z, x, y),
    tile: r ? { length: r.data.byteLength, sha256: createHash('sha256').update(new Uint8Array(r.data)).digest('hex') } : null,
  };
}
console.log(JSON.stringify(out));
