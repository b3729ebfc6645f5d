// Typings of 'attnwasm/hub' (bindings/hub/index.js): hub ids and the cache of downloaded models.

/** One cached model (HubCache.list()). */
export interface CachedModel {
  /** Its hub id, 'organisation/name'. */
  id: string;
  /** Bytes its files take in the cache (complete and partial downloads). */
  bytes: number;
  /** Complete files kept. */
  files: number;
  /** The commit each revision asked for (a branch, a tag) pointed at when last asked. */
  revisions: Record<string, string>;
  /** The commits whose listings are kept. */
  commits: string[];
}

/**
 * The models downloaded by hub id, kept for the next load. Node: a folder in the hub cache's layout
 * (models--org--name/{blobs,refs,snapshots}; default ATTNWASM_CACHE, else ~/.cache/attnwasm/hub); a browser:
 * the origin private file system, shared by the origin's pages and workers.
 */
export declare class HubCache {
  /** @param folder Node: the cache folder (default: the default folder). */
  constructor(folder?: string);
  /** Where the cache is: the folder (Node), a description (a browser); null when there is none. */
  where(): Promise<string | null>;
  /** Every cached model. */
  list(): Promise<CachedModel[]>;
  /** Removes a model's files (every revision); whether there was anything to remove. */
  delete(id: string): Promise<boolean>;
}

/** A handle on the cache at `folder` (Node; default: the default cache), or on the browser's. */
export declare function openCache(folder?: string): HubCache;
/** The default cache. */
export declare const cache: HubCache;
/** Whether `s` reads as a hub id 'organisation/name' (not a URL, a path, or a file name). */
export declare function looksLikeHubId(s: unknown): boolean;
/** `id` if it is a hub id; else throws AttnWasmError ERR_INVALID_ARGUMENT naming what is wrong ('..', a URL, an absolute path, …). */
export declare function checkHubId(id: unknown, what?: string): string;
/** `rev` if it is a branch, tag or commit name; else throws ERR_INVALID_ARGUMENT. */
export declare function checkRevision(rev: unknown, what?: string): string;
/** The hub: 'https://huggingface.co'. */
export declare const DEFAULT_HOST: string;
/** The host a load uses: `host`, else HF_ENDPOINT (Node), else the hub; checked (an http(s) URL). */
export declare function hubHost(host?: string | URL): string;
/** The URL of a file of a repository at a revision: <host>/<id>/resolve/<revision>/<path>. */
export declare function fileUrl(host: string, id: string, revision: string, path: string): string;

/** A hub repository as a folder of lazily opened files (what loadModel reads for a hub id). */
export declare function hubFolder(id: string, options?: { revision?: string; cache?: false | string | HubCache; host?: string; signal?: AbortSignal }): Promise<{
  files: Map<string, unknown>;
  commit: string;
  revision: string;
  /** Whether the listing came from the cache (the hub could not be reached). */
  offline: boolean;
  /** Bytes read from the cache and from the hub so far; why a file was not kept, if one was not. */
  stats: { cached: number; downloaded: number; cacheError: string | null };
  where: string | null;
}>;
