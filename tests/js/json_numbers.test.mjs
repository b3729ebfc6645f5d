// Numbers in a config.json are read natively (src/io/json.cpp) and converted by core/parse_double: integers of up
// to 15 digits there, every other number by JavaScript's Number() (bindings/native/host_number.cpp, in place of
// musl's strtod). What the native side read is shown back in a message through NumStr (the shortest decimal that
// reads back as the double, in Number::toString's layout): so for every text, the message must hold exactly what
// String(JSON.parse(text)) gives here — both conversions, checked against V8's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../bindings/index.js';
import * as boundary from '../../bindings/boundary.js';

const aw = await init();
test.after(() => aw.close());

// A llama3 rope_scaling whose high_freq_factor (the least positive double) is not above low_freq_factor: the refusal
// prints low_freq_factor.
const config = (low) => `{"model_type": "llama", "vocab_size": 32, "hidden_size": 8, "intermediate_size": 16,
  "num_hidden_layers": 1, "num_attention_heads": 2, "max_position_embeddings": 64,
  "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": ${low}, "high_freq_factor": 5e-324,
  "original_max_position_embeddings": 32}}`;

const TEXTS = ['1', '7', '999999999999999', '1000000000000000', '9007199254740993', '12345678901234567890',
  '0.6', '0.1', '1.0000000000000002', '9.999999747378752e-06', '123456.789e-2', '1E5', '2.5e+0',
  '0.30000000000000004', '1.7976931348623157e308', '2.2250738585072011e-308', '4.9e-324', '5e-324',
  '100000000000000000000000', '1e21', '1e-7', '0.000001'];

test('config numbers are the nearest doubles, as JSON.parse reads them', () => {
  for (const text of TEXTS) {
    const want = JSON.parse(text);
    assert.throws(() => boundary.checkConfig(aw, config(text), false), (e) => {
      const m = /low_freq_factor \(([^)]*)\)/.exec(e.message);
      assert.ok(m, `${text}: ${e.message}`);
      assert.equal(m[1], String(want), `${text}: read as ${m[1]}, JSON.parse gives ${String(want)}`);
      return true;
    }, text);
  }
});

test('a number past the double range is refused by name', () => {
  assert.throws(() => boundary.checkConfig(aw, config('1e400'), false), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /out of the double range/.test(e.message));
});
