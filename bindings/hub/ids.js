// What may name a model on the hub, and what may name a file in one: hub ids ('org/name'), revisions
// (a branch, a tag or a commit), the paths of a repository's files, and the hashes a cache names its blobs
// by. Every name that reaches a URL or a cache folder passes one of these checks first, so nothing a hub (or
// a caller) says can make a load read or write outside the repository's folder: `..`, absolute paths, URLs
// (`https:`, `file:`, `data:`, `//host`), backslashes and their percent-encoded forms are refused by name.
// Not here: the URLs themselves (resolve.js) and where the cache keeps files (cache_node.js, cache_browser.js).
import { AttnWasmError, typeError, describe } from '../errors.js';
import { folderPath } from '../folder_path.js';

/** A hub id part: the hub's own rule (huggingface_hub validate_repo_id): letters, digits, '-', '_', '.'. */
const PART = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?$/;
const MAX_ID = 96;
/** A file name that ends this way is a file of a folder, not a repository ('models/lm.safetensors'). */
const FILE_EXT = /\.(safetensors|json|bin|gguf|onnx|pt|pth|txt|jinja)$/i;

const invalid = (message) => new AttnWasmError('ERR_INVALID_ARGUMENT', message);

/** Why `s` is not a hub id 'org/name', or null when it is one. */
function idProblem(s) {
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(s) || s.startsWith('//')) return 'a URL is not a hub id (load a URL as it is, without the hub options)';
  if (s.startsWith('/') || s.startsWith('\\') || /^[A-Za-z]:/.test(s)) return 'an absolute path is not a hub id';
  if (/%[0-9A-Fa-f]{2}/.test(s)) return 'a hub id has no percent-encoded characters';
  if (s.includes('\\')) return 'a hub id has no backslashes';
  const parts = s.split('/');
  if (parts.some((p) => p === '..' || p === '.')) return "a hub id has no '.' or '..' parts";
  if (parts.length !== 2) return `expected exactly one '/' (organisation/name), got ${parts.length - 1}`;
  if (s.length > MAX_ID) return `at most ${MAX_ID} characters, got ${s.length}`;
  for (const p of parts) {
    if (!PART.test(p)) return `'${p}' is not a hub name (letters, digits, '-', '_', '.'; starting with a letter or digit)`;
    if (p.includes('--') || p.includes('..')) return `'${p}' has '--' or '..', which the hub does not allow in a name`;
  }
  if (parts[1].endsWith('.git')) return "a hub name does not end in '.git'";
  return null;
}

/**
 * Whether a loader source names a hub repository: a string 'org/name' by the hub's rules, not a URL, not a
 * path (no './', no trailing '/', not ending in a file extension such as '.safetensors'). In Node a folder or
 * file of that path wins, as from_pretrained decides (the caller checks: loadModel's hook).
 * @param {unknown} s
 */
export function looksLikeHubId(s) {
  return typeof s === 'string' && !FILE_EXT.test(s) && idProblem(s) === null;
}

/**
 * A hub id checked strictly: 'org/name'. Anything else — a URL, an absolute path, '..', a backslash, a
 * percent-encoded character — is refused with ERR_INVALID_ARGUMENT naming what is wrong.
 * @param {unknown} id @param {string} [what] the argument's name in messages
 * @returns {string}
 */
export function checkHubId(id, what = 'source') {
  if (typeof id !== 'string') throw typeError(`${what}: expected a hub id 'organisation/name', got ${describe(id)}`);
  const problem = idProblem(id);
  if (problem) throw invalid(`${what}: expected a hub id 'organisation/name', got '${id}': ${problem}`);
  return id;
}

/**
 * A revision: a branch or tag ('main', 'v1.0', 'refs/pr/1') or a commit (40 hex digits). '/' may separate
 * parts; '.', '..', empty parts, a leading '/', backslashes, control characters, ':' and '%' are refused.
 * @returns {string}
 */
export function checkRevision(rev, what = 'revision') {
  if (typeof rev !== 'string') throw typeError(`${what}: expected a branch, tag or commit (a string), got ${describe(rev)}`);
  const bad = rev === '' ? 'it is empty'
    : rev.length > 256 ? `at most 256 characters, got ${rev.length}`
      : /[\u0000-\u001f\u007f\\%:?#*~^\s]/.test(rev) ? "it has a character a git ref cannot have (a space, '\\', '%', ':', '?', '#', a control character …)"
        : rev.split('/').some((p) => p === '' || p === '.' || p === '..' || p.endsWith('.lock') || p.startsWith('.')) ? "it has an empty, '.', '..' or '.lock' part"
          : null;
  if (bad) throw invalid(`${what}: expected a branch, tag or commit, got '${rev}': ${bad}`);
  return rev;
}

/** A commit as the hub names one: 40 lowercase hex digits. */
export const isCommit = (s) => typeof s === 'string' && /^[0-9a-f]{40}$/.test(s);

/**
 * A file's path in a repository, safe to join to a folder and to a URL: relative, '/'-separated, no '.',
 * '..' or empty parts, no backslash, no URL scheme, no percent-encoded character, no control character.
 * @returns {boolean}
 */
export function isSafeRepoPath(p) {
  try {
    folderPath(p, 'a repository file');  // the one rule of every checkpoint folder (folder_path.js)
  } catch {
    return false;
  }
  // Stricter for what becomes a cache path: no control character, '%', backslash, empty or '.' part.
  if (p.length > 1024 || /[\u0000-\u001f\u007f\\%]/.test(p)) return false;
  return p.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}

/**
 * How the hub says a file's bytes should hash: { kind: 'sha256' | 'git-sha1', hex } (an LFS file's sha256;
 * a small file's git blob id), or null when it says nothing usable.
 */
export function expectedHash(sibling) {
  const sha = sibling?.lfs?.sha256 ?? sibling?.lfs?.oid;
  if (typeof sha === 'string' && /^[0-9a-f]{64}$/.test(sha)) return { kind: 'sha256', hex: sha };
  if (typeof sibling?.blobId === 'string' && /^[0-9a-f]{40}$/.test(sibling.blobId)) return { kind: 'git-sha1', hex: sibling.blobId };
  return null;
}

/** A blob's name in a cache: its hash's hex (the hub's ETag, as huggingface_hub names blobs), checked. */
export function isBlobName(s) {
  return typeof s === 'string' && /^[0-9a-f]{40}$|^[0-9a-f]{64}$/.test(s);
}

/** The folder a repository's files are cached in, as the hub's cache names it: 'models--org--name'. */
export const repoFolder = (id) => `models--${id.replace('/', '--')}`;

/** The hub id of a cache folder's name, or null when the name is not one ('models--org--name'). */
export function idOfFolder(name) {
  const m = /^models--([^/]+?)--([^/]+)$/.exec(name);
  if (!m) return null;
  const id = `${m[1]}/${m[2]}`;
  return idProblem(id) === null ? id : null;
}
