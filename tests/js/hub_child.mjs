// One process of hub_hostile.test.mjs's "two processes" case: loads 'org/tiny' from the hub at argv[2] into
// the cache folder argv[3], prints { logits: sha256 of the logits' bytes, cached, downloaded }. Not a test file.
import { createHash } from 'node:crypto';
import { init } from '../../bindings/index.js';
import { lmConfig, sampleIds } from './lm_checkpoint.mjs';

const [host, cache] = process.argv.slice(2);
const aw = await init({ threads: 1 });
let last = null;
const lm = await aw.loadModel('org/tiny', { host, cache, onProgress: (p) => { last = p; } });
const { data } = lm.forward(sampleIds(lmConfig({ vocab: 3000 }).vocab_size)).logits;
const logits = createHash('sha256').update(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)).digest('hex');
process.stdout.write(JSON.stringify({ logits, cached: last.cached, downloaded: last.downloaded }));
