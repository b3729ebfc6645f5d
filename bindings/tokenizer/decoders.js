// Decoders of SentencePiece-style, WordPiece and Unigram files (Replace, ByteFallback, Fuse, Strip,
// Metaspace, WordPiece, Sequence) as streaming stages: a stage takes tokens one at a time and gives
// the tokens the Rust library's decode_chain would give for them, holding back only what a later
// token can still change (a run of <0xNN> byte tokens, trailing characters Strip may cut). decode()
// runs the same stages over all its ids, so a stream's texts joined equal decode() by construction.
// After Fuse the tokens are fragments of one string ("fused"): stages there see the string's start
// and end. The byte-level kind's ByteLevel decoder is tokenizer.js's byte path, not a stage here.
import { compileRegex } from './regex.js';
import { invalid, optionalBoolean, phrase, requireArray, requireChar, requireInteger, requireObject, requireString, requireType, show, unsupported } from './json.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const BYTE_TOKEN = /^<0x([0-9A-Fa-f]{2}|\+[0-9A-Fa-f])>$/; // Rust: 6 bytes, u8::from_str_radix(&t[3..5], 16)

/** WordPiece's clean-up of tokenization spaces, in the Rust library's order. */
const CLEANUP = [[' .', '.'], [' ?', '?'], [' !', '!'], [' ,', ','], [" ' ", "'"], [" n't", "n't"], [" 'm", "'m"], [' do not', " don't"], [" 's", "'s"], [" 've", "'ve"], [" 're", "'re"]];
const cleanup = (s) => CLEANUP.reduce((t, [a, b]) => t.replaceAll(a, b), s);

/** Each factory makes a fresh stage { push(token) → tokens, end() → tokens }; `fused` per stage input. */
function stageFactory(config, field, fused) {
  const type = requireType(config, field, ['Replace', 'ByteFallback', 'Fuse', 'Strip', 'Metaspace', 'WordPiece', 'Sequence']);
  const refuseFused = () => {
    if (fused) throw unsupported(`${field}.type`, `${type} before any Fuse (after it the text is one string)`, phrase(`${type} after a Fuse`));
  };
  switch (type) {
    case 'Replace': {
      const pattern = requireObject(config.pattern, `${field}.pattern`);
      const content = requireString(config.content, `${field}.content`);
      let map;
      if (typeof pattern.String === 'string' && pattern.String !== '') map = (t) => t.replaceAll(pattern.String, () => content);
      else if (typeof pattern.Regex === 'string') {
        const re = compileRegex(pattern.Regex, `${field}.pattern.Regex`);
        map = (t) => t.replace(re, () => content);
      } else throw invalid(`${field}.pattern`, `expected { Regex: string } or { String: non-empty string }, got keys ${Object.keys(pattern).join(', ') || 'none'}`);
      // After Fuse only a one-character string pattern cannot straddle two fragments.
      if (fused && !(typeof pattern.String === 'string' && [...pattern.String].length === 1)) refuseFused();
      return { make: () => ({ push: (t) => [map(t)], end: () => [] }), fused };
    }
    case 'ByteFallback': {
      refuseFused();
      return { make: () => byteFallback(), fused };
    }
    case 'Fuse': return { make: () => ({ push: (t) => [t], end: () => [] }), fused: true };
    case 'Strip': {
      const content = requireChar(config.content, `${field}.content`);
      const start = requireInteger(config.start, `${field}.start`, 0, Number.MAX_SAFE_INTEGER);
      const stop = requireInteger(config.stop, `${field}.stop`, 0, Number.MAX_SAFE_INTEGER);
      return { make: () => (fused ? stripFused(content, start, stop) : { push: (t) => [stripToken(t, content, start, stop)], end: () => [] }), fused };
    }
    case 'Metaspace': {
      const replacement = requireChar(config.replacement, `${field}.replacement`);
      const scheme = config.prepend_scheme ?? 'always';
      if (!['first', 'always', 'never'].includes(scheme)) throw invalid(`${field}.prepend_scheme`, `expected 'first', 'always' or 'never', got ${show(scheme)}`);
      if (optionalBoolean(config.add_prefix_space, `${field}.add_prefix_space`, true) === false && scheme !== 'never') {
        throw invalid(`${field}.add_prefix_space`, `false does not match prepend_scheme ${show(scheme)} (the tokenizers library refuses the file)`);
      }
      // The first token loses every replacement character (unless 'never'); the others turn them into spaces.
      return {
        make: () => {
          let index = 0;
          return { push: (t) => [t.replaceAll(replacement, fused || index++ === 0 ? (scheme === 'never' ? ' ' : '') : ' ')], end: () => [] };
        },
        fused,
      };
    }
    case 'WordPiece': {
      refuseFused();
      const prefix = config.prefix == null ? '##' : requireString(config.prefix, `${field}.prefix`);
      const clean = optionalBoolean(config.cleanup, `${field}.cleanup`, true);
      return {
        make: () => {
          let index = 0;
          return {
            push: (t) => {
              if (index++ !== 0) t = t.startsWith(prefix) ? t.slice(prefix.length) : ` ${t}`;
              return [clean ? cleanup(t) : t];
            },
            end: () => [],
          };
        },
        fused,
      };
    }
    default: {
      const parts = [];
      requireArray(config.decoders, `${field}.decoders`).forEach((d, i) => {
        const part = stageFactory(d, `${field}.decoders[${i}]`, fused);
        fused = part.fused;
        parts.push(part);
      });
      return { make: () => chain(parts.map((p) => p.make())), fused };
    }
  }
}

