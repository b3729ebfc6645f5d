// libFuzzer target: AttentionOneInput (see fuzz_targets.h). Built by tools/fuzz.sh.
#include "fuzz_targets.h"

AW_FUZZ_TARGET(::aw::fuzz::AttentionOneInput)
