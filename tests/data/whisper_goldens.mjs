// Reads tests/data/goldens/whisper_features/ (made by make_whisper_feature_goldens.py) for the audio tests:
// goldens.json with its array references resolved against goldens.bin, and the fixture files by name. Node only.
import { readFileSync } from 'node:fs';

const DIR = new URL('./goldens/whisper_features/', import.meta.url);

/** goldens.json, and `array(ref)` → the Float32Array / Float64Array a reference names (a copy). */
export function loadGoldens() {
  const doc = JSON.parse(readFileSync(new URL('goldens.json', DIR), 'utf8'));
  const bin = readFileSync(new URL('goldens.bin', DIR));
  const buffer = bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength);
  const array = ({ dtype, offset, length }) => (dtype === 'float64' ? new Float64Array(buffer, offset, length) : new Float32Array(buffer, offset, length)).slice();
  return { doc, array };
}

/** A fixture file's bytes ('wav/pcm_s16_mono_16k.wav'). */
export function fixture(path) {
  return new Uint8Array(readFileSync(new URL(path, DIR)));
}

/** A fixture .f32 file (raw little-endian float32) as a Float32Array. */
export function fixtureF32(path) {
  const b = readFileSync(new URL(path, DIR));
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

/** The path of a fixture on disk. */
export function fixturePath(path) {
  return new URL(path, DIR);
}

/** Largest |a[i] - b[i]| and where; lengths must agree. */
export function maxAbsDiff(a, b) {
  if (a.length !== b.length) throw new Error(`lengths differ: ${a.length} vs ${b.length}`);
  let worst = 0, at = -1;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= worst)) { worst = d; at = i; }
  }
  return { worst, at };
}
