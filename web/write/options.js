// The writing page's sampling settings (tokens, temperature, top-k, top-p, seed, stop at the end of a fortune):
// read into generate()'s options, the greedy note, and the settings in the page's URL both ways (?p=&n=&t=&k=
// &topp=&seed=&end=0 fills the controls; a finished run's link writes it again). Checks only the token count and
// the seed's form here; generate() checks the rest, and its message names the setting.
// `inputs` is { maxTokens, temperature, topK, topP, seed, stopAtEnd }: the controls' elements.

/** The most tokens a Write may ask for (and fewer when the model's context is shorter). */
const MAX_TOKENS_LIMIT = 1000;

/** generate()'s options from the controls (a RangeError naming the control when one is not a number). */
export function readOptions(inputs) {
  const num = (el, name, fallback) => {
    if (el.value.trim() === '') return fallback;
    const v = Number(el.value);
    if (!Number.isFinite(v)) throw new RangeError(`${name}: expected a number, got '${el.value}'`);
    return v;
  };
  const maxNewTokens = num(inputs.maxTokens, 'tokens', 200);
  if (!(Number.isInteger(maxNewTokens) && maxNewTokens >= 1 && maxNewTokens <= Number(inputs.maxTokens.max))) {
    throw new RangeError(`tokens: expected a whole number from 1 to ${inputs.maxTokens.max}, got ${inputs.maxTokens.value}`);
  }
  const temperature = num(inputs.temperature, 'temperature', 0);
  const o = { maxNewTokens, temperature };
  if (temperature > 0) {
    o.topK = num(inputs.topK, 'top-k', 0);
    o.topP = num(inputs.topP, 'top-p', 1);
    const s = inputs.seed.value.trim();
    if (s !== '') {
      if (!/^-?\d+$/.test(s) || !Number.isSafeInteger(Number(s))) {
        throw new RangeError(`seed: expected a whole number (or nothing, for a random seed), got '${s}'`);
      }
      o.seed = Number(s);
    }
  }
  if (!inputs.stopAtEnd.checked) o.stopTokens = [];
  return o;
}

/** Temperature 0 is greedy: top-k, top-p and seed are disabled and `note` says why. */
export function updateSamplingNote(inputs, note) {
  const greedy = Number(inputs.temperature.value) === 0;
  for (const el of [inputs.topK, inputs.topP, inputs.seed]) el.disabled = greedy;
  note.textContent = greedy
    ? 'Temperature 0: greedy, always the most likely character (top-k, top-p and seed do not apply).'
    : '';
}

/** The token count's bound for a model of `maxPositions` positions (the prompt's first id takes one). */
export function limitTokens(inputs, maxPositions) {
  inputs.maxTokens.max = String(Math.min(MAX_TOKENS_LIMIT, maxPositions - 1));
}

/** Fills `prompt` and the controls from the URL's `params`; returns whether they name a prompt (the page then writes on load). */
export function fillFromUrl(params, prompt, inputs) {
  if (params.has('p')) prompt.value = params.get('p');
  for (const [key, el] of [['n', inputs.maxTokens], ['t', inputs.temperature], ['k', inputs.topK], ['topp', inputs.topP], ['seed', inputs.seed]]) {
    if (params.has(key)) el.value = params.get(key);
  }
  if (params.get('end') === '0') inputs.stopAtEnd.checked = false;
  return params.has('p');
}

/** The URL query that fills the controls with a run's `prompt`, generate() `options` and `seed` (fillFromUrl's inverse). */
export function settingsQuery(prompt, options, seed) {
  const q = new URLSearchParams({ p: prompt, n: String(options.maxNewTokens), t: String(options.temperature) });
  if (options.temperature > 0) {
    q.set('k', String(options.topK));
    q.set('topp', String(options.topP));
    q.set('seed', String(seed));
  }
  if (options.stopTokens) q.set('end', '0');
  return q;
}
