// transformers' MarianTokenizer (v4.40) for opus-mt folders: source.spm for the text, target.spm
// for targets and for decoding, vocab.json (and target_vocab.json with separate_vocabs) mapping pieces
// to the model's ids, a leading >>xx<< target-language token taken out before SentencePiece, </s>
// appended. The `tgtLang` option writes that token (multilingual models; an unknown code is refused).
import { AttnWasmError } from '../errors.js';
import { invalid } from './json.js';
import { SlowTokenizer } from './slow_tokenizer.js';
import { pyStrip } from './slow_added.js';

const CODE_AT_START = /^>>[^\n]+<</; // Python's re.match(">>.+<<"): '.' is anything but '\n'
const CODES = />>[^\n]+<</g;

export class MarianTokenizer extends SlowTokenizer {
  /**
   * @param {{ source: import('./sentencepiece.js').SentencePieceProcessor, target: import('./sentencepiece.js').SentencePieceProcessor,
   *   vocab: Map<string, number>, targetVocab: Map<string, number> | null }} files
   * @param {object} kwargs from_pretrained's init kwargs
   */
  constructor(files, kwargs) {
    const k = { unk_token: '<unk>', eos_token: '</s>', pad_token: '<pad>', model_max_length: 512, ...kwargs };
    super(k, 'tokenizer_config.json');
    this.separateVocabs = k.separate_vocabs === true;
    this.encoder = files.vocab;
    for (const key of ['unk_token', 'pad_token']) {
      if (!this.encoder.has(this.specialToken(key))) throw invalid(key, `'${this.specialToken(key)}' is not in vocab.json (MarianTokenizer needs it there)`, 'vocab.json');
    }
    if (this.separateVocabs) {
      if (!files.targetVocab) throw invalid('separate_vocabs', 'true, but the folder has no target_vocab.json', 'tokenizer_config.json');
      this.targetEncoder = files.targetVocab;
    }
    this.decoder = new Map([...(this.separateVocabs ? this.targetEncoder : this.encoder)].map(([t, id]) => [id, t]));
    /** The >>xx<< tokens of a multilingual model's shared vocabulary (MarianTokenizer.supported_language_codes). */
    this.languageCodes = this.separateVocabs ? [] : [...this.encoder.keys()].filter((t) => t.startsWith('>>') && t.endsWith('<<'));
    this.spmSource = files.source;
    this.spmTarget = files.target;
    this._baseSize = this.encoder.size;
    this._anyId = Math.max(...[this.encoder, this.targetEncoder ?? new Map()].map((m) => [...m.values()].reduce((a, b) => Math.max(a, b), -1)));
    this._finishInit();
    this._maxId = Math.max(this._maxId, this._anyId);
  }

  _getVocab() {
    return new Map([...this.encoder, ...this._addedEncoder]);
  }

  _hasToken(token) {
    return this.encoder.has(token);
  }

  /** An id of either vocabulary (the Python decodes an id the target vocabulary lacks as <unk>). */
  _hasId(id) {
    return this._addedDecoder.has(id) || this.decoder.has(id) || (id >= 0 && id <= this._anyId);
  }

  _modeOptions() {
    return ['target', 'tgtLang'];
  }

  _mode(o) {
    const mode = { target: o.target === true };
    if (o.tgtLang !== undefined) {
      if (!this.languageCodes.includes(`>>${o.tgtLang}<<`)) {
        throw new AttnWasmError('ERR_INVALID_ARGUMENT', `tgtLang: expected one of this model's ${this.languageCodes.length} target languages${this.languageCodes.length ? ` (${this.languageCodes.slice(0, 8).map((c) => c.slice(2, -2)).join(', ')}${this.languageCodes.length > 8 ? ', …' : ''})` : ' (it has none: vocab.json has no >>xx<< tokens)'}, got '${o.tgtLang}'`);
      }
      mode.prefix = `>>${o.tgtLang}<< `;
    }
    return mode;
  }

  tokenize(text, mode = {}) {
    return super.tokenize(mode.prefix ? mode.prefix + text : text, mode);
  }

  _tokenize(text, mode) {
    const m = CODE_AT_START.exec(text);
    const code = m ? [m[0]] : [];
    const spm = mode.target ? this.spmTarget : this.spmSource;
    return [...code, ...spm.encode(text.replace(CODES, '')).pieces];
  }

  _convertTokenToId(token, mode = {}) {
    const enc = mode.target && this.separateVocabs ? this.targetEncoder : this.encoder;
    return enc.get(token) ?? enc.get(this.specialToken('unk_token'));
  }

  _convertIdToToken(id) {
    return this.decoder.get(id) ?? this.specialToken('unk_token');
  }

  /** Decoding reads target pieces (the Python class's default, use_source_tokenizer=False). */
  convertTokensToString(tokens) {
    const specials = new Set(this.allSpecialTokens());
    let current = [];
    let out = '';
    for (const t of tokens) {
      if (specials.has(t)) {
        out += this.spmTarget.decodePieces(current) + t + ' ';
        current = [];
      } else current.push(t);
    }
    out += this.spmTarget.decodePieces(current);
    return pyStrip(out.replaceAll('\u2581', ' '));
  }

  _specials() {
    return { before: [], after: [this.specialTokenId('eos_token')] };
  }
}
