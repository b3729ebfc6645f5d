// The golden SentencePiece models and slow-tokenizer folders of tests/data/make_spm_goldens.py, read
// as a loader would read a folder (shared by tokenizer_spm*.test.mjs).
import { existsSync, readFileSync } from 'node:fs';

const G = new URL('../data/goldens/spm/', import.meta.url);
export const expected = JSON.parse(readFileSync(new URL('expected.json', G), 'utf8'));
const manifest = JSON.parse(readFileSync(new URL('manifest.json', G), 'utf8'));

/** A golden model file's bytes ('uni_nfkc' → models/uni_nfkc.model). */
export const modelBytes = (name) => readFileSync(new URL(`models/${name}.model`, G));

/** A golden folder's readFile: its small files, and the .model files the manifest names. */
export function folderReader(name) {
  return (file) => {
    if (manifest[name][file]) return readFileSync(new URL(manifest[name][file], G));
    const url = new URL(`folders/${name}/${file}`, G);
    return existsSync(url) ? readFileSync(url) : undefined;
  };
}
