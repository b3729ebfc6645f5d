// The translator's registry row (family.h): this repository's encoder-decoder demo model, from its own file
// ("model": "translator"; models/translator_config.cpp), its tensors named as its state_dict.
#include "core/rng.h"
#include "models/families.h"
#include "models/translator.h"

namespace aw {
namespace {

Status Build(const FamilyConfig& c, std::unique_ptr<Module>* out) {
  TranslatorConfig cfg;
  AW_RETURN_IF_ERROR(ReadTranslatorFile(io::FieldReader(*c.json, c.root), &cfg));
  AW_RETURN_IF_ERROR(CheckOwnKeys(*c.json, c.root));
  if (!out) return Status::OK();
  Rng rng = Rng::ForLoading();
  auto m = std::make_unique<Translator>();
  AW_RETURN_IF_ERROR(m->Init(cfg, rng));
  *out = std::move(m);
  return Status::OK();
}

bool SameName(const Module&, std::string*) { return true; }
bool NotTied(const Module&, TiedTensor*) { return false; }

}  // namespace

const Family& TranslatorFamily() {
  static const Family f = {
      /*kind=*/"translator",
      /*class_name=*/"Translator",
      /*noun=*/"a translator",
      /*model_types=*/nullptr,
      /*own_model=*/"translator",
      /*type_hint=*/nullptr,
      /*build=*/Build,
      /*param_name=*/SameName,
      /*tied=*/NotTied,
      /*info=*/nullptr,
      /*unexpected_prefix=*/nullptr,
      /*bounded_head=*/nullptr,
  };
  return f;
}

}  // namespace aw
