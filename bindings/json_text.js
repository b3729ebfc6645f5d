// JSON text checks that JSON.parse cannot make: a key given twice in one object. JSON.parse keeps the
// last value, the runtime's native reader the first, and Hugging Face's Rust and Python readers differ
// again, so a repeated key would be read differently by different readers; attnwasm refuses it
// (issue 28). A scan over the text, run before JSON.parse: linear, about as long as JSON.parse itself
// (75–150 ms for a 7 MB tokenizer.json here).

/**
 * The first key that repeats within one object of `text`, with the path of that object
 * ('', '.model.vocab', '.added_tokens[3]'), or null. Assumes nothing about validity: on text that is
 * not JSON it returns whatever it found (JSON.parse reports the syntax error).
 * @param {string} text
 * @returns {{path: string, key: string} | null}
 */
export function repeatedKey(text) {
  const stack = []; // frames: { keys: Set | null (array), path, wantKey, lastKey, index }
  let top = null;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) { // a string: find its closing quote (not escaped)
      let j = i + 1;
      for (;;) {
        j = text.indexOf('"', j);
        if (j < 0) return null;
        let k = j - 1;
        while (text.charCodeAt(k) === 92) k--;
        if ((j - 1 - k) % 2 === 0) break;
        j++;
      }
      if (top && top.keys && top.wantKey) {
        let key = text.slice(i + 1, j);
        if (key.indexOf('\\') >= 0) {
          try { key = JSON.parse(text.slice(i, j + 1)); } catch { return null; }
        }
        if (top.keys.has(key)) return { path: top.path, key };
        top.keys.add(key);
        top.lastKey = key;
        top.wantKey = false;
      }
      i = j;
    } else if (c === 123 || c === 91) { // { [
      const path = top === null ? '' : top.keys ? `${top.path}${keyPath(top.lastKey)}` : `${top.path}[${top.index}]`;
      top = { keys: c === 123 ? new Set() : null, path, wantKey: c === 123, lastKey: '', index: 0 };
      stack.push(top);
    } else if (c === 125 || c === 93) { // } ]
      stack.pop();
      top = stack.length ? stack[stack.length - 1] : null;
    } else if (c === 44 && top) { // ,
      if (top.keys) top.wantKey = true;
      else top.index++;
    }
  }
  return null;
}

/** '.vocab' for an identifier-like key, "['a b']" otherwise (the style of the tokenizer's messages). */
function keyPath(key) {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `['${key}']`;
}