/** Stages one after another: each token of one goes into the next. */
function chain(stages) {
  const run = (tokens, from) => {
    for (let s = from; s < stages.length && tokens.length; s++) tokens = tokens.flatMap((t) => stages[s].push(t));
    return tokens;
  };
  return {
    push: (t) => run([t], 0),
    end: () => {
      let out = [];
      for (let s = 0; s < stages.length; s++) out = [...run(out, s), ...stages[s].end()];
      return out;
    },
  };
}

/** A run of <0xNN> tokens becomes its UTF-8 text, or one U+FFFD per byte if the run is not UTF-8. */
function byteFallback() {
  let bytes = [];
  const flush = () => {
    if (!bytes.length) return [];
    let out;
    try {
      out = [utf8.decode(Uint8Array.from(bytes))];
    } catch {
      out = bytes.map(() => '\ufffd');
    }
    bytes = [];
    return out;
  };
  return {
    push: (t) => {
      const m = BYTE_TOKEN.exec(t);
      if (m) {
        bytes.push(parseInt(m[1], 16));
        return [];
      }
      return [...flush(), t];
    },
    end: flush,
  };
}

function stripToken(t, content, start, stop) {
  const chars = [...t];
  let a = 0;
  while (a < start && a < chars.length && chars[a] === content) a++;
  let b = chars.length;
  while (chars.length - b < stop && b > a && chars[b - 1] === content) b--;
  return a === 0 && b === chars.length ? t : chars.slice(a, b).join('');
}

/** Strip over the one fused string: its first `start` and last `stop` content characters. */
function stripFused(content, start, stop) {
  let stripped = 0;
  let begun = false;
  let held = ''; // trailing content characters that the end may cut
  return {
    push: (t) => {
      let s = t;
      if (!begun) {
        let i = 0;
        while (stripped < start && s.startsWith(content, i)) {
          i += content.length;
          stripped++;
        }
        s = s.slice(i);
        if (s === '') return [];
        begun = true;
      }
      if (stop === 0) return [s];
      s = held + s;
      let cut = s.length;
      for (let n = 0; n < stop && s.endsWith(content, cut); n++) cut -= content.length;
      held = s.slice(cut);
      return cut ? [s.slice(0, cut)] : [];
    },
    end: () => {
      // the last `stop` content characters go; if fewer are held, all of them are the string's end
      held = '';
      return [];
    },
  };
}

/** The decoder of a SentencePiece-style, WordPiece or Unigram file: a factory of fresh stages. */
export function decoder(config, expected) {
  if (config == null) throw unsupported('decoder', expected, config);
  return stageFactory(config, 'decoder', false).make;
}
