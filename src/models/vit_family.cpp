// The image classifier's registry row (family.h): this repository's ViT-style demo model, from its own file
// ("model": "vit"; models/vit_config.cpp). A tensor that is none of its parameters is refused by name, as the
// classifier's loader has always named them (tests/js/model_files.test.mjs).
#include "core/rng.h"
#include "models/families.h"
#include "models/vit_classifier.h"

namespace aw {
namespace {

Status Build(const FamilyConfig& c, std::unique_ptr<Module>* out) {
  VitConfig cfg;
  AW_RETURN_IF_ERROR(ReadVitFile(io::FieldReader(*c.json, c.root), &cfg));
  AW_RETURN_IF_ERROR(CheckOwnKeys(*c.json, c.root));
  if (!out) return Status::OK();
  Rng rng = Rng::ForLoading();
  auto m = std::make_unique<VitClassifier>();
  AW_RETURN_IF_ERROR(m->Init(cfg, rng));
  *out = std::move(m);
  return Status::OK();
}

bool SameName(const Module&, std::string*) { return true; }
bool NotTied(const Module&, TiedTensor*) { return false; }

}  // namespace

const Family& VitFamily() {
  static const Family f = {
      /*kind=*/"vit",
      /*class_name=*/"Classifier",
      /*noun=*/"an image classifier",
      /*model_types=*/nullptr,
      /*own_model=*/"vit",
      /*type_hint=*/nullptr,
      /*build=*/Build,
      /*param_name=*/SameName,
      /*tied=*/NotTied,
      /*info=*/nullptr,
      /*unexpected_prefix=*/"stateDict: unexpected key(s) for a classifier: ",
      /*bounded_head=*/nullptr,
  };
  return f;
}

}  // namespace aw
