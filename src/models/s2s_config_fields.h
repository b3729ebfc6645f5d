// The config.json keys the encoder–decoder families read alike (seq2seq_config.cpp: Marian, BART, mBART, M2M100;
// whisper_config.cpp): the two stacks' sizes, the activation, the token ids, and their range rules.
#pragma once
#include <cstdint>
#include <string>

#include "io/json_fields.h"
#include "models/seq2seq.h"

namespace aw {

// The defaults of absent keys: the family's transformers config class's.
struct S2sStackDefaults {
  int64_t vocab, d_model, layers, heads, ffn;
  const char* act;  // activation_function
};

// activation_function, vocab_size (vocab and decoder_vocab), d_model, encoder_/decoder_ layers, attention_heads and
// ffn_dim into *s.
Status ReadS2sStacks(const io::FieldReader& c, const S2sStackDefaults& d, Seq2SeqConfig* s);
// An optional token id: absent gives `absent`, null gives -1.
int64_t S2sIdOr(const io::JsonValue* v, int64_t absent);
// The range rules of the keys ReadS2sStacks reads (vocab_size and d_model up to the widths the kernels take, each
// head count a divisor of d_model).
Status CheckS2sStacks(const io::ConfigRules& r, const Seq2SeqConfig& c);
// activation_function as config.json names it.
const char* S2sActivationName(Activation a);

}  // namespace aw
